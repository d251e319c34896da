import { describe, expect, it } from '@jest/globals';
import { classifyContent } from '../src/content-kind.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('classifyContent', () => {
  it('trusts specific declared types', () => {
    expect(
      classifyContent('text/html; charset=utf-8', bytes('<p>x'), 'https://a.example/'),
    ).toEqual({ kind: 'html' });
    expect(
      classifyContent('application/pdf', bytes('%PDF-1.7'), 'https://a.example/get?id=1'),
    ).toEqual({
      kind: 'document',
      format: 'pdf',
      filename: 'get',
    });
    expect(classifyContent('application/json', bytes('{}'), 'https://a.example/x.json')).toEqual({
      kind: 'text',
      format: 'json',
    });
    expect(classifyContent('text/markdown', bytes('# x'), 'https://a.example/README')).toEqual({
      kind: 'text',
      format: 'markdown',
    });
    expect(classifyContent('image/png', bytes('\x89PNG'), 'https://a.example/a.png')).toEqual({
      kind: 'binary',
      mimeType: 'image/png',
    });
  });

  it('sniffs generic and missing types from magic numbers, extensions and the bytes', () => {
    expect(
      classifyContent('application/octet-stream', bytes('%PDF-1.4 …'), 'https://a.example/file'),
    ).toMatchObject({ format: 'pdf' });
    const zip = new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0, 0]);
    expect(
      classifyContent('application/octet-stream', zip, 'https://a.example/report.docx'),
    ).toMatchObject({ format: 'docx' });
    expect(
      classifyContent('application/octet-stream', zip, 'https://a.example/archive.zip'),
    ).toEqual({
      kind: 'binary',
      mimeType: 'application/octet-stream',
    });
    expect(
      classifyContent(undefined, bytes('<!DOCTYPE html><title>t</title>'), 'https://a.example/'),
    ).toEqual({ kind: 'html' });
    expect(classifyContent(undefined, bytes('just words'), 'https://a.example/notes')).toEqual({
      kind: 'text',
      format: 'text',
    });
    expect(
      classifyContent(
        '',
        new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2]),
        'https://a.example/bin',
      ),
    ).toMatchObject({ kind: 'binary' });
  });
});
