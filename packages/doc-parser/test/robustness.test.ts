import { describe, expect, it } from '@jest/globals';
import { DocumentParseError, parseDocument } from '../src/index.js';
import { devBytes } from './helpers/fixtures.js';

/** A small deterministic generator (mulberry32), so every run mutates the same bytes. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** Either a parsed document with text, or a DocumentParseError: never anything else, never a hang. */
async function outcome(bytes: Uint8Array, filename: string): Promise<string> {
  try {
    const document = await parseDocument(bytes, { cacheDir: false, filename, timeoutMs: 20_000 });
    expect(document.text.trim().length).toBeGreaterThan(0);
    return 'parsed';
  } catch (error) {
    expect(error).toBeInstanceOf(DocumentParseError);
    return (error as DocumentParseError).code;
  }
}

const files = [
  'pdf/jo.pdf',
  'pdf/nics-background-checks-2015-11.pdf',
  'docx/testWORD_various.docx',
  'pptx/testPPT_various.pptx',
  'xlsx/testEXCEL.xlsx',
  'html/keep-tabular-data.html',
  'md/readability-README.md',
];

describe('damaged input never crashes', () => {
  it.each(files)('%s with random byte flips gives a document or a typed error', async (file) => {
    const original = devBytes(file);
    const next = random(file.length * 7919);
    const outcomes: string[] = [];
    for (let round = 0; round < 6; round += 1) {
      const bytes = Buffer.from(original);
      for (let flip = 0; flip < 8; flip += 1)
        bytes[Math.floor(next() * bytes.length)] = Math.floor(next() * 256);
      outcomes.push(await outcome(bytes, file.split('/').pop()!));
    }
    expect(outcomes).toHaveLength(6);
  });

  it.each(files)(
    '%s cut at 1 %%, 30 %%, 70 %% and 99 %% gives a document or a typed error',
    async (file) => {
      const original = devBytes(file);
      const codes = [];
      for (const fraction of [0.01, 0.3, 0.7, 0.99]) {
        codes.push(
          await outcome(
            original.subarray(0, Math.max(1, Math.floor(original.length * fraction))),
            file.split('/').pop()!,
          ),
        );
      }
      if (/\.(pdf|docx|pptx|xlsx)$/.test(file))
        expect(codes.every((code) => code !== 'parsed')).toBe(true);
    },
  );
});
