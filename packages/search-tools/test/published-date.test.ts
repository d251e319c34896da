import { describe, expect, it } from '@jest/globals';
import { normalizePublishedDate } from '../src/published-date.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');

describe('normalizePublishedDate', () => {
  it('reads ISO, RFC 1123 and English dates, zone-less ones as UTC', () => {
    expect(normalizePublishedDate('2024-11-02T09:15:00', NOW)).toBe('2024-11-02T09:15:00.000Z');
    expect(normalizePublishedDate('2024-10-01T00:00:00.0000000', NOW)).toBe(
      '2024-10-01T00:00:00.000Z',
    );
    expect(normalizePublishedDate('2024-11-02T09:15:00+08:00', NOW)).toBe(
      '2024-11-02T01:15:00.000Z',
    );
    expect(normalizePublishedDate('Sat, 02 Nov 2024 09:15:00 GMT', NOW)).toBe(
      '2024-11-02T09:15:00.000Z',
    );
    expect(normalizePublishedDate('Mar 5, 2024', NOW)).toBe('2024-03-05T00:00:00.000Z');
    expect(normalizePublishedDate('2024-03-05', NOW)).toBe('2024-03-05');
  });

  it('resolves relative ages in English and Chinese against now', () => {
    expect(normalizePublishedDate('3 days ago', NOW)).toBe('2026-11-19');
    expect(normalizePublishedDate('1 week ago', NOW)).toBe('2026-11-15');
    expect(normalizePublishedDate('5小时前', NOW)).toBe('2026-11-22');
    expect(normalizePublishedDate('2天前', NOW)).toBe('2026-11-20');
  });

  it('drops what is not a date', () => {
    expect(normalizePublishedDate('recently', NOW)).toBeUndefined();
    expect(normalizePublishedDate('', NOW)).toBeUndefined();
    expect(normalizePublishedDate(null, NOW)).toBeUndefined();
  });
});
