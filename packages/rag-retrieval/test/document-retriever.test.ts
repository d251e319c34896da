import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { DocumentRetriever, HashedNgramEmbedder, KnowledgeBase } from '../src/index.js';
import { temporaryDirectory } from './helpers.js';

const fixtures = join(__dirname, 'fixtures', 'documents');
const embedder = () => new HashedNgramEmbedder({ dimensions: 128 });

describe('DocumentRetriever over real documents (parsed by @quiver/doc-parser)', () => {
  let directory: { path: string; cleanup: () => void };
  let files: { markdown: string; pdf: string; japanese: string; docx: string };
  beforeEach(() => {
    directory = temporaryDirectory();
    files = {
      markdown: join(directory.path, 'readability-README.md'),
      pdf: join(directory.path, 'nics-background-checks-2015-11.pdf'),
      japanese: join(directory.path, 'jo.pdf'),
      docx: join(directory.path, 'tables.docx'),
    };
    for (const path of Object.values(files))
      copyFileSync(join(fixtures, path.split('/').pop()!), path);
  });
  afterEach(() => directory.cleanup());

  const retriever = async (kbDirectory?: string) =>
    new DocumentRetriever({
      knowledgeBase: await KnowledgeBase.open({
        embedder: embedder(),
        ...(kbDirectory ? { directory: kbDirectory } : {}),
      }),
      chunking: { maxTokens: 200, overlap: 20 },
    });

  it('returns ranked snippets with source, page and heading path', async () => {
    const subject = await retriever();
    const { chunks, warnings } = await subject.retrieve({
      query: 'how do I install readability from npm',
      files: Object.values(files),
      topK: 3,
    });
    expect(warnings).toEqual([]);
    expect(chunks[0]!.source).toBe(files.markdown);
    expect(chunks[0]!.page).toBe(1);
    expect(chunks[0]!.headingPath).toEqual(['Readability.js', 'Installation']);
    expect(chunks[0]!.text).toContain('npm install @mozilla/readability');
  });

  it('finds table rows in a PDF and Japanese text by a Japanese query', async () => {
    const subject = await retriever();
    const table = await subject.retrieve({
      query: 'checks in Arkansas',
      files: [files.pdf],
      topK: 1,
    });
    expect(table.chunks[0]!.text).toContain('Arkansas');
    const japanese = await subject.retrieve({
      query: '化石を発掘',
      files: [files.japanese, files.markdown],
      topK: 1,
    });
    expect(japanese.chunks[0]!.source).toBe(files.japanese);
    expect(japanese.chunks[0]!.text).toContain('化石');
  });

  it('indexes only new or changed files', async () => {
    const subject = await retriever();
    const first = await subject.index([files.markdown, files.docx]);
    expect(first.indexed.sort()).toEqual([files.docx, files.markdown].sort());
    const second = await subject.index([files.markdown, files.docx]);
    expect(second.indexed).toEqual([]);
    expect(second.unchanged.sort()).toEqual([files.docx, files.markdown].sort());
    writeFileSync(files.markdown, '# Changed\n\nNow this file is about hypersonic quasars.\n');
    const third = await subject.index([files.markdown, files.docx]);
    expect(third.indexed).toEqual([files.markdown]);
    const { chunks } = await subject.retrieve({
      query: 'hypersonic quasars',
      files: [files.markdown],
    });
    expect(chunks[0]!.text).toContain('hypersonic quasars');
    expect(chunks.some((chunk) => chunk.text.includes('npm install'))).toBe(false);
  });

  it('skips and reports a file that fails to parse, and indexes the rest', async () => {
    const broken = join(directory.path, 'broken.pdf');
    writeFileSync(broken, '%PDF-1.7\nthis is not really a pdf\n%%EOF');
    const missing = join(directory.path, 'missing.docx');
    const subject = await retriever();
    const report = await subject.index([broken, files.docx, missing]);
    expect(report.indexed).toEqual([files.docx]);
    expect(report.failed.map((failure) => failure.file).sort()).toEqual([broken, missing].sort());
    const { chunks, warnings } = await subject.retrieve({
      query: 'top left',
      files: [broken, files.docx],
    });
    expect(chunks[0]!.source).toBe(files.docx);
    expect(warnings.some((warning) => warning.startsWith(`Skipped ${broken}`))).toBe(true);
  });

  it('searches only the requested files', async () => {
    const subject = await retriever();
    await subject.index([files.markdown, files.docx]);
    const { chunks } = await subject.retrieve({
      query: 'readability npm install',
      files: [files.docx],
    });
    for (const chunk of chunks) expect(chunk.source).toBe(files.docx);
  });

  it('keeps a persistent knowledge base across retrievers without parsing again', async () => {
    const kbDirectory = join(directory.path, 'kb');
    const first = await retriever(kbDirectory);
    await first.index([files.markdown]);
    await (await first.knowledgeBase()).close();
    const second = await retriever(kbDirectory);
    const report = await second.index([files.markdown]);
    expect(report.unchanged).toEqual([files.markdown]);
    const { chunks } = await second.retrieve({
      query: 'parse a document with Readability',
      files: [files.markdown],
    });
    expect(chunks.length).toBeGreaterThan(0);
    await (await second.knowledgeBase()).close();
  });
});
