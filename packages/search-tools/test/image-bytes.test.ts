import { describe, expect, it } from '@jest/globals';
import { inflateSync } from 'node:zlib';
import { parseImageSize, sniffImage } from '../src/index.js';
import { fixture } from './helpers/fixture-server.js';
import { makePng } from './helpers/png.js';

describe('sniffImage', () => {
  it('recognises a hand-written PNG and reads its size from IHDR', () => {
    const png = makePng(7, 3, [200, 30, 40]);
    // The helper really writes a decodable PNG: the IDAT inflates to 3 rows of 1 + 7*3 bytes.
    const idatLength = png.readUInt32BE(33);
    expect(inflateSync(png.subarray(41, 41 + idatLength)).length).toBe(3 * (1 + 7 * 3));
    expect(sniffImage(png)).toEqual({
      mimeType: 'image/png',
      extension: 'png',
      width: 7,
      height: 3,
    });
  });

  it('recognises JPEG and WebP files and reads their size', () => {
    expect(sniffImage(fixture('images', 'python.jpg'))).toEqual({
      mimeType: 'image/jpeg',
      extension: 'jpg',
      width: 16,
      height: 16,
    });
    expect(sniffImage(fixture('images', 'python.webp'))).toEqual({
      mimeType: 'image/webp',
      extension: 'webp',
      width: 16,
      height: 16,
    });
  });

  it('refuses HTML, JSON, empty and truncated bytes', () => {
    expect(sniffImage(Buffer.from('<!doctype html><title>Expired</title>'))).toBeUndefined();
    expect(sniffImage(Buffer.from('{"error":"expired"}'))).toBeUndefined();
    expect(sniffImage(new Uint8Array(0))).toBeUndefined();
    expect(sniffImage(makePng(2, 2, [0, 0, 0]).subarray(0, 6))).toBeUndefined();
    expect(sniffImage(Buffer.from('RIFF\x10\x00\x00\x00WAVEfmt ', 'latin1'))).toBeUndefined();
  });
});

describe('parseImageSize', () => {
  it('normalises WxH, W*H and W×H and accepts auto', () => {
    expect(parseImageSize('1024x768')).toEqual({ size: '1024x768', width: 1024, height: 768 });
    expect(parseImageSize(' 1024*1024 ')).toEqual({ size: '1024x1024', width: 1024, height: 1024 });
    expect(parseImageSize('1792×1024')).toMatchObject({ size: '1792x1024' });
    expect(parseImageSize('AUTO')).toEqual({ size: 'auto' });
  });

  it('explains what is wrong with a bad size', () => {
    expect(parseImageSize('big')).toEqual({
      error: '"big" is not a size: write WIDTHxHEIGHT in pixels, e.g. 1024x1024.',
    });
    expect(parseImageSize('64x64')).toEqual({
      error: 'Size 64x64 is out of range: each side must be between 256 and 4096 pixels.',
    });
    expect(parseImageSize('10000x1024')).toHaveProperty('error');
    expect(parseImageSize('512x512', ['1024x1024', '1792*1024'])).toEqual({
      error: 'This model does not generate 512x512 images. Use one of: 1024x1024, 1792x1024.',
    });
    expect(parseImageSize('auto', ['1024x1024'])).toHaveProperty('error');
    expect(parseImageSize('1792x1024', ['1024x1024', '1792*1024'])).toMatchObject({
      size: '1792x1024',
    });
  });
});
