import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { ConfigurationError, type DocumentChunk } from '@quiver/core';
import {
  EmbedderMismatchError,
  HashedNgramEmbedder,
  KnowledgeBase,
  LsaEmbedder,
  isCorpusFitted,
} from '../src/index.js';
import { temporaryDirectory } from './helpers.js';

// Written by @quiver/rag-retrieval at commit 0c46fa2 (default embedder: HashedNgramEmbedder) with
// test/fixtures/knowledge-base-v1/make.mjs; see the README beside it. Always copied, never opened in place.
const fixture = join(__dirname, 'fixtures', 'knowledge-base-v1', 'kb');
const storedEmbedderId = 'quiver-hashed-ngram-v1:3-5:1024:3182580983';
/** Cranfield 1-24 in generation 1; generation 2 deleted 7 and 19 and added 25-28. */
const expectedSources = Array.from({ length: 28 }, (_, index) => index + 1)
  .filter((id) => id !== 7 && id !== 19)
  .map((id) => `cranfield/${id}.txt`);
const deletedSources = ['cranfield/7.txt', 'cranfield/19.txt'];
const modes = ['keyword', 'vector', 'hybrid'] as const;

interface ManifestView {
  generation: number;
  embedder: { id: string; dimensions: number | null };
  counts: { documents: number; chunks: number; vectors: number };
}

function readManifest(directory: string): ManifestView {
  return JSON.parse(readFileSync(join(directory, 'manifest.json'), 'utf8')) as ManifestView;
}

/** Cranfield document 1 (its first page) is about a wing in a propeller slipstream. */
const SLIPSTREAM = 'wing in a propeller slipstream';

/** In every search mode, the top hit of `query` is a chunk like `expected`, with no warnings. */
async function expectTopHit(
  knowledgeBase: KnowledgeBase,
  query: string,
  expected: Record<string, unknown>,
): Promise<void> {
  for (const mode of modes) {
    const { hits, warnings } = await knowledgeBase.search({ query, mode, topK: 3 });
    expect(warnings).toEqual([]);
    expect(hits[0]!.chunk).toMatchObject(expected);
  }
}

/** Cranfield document 29 (not in the fixture) as two pages, the way make.mjs cut documents. */
function cranfield29(): { source: string; title: string; chunks: DocumentChunk[] } {
  const line = readFileSync(join(__dirname, 'fixtures', 'cranfield-mini', 'corpus.jsonl'), 'utf8')
    .split('\n')
    .find((row) => row.startsWith('{"_id": "29"'))!;
  const row = JSON.parse(line) as { title: string; text: string };
  const source = 'cranfield/29.txt';
  const title = row.title.replace(/\s+/g, ' ').trim();
  const body = row.text.replace(/\s+/g, ' ').trim().slice(title.length).trim();
  const split = body.indexOf('the second case');
  const texts = [body.slice(0, split).trim(), body.slice(split).trim()];
  const chunks = texts.map((text, index) => ({
    id: `${source}#${index}`,
    index,
    text,
    source,
    page: index + 1,
    headingPath: [title],
    tokenCount: Math.ceil(text.length / 4),
  }));
  return { source, title, chunks };
}

describe('a knowledge base written by the first release (0c46fa2, n-gram default embedder)', () => {
  let directory: ReturnType<typeof temporaryDirectory>;

  beforeEach(() => {
    directory = temporaryDirectory();
    cpSync(fixture, directory.path, { recursive: true });
  });

  afterEach(() => directory.cleanup());

  it('opens with no embedder, keeps the n-gram embedder it was built with and lists its documents', async () => {
    expect(readManifest(directory.path)).toMatchObject({
      generation: 2,
      embedder: { id: storedEmbedderId, dimensions: 1024 },
      counts: { documents: 26, chunks: 50, vectors: 50 },
    });
    const knowledgeBase = await KnowledgeBase.open({ directory: directory.path });
    expect(knowledgeBase.embedder).toBeInstanceOf(HashedNgramEmbedder);
    expect(knowledgeBase.embedder.id).toBe(storedEmbedderId);
    expect(knowledgeBase.embedder.dimensions).toBe(1024);
    expect(knowledgeBase.isDirty).toBe(false);

    const documents = knowledgeBase.documents();
    expect(documents.map((document) => document.source)).toEqual(expectedSources);
    expect(documents.reduce((sum, document) => sum + document.chunkCount, 0)).toBe(50);
    for (const source of deletedSources) expect(knowledgeBase.getDocument(source)).toBeUndefined();
    expect(knowledgeBase.getDocument('cranfield/1.txt')).toMatchObject({
      title: 'experimental investigation of the aerodynamics of a wing in a slipstream .',
      chunkCount: 2,
    });
    expect(knowledgeBase.getDocument('cranfield/25.txt')?.chunkCount).toBe(5);
    await knowledgeBase.close();
    expect(existsSync(join(directory.path, 'write.lock'))).toBe(false);
  });

  it('finds the known answers by keyword, vector and hybrid search, with source, page and heading', async () => {
    const knowledgeBase = await KnowledgeBase.open({ directory: directory.path });
    await expectTopHit(knowledgeBase, SLIPSTREAM, {
      id: 'cranfield/1.txt#0',
      source: 'cranfield/1.txt',
      page: 1,
      headingPath: ['experimental investigation of the aerodynamics of a wing in a slipstream .'],
      text: expect.stringContaining('propeller slipstream'),
    });
    // Cranfield query 1; document 12 is judged relevant to it in the qrels.
    await expectTopHit(
      knowledgeBase,
      'what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft .',
      { source: 'cranfield/12.txt' },
    );
    // The deleted documents stay deleted (7: roughness and transition; 19: elliptical cones).
    for (const mode of modes) {
      for (const query of ['three-dimensional roughness spheres transition', 'elliptical cones']) {
        const { hits } = await knowledgeBase.search({ query, mode, topK: 50, dedupe: false });
        for (const hit of hits) expect(deletedSources).not.toContain(hit.chunk.source);
      }
    }
    const { hits } = await knowledgeBase.search({ query: 'propeller slipstream', topK: 3 });
    expect(hits[0]!.keywordRank).toBe(1);
    expect(hits[0]!.vectorRank).toBe(1);
    await knowledgeBase.close();
  });

  it('takes a new document, commits, and reopens with the old and new documents', async () => {
    const knowledgeBase = await KnowledgeBase.open({ directory: directory.path });
    const added = cranfield29();
    expect(await knowledgeBase.addDocument(added)).toEqual({ warnings: [] });
    expect(await knowledgeBase.commit()).toEqual({ warnings: [] });
    await knowledgeBase.close();

    expect(readManifest(directory.path)).toMatchObject({
      generation: 3,
      embedder: { id: storedEmbedderId, dimensions: 1024 },
      counts: { documents: 27, chunks: 52, vectors: 52 },
    });
    // Generation 2 stays for readers; generation 1 is gone.
    expect(readdirSync(directory.path).sort()).toEqual([
      'chunks-2.json',
      'chunks-3.json',
      'keyword-2.bin',
      'keyword-3.bin',
      'manifest.json',
      'vectors-2.hnsw',
      'vectors-3.hnsw',
    ]);

    const reopened = await KnowledgeBase.open({ directory: directory.path });
    expect(reopened.embedder).toBeInstanceOf(HashedNgramEmbedder);
    expect(reopened.documents().map((document) => document.source)).toEqual([
      ...expectedSources,
      added.source,
    ]);
    await expectTopHit(reopened, SLIPSTREAM, { source: 'cranfield/1.txt' });
    await expectTopHit(
      reopened,
      'thermal stresses in a wide-flanged i-beam heated on its flanges',
      {
        source: added.source,
        page: 2,
      },
    );
    await reopened.close();
  });

  it('opens read-only: searchable, not writable, and leaves the files as they were', async () => {
    const before = new Map(
      readdirSync(directory.path).map((name) => [name, readFileSync(join(directory.path, name))]),
    );
    const reader = await KnowledgeBase.open({ directory: directory.path, readOnly: true });
    expect(reader.readOnly).toBe(true);
    expect(reader.embedder).toBeInstanceOf(HashedNgramEmbedder);
    expect(reader.documents().map((document) => document.source)).toEqual(expectedSources);
    await expectTopHit(reader, SLIPSTREAM, { source: 'cranfield/1.txt' });
    await expect(reader.addDocument(cranfield29())).rejects.toThrow(ConfigurationError);
    expect(existsSync(join(directory.path, 'write.lock'))).toBe(false);
    await reader.close();
    const after = readdirSync(directory.path);
    expect(after.sort()).toEqual([...before.keys()].sort());
    for (const name of after) {
      expect(readFileSync(join(directory.path, name)).equals(before.get(name)!)).toBe(true);
    }
  });

  it('throws EmbedderMismatchError when opened with the current default LsaEmbedder', async () => {
    const error = await KnowledgeBase.open({
      directory: directory.path,
      embedder: new LsaEmbedder(),
    }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(EmbedderMismatchError);
    const mismatch = error as EmbedderMismatchError;
    expect(mismatch.code).toBe('retrieval_embedder_mismatch');
    expect(mismatch.expected).toEqual({ id: storedEmbedderId, dimensions: 1024 });
    expect(mismatch.actual.id).toMatch(/^quiver-lsa-v1:/);
    expect(mismatch.message).toContain('reindex: true');
    // The failed open released its lock and changed nothing.
    expect(existsSync(join(directory.path, 'write.lock'))).toBe(false);
    expect(readManifest(directory.path).embedder.id).toBe(storedEmbedderId);
    const again = await KnowledgeBase.open({ directory: directory.path });
    expect(again.embedder).toBeInstanceOf(HashedNgramEmbedder);
    await again.close();
  });

  it('re-embeds with the LsaEmbedder given reindex: true', async () => {
    // 50 chunks: fewer than the default 100 the LSA model needs, so vector search waits for more.
    const waiting = await KnowledgeBase.open({
      directory: directory.path,
      embedder: new LsaEmbedder(),
      reindex: true,
    });
    expect(waiting.embedder).toBeInstanceOf(LsaEmbedder);
    expect(waiting.isDirty).toBe(true);
    expect(waiting.documents().map((document) => document.source)).toEqual(expectedSources);
    const keyword = await waiting.search({ query: SLIPSTREAM, topK: 3 });
    expect(keyword.hits[0]!.chunk.source).toBe('cranfield/1.txt');
    const vector = await waiting.search({ query: 'slipstream', mode: 'vector' });
    expect(vector.hits).toEqual([]);
    expect(vector.warnings.join(' ')).toContain('100 chunks');
    await waiting.close();

    // A model fitted on these 50 chunks: every chunk gets a new vector, committed as generation 3.
    const embedder = new LsaEmbedder({ minFitChunks: 20 });
    const reindexed = await KnowledgeBase.open({
      directory: directory.path,
      embedder,
      reindex: true,
    });
    expect(isCorpusFitted(reindexed.embedder) && reindexed.embedder.fittedOn).toBe(50);
    for (const mode of modes) {
      const { hits, warnings } = await reindexed.search({
        query: SLIPSTREAM,
        mode,
        topK: 3,
      });
      expect(warnings).toEqual([]);
      expect(hits.map((hit) => hit.chunk.source)).toContain('cranfield/1.txt');
    }
    await reindexed.commit();
    await reindexed.close();
    const manifest = readManifest(directory.path);
    expect(manifest.generation).toBe(3);
    expect(manifest.embedder.id).toBe(embedder.id);
    expect(manifest.counts.vectors).toBe(50);

    // Now an LSA knowledge base: the default opens it with the stored model.
    const reopened = await KnowledgeBase.open({ directory: directory.path });
    expect(reopened.embedder).toBeInstanceOf(LsaEmbedder);
    expect(reopened.embedder.id).toBe(embedder.id);
    const { hits } = await reopened.search({
      query: SLIPSTREAM,
      mode: 'vector',
      topK: 3,
    });
    expect(hits.map((hit) => hit.chunk.source)).toContain('cranfield/1.txt');
    await reopened.close();
  });
});
