import { describe, expect, it } from '@jest/globals';
import type { DocumentBlock, ParsedDocument } from '@quiver/core';
import { ConfigurationError } from '@quiver/core';
import { chunkDocument, countTokens, parseDocument } from '../src/index.js';
import { devFile, norm } from './helpers/fixtures.js';

/** Build a ParsedDocument from blocks (text is what parseDocument would produce). */
function documentOf(blocks: DocumentBlock[]): ParsedDocument {
  const pages = [...new Set(blocks.map((block) => block.page))].map((page) => ({
    page,
    blocks: blocks.filter((block) => block.page === page),
  }));
  return {
    title: 'Test',
    format: 'markdown',
    source: 'test.md',
    pages,
    text: '',
    tokenCount: 0,
    metadata: { contentHash: 'abc' },
  };
}

const sentence = (index: number): string =>
  `Sentence number ${index} talks about topic ${index % 7} in some detail.`;

describe('chunkDocument', () => {
  it('keeps every chunk within maxTokens on real documents, and loses no text', async () => {
    for (const file of [
      'pdf/federal-register-2020-17221.pdf',
      'html/wikipedia-mozilla.html',
      'pdf/nics-background-checks-2015-11.pdf',
    ]) {
      const document = await parseDocument(devFile(file), { cacheDir: false });
      const chunks = chunkDocument(document, { maxTokens: 200, overlap: 0 });
      expect(chunks.length).toBeGreaterThan(3);
      for (const chunk of chunks) {
        expect(chunk.tokenCount).toBeLessThanOrEqual(200);
        expect(chunk.tokenCount).toBe(countTokens(chunk.text));
        expect(chunk.source).toBe(devFile(file));
      }
      expect(chunks.map((chunk) => chunk.index)).toEqual(chunks.map((_, index) => index));
      // Without overlap, every word of the document appears in the chunks in order.
      const joined = norm(chunks.map((chunk) => chunk.text).join(' '));
      const words = norm(document.text).split(' ');
      const sample = words.filter((_, index) => index % 97 === 0);
      let position = 0;
      for (const word of sample) {
        const found = joined.indexOf(word, position);
        expect(found).toBeGreaterThanOrEqual(0);
        position = found;
      }
    }
  });

  it('splits long paragraphs at sentence ends, never inside a sentence', () => {
    const text = Array.from({ length: 60 }, (_, index) => sentence(index)).join(' ');
    const chunks = chunkDocument(
      documentOf([{ type: 'paragraph', page: 1, headingPath: [], text }]),
      { maxTokens: 64, overlap: 0 },
    );
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks) {
      expect(chunk.text).toMatch(/^Sentence number \d+/);
      expect(chunk.text).toMatch(/detail\.$/);
    }
  });

  it('repeats whole trailing sentences as overlap, within the overlap budget', () => {
    const text = Array.from({ length: 40 }, (_, index) => sentence(index)).join(' ');
    const chunks = chunkDocument(
      documentOf([{ type: 'paragraph', page: 1, headingPath: [], text }]),
      { maxTokens: 80, overlap: 20 },
    );
    for (let index = 1; index < chunks.length; index += 1) {
      const firstSentence = chunks[index]!.text.match(/^Sentence number \d+[^.]*\./)![0];
      expect(chunks[index - 1]!.text.endsWith(firstSentence)).toBe(true);
      expect(countTokens(firstSentence)).toBeLessThanOrEqual(20);
    }
  });

  it('never splits a table row and repeats the header row in continuation chunks', () => {
    const rows = [
      ['Name', 'Amount', 'Comment'],
      ...Array.from({ length: 40 }, (_, index) => [
        `row${index}`,
        String(index * 100),
        `comment about row ${index}`,
      ]),
    ];
    const text = [
      '| Name | Amount | Comment |',
      '| --- | --- | --- |',
      ...rows.slice(1).map((row) => `| ${row.join(' | ')} |`),
    ].join('\n');
    const chunks = chunkDocument(
      documentOf([{ type: 'table', page: 3, headingPath: ['Data'], text, rows }]),
      { maxTokens: 100, overlap: 0 },
    );
    expect(chunks.length).toBeGreaterThan(3);
    const seen: string[] = [];
    for (const chunk of chunks) {
      const lines = chunk.text.split('\n');
      expect(lines[0]).toBe('| Name | Amount | Comment |');
      for (const line of lines.slice(2)) {
        expect(line).toMatch(/^\| row\d+ \| \d+ \| comment about row \d+ \|$/);
        seen.push(line);
      }
      expect(chunk.page).toBe(3);
      expect(chunk.headingPath).toEqual(['Data']);
    }
    expect(seen).toHaveLength(40);
  });

  it('starts a chunk at each heading and labels it with the heading path', () => {
    const blocks: DocumentBlock[] = [
      { type: 'heading', page: 1, headingPath: [], text: 'Guide', level: 1 },
      { type: 'paragraph', page: 1, headingPath: ['Guide'], text: 'Intro paragraph.' },
      { type: 'heading', page: 2, headingPath: ['Guide'], text: 'Setup', level: 2 },
      { type: 'paragraph', page: 2, headingPath: ['Guide', 'Setup'], text: 'Install it.' },
    ];
    const chunks = chunkDocument(documentOf(blocks), { maxTokens: 200 });
    expect(chunks.map((chunk) => [chunk.text, chunk.page, chunk.headingPath])).toEqual([
      ['# Guide\n\nIntro paragraph.', 1, ['Guide']],
      ['## Setup\n\nInstall it.', 2, ['Guide', 'Setup']],
    ]);
  });

  it('cuts a single sentence longer than maxTokens by tokens (the one unavoidable case)', () => {
    const long = Array.from({ length: 300 }, (_, index) => `word${index}`).join(' ');
    const chunks = chunkDocument(
      documentOf([{ type: 'paragraph', page: 1, headingPath: [], text: long }]),
      { maxTokens: 50, overlap: 0 },
    );
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks) expect(chunk.tokenCount).toBeLessThanOrEqual(50);
    expect(chunks.map((chunk) => chunk.text).join('')).toBe(long);
  });

  it('gives ids that are stable across runs and differ between documents', async () => {
    const document = await parseDocument(devFile('md/readability-README.md'), { cacheDir: false });
    const first = chunkDocument(document, { maxTokens: 128 });
    const second = chunkDocument(document, { maxTokens: 128 });
    expect(first.map((chunk) => chunk.id)).toEqual(second.map((chunk) => chunk.id));
    expect(new Set(first.map((chunk) => chunk.id)).size).toBe(first.length);
    const other = chunkDocument(
      { ...document, metadata: { ...document.metadata, contentHash: 'other' } },
      { maxTokens: 128 },
    );
    expect(other[0]!.id).not.toBe(first[0]!.id);
  });

  it('rejects impossible options with a ConfigurationError', () => {
    const document = documentOf([{ type: 'paragraph', page: 1, headingPath: [], text: 'x' }]);
    expect(() => chunkDocument(document, { maxTokens: 4 })).toThrow(ConfigurationError);
    expect(() => chunkDocument(document, { maxTokens: 100, overlap: 100 })).toThrow(
      ConfigurationError,
    );
  });
});
