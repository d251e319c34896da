import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Toolkit } from '@quiver/core-registry';
import {
  DocumentRetriever,
  HashedNgramEmbedder,
  KnowledgeBase,
  createRetrievalTool,
} from '../src/index.js';
import { temporaryDirectory } from './helpers.js';

describe('the retrieval tool', () => {
  let directory: { path: string; cleanup: () => void };
  let toolkit: Toolkit;
  let markdown: string;
  beforeAll(async () => {
    directory = temporaryDirectory();
    markdown = join(directory.path, 'readability-README.md');
    copyFileSync(join(__dirname, 'fixtures', 'documents', 'readability-README.md'), markdown);
    const knowledgeBase = await KnowledgeBase.open({
      embedder: new HashedNgramEmbedder({ dimensions: 64 }),
    });
    toolkit = new Toolkit();
    toolkit.register(
      createRetrievalTool({ retriever: new DocumentRetriever({ knowledgeBase }), topK: 2 }),
    );
  });
  afterAll(() => directory.cleanup());

  const call = (args: Record<string, unknown>, context = {}) =>
    toolkit.callToCompletion(
      { id: 'c1', name: 'retrieval', arguments: JSON.stringify(args) },
      context,
    );

  it('returns numbered snippets with source and page, and structured results', async () => {
    const response = await call({ query: 'install readability with npm', files: [markdown] });
    expect(response.isError).toBeFalsy();
    const text = (response.content[0] as { text: string }).text;
    expect(text).toMatch(
      new RegExp(
        `^\\[1\\] ${markdown.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}, page 1 \\(Readability\\.js › Installation\\)`,
      ),
    );
    expect(text).toContain('npm install @mozilla/readability');
    const results = response.metadata!['results'] as { source: string; page: number }[];
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ source: markdown, page: 1 });
  });

  it("searches the conversation's files when none are given, and answers in Chinese", async () => {
    const response = await call(
      { query: 'Readability constructor options' },
      { files: [markdown], language: 'zh' },
    );
    const text = (response.content[0] as { text: string }).text;
    expect(text).toContain('第 1 页');
  });

  it('reports a file it could not read as a warning, not a failure', async () => {
    const missing = join(directory.path, 'nope.pdf');
    const response = await call({ query: 'readability', files: [missing, markdown] });
    expect(response.isError).toBeFalsy();
    expect((response.content[0] as { text: string }).text).toMatch(
      /Warnings:\n- Skipped .*nope\.pdf/,
    );
  });

  it('turns an empty query into an error response the model can act on', async () => {
    const response = await call({ query: '   ', files: [markdown] });
    expect(response.isError).toBe(true);
    expect((response.content[0] as { text: string }).text).toMatch(/query is empty/);
  });

  it('rejects arguments without a query', async () => {
    const response = await call({ files: [markdown] });
    expect(response.isError).toBe(true);
  });
});
