import { describe, expect, it } from '@jest/globals';
import { isTransientStatus, parseRetryAfter } from '../src/index.js';

describe('Retry-After and transient statuses', () => {
  it('parses delays in seconds and HTTP dates', () => {
    const now = Date.parse('2026-11-22T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('1.5', now)).toBe(1_500);
    expect(parseRetryAfter('Sun, 22 Nov 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });

  it('marks 408, 425, 429 and 5xx as transient, other errors as final', () => {
    expect([408, 425, 429, 500, 502, 503, 504].every(isTransientStatus)).toBe(true);
    expect([400, 401, 403, 404, 410, 422].some(isTransientStatus)).toBe(false);
  });
});
