import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  HashedNgramEmbedder,
  IndexCorruptedError,
  KnowledgeBase,
  LsaEmbedder,
  evaluateRun,
  isCorpusFitted,
  readBeirCollection,
} from '../src/index.js';
import { cranfieldDocuments, temporaryDirectory } from './helpers.js';

const texts = cranfieldDocuments(300).map((document) => document.chunks[0]!.text);
const cosine = (a: number[], b: number[]) => a.reduce((sum, value, i) => sum + value * b[i]!, 0);

describe('LsaEmbedder', () => {
  it('fits unit vectors of the chosen length, deterministically for a seed', async () => {
    const embedder = new LsaEmbedder({ dimensions: 64 });
    expect(isCorpusFitted(embedder)).toBe(true);
    expect(embedder.id).toMatch(/:unfitted$/);
    expect(embedder.embedOne(texts[0]!).every((value) => value === 0)).toBe(true);
    embedder.fit(texts);
    expect(embedder.fittedOn).toBe(300);
    expect(embedder.vocabularySize).toBeGreaterThan(500);
    const [vector] = await embedder.embed([texts[0]!]);
    expect(vector).toHaveLength(64);
    expect(cosine(vector!, vector!)).toBeCloseTo(1, 5);

    const again = new LsaEmbedder({ dimensions: 64 });
    again.fit(texts);
    expect(again.id).toBe(embedder.id);
    const other = new LsaEmbedder({ dimensions: 64, seed: 7 });
    other.fit(texts);
    expect(other.id).not.toBe(embedder.id);
  });

  it('places texts about the same subject closer than unrelated ones, beyond shared words', () => {
    const embedder = new LsaEmbedder({ dimensions: 64 });
    embedder.fit(texts);
    // Words that co-occur in the corpus, with no word in common between the two phrases.
    const a = embedder.embedOne('boundary layer transition');
    const b = embedder.embedOne('laminar turbulent flow separation');
    const c = embedder.embedOne('buckling of cylindrical shells under compression');
    expect(cosine(a, b)).toBeGreaterThan(cosine(a, c) + 0.1);
  });

  it('round-trips its model through bytes and rejects bytes that are not its model', () => {
    const embedder = new LsaEmbedder({ dimensions: 32 });
    expect(() => embedder.exportModel()).toThrow(/not fitted/);
    embedder.fit(texts.slice(0, 120));
    const bytes = embedder.exportModel();
    const loaded = new LsaEmbedder({ dimensions: 32 });
    loaded.importModel(bytes);
    expect(loaded.id).toBe(embedder.id);
    expect(loaded.fittedOn).toBe(120);
    expect(loaded.embedOne(texts[5]!)).toEqual(embedder.embedOne(texts[5]!));

    expect(() => new LsaEmbedder({ dimensions: 16 }).importModel(bytes)).toThrow(/other settings/);
    expect(() => loaded.importModel(bytes.subarray(0, bytes.length - 8))).toThrow(/wrong length/);
    expect(() => loaded.importModel(new Uint8Array([1, 0, 0, 0, 120]))).toThrow();
    // A failed import keeps the model it had.
    expect(loaded.id).toBe(embedder.id);
  });
});

describe('KnowledgeBase with the default LSA embedder', () => {
  let directory: { path: string; cleanup: () => void };
  beforeEach(() => {
    directory = temporaryDirectory();
  });
  afterEach(() => directory.cleanup());

  it('is keyword-only below the fitting threshold, then fits on commit and searches by vector', async () => {
    const knowledgeBase = await KnowledgeBase.open();
    expect(knowledgeBase.embedder).toBeInstanceOf(LsaEmbedder);
    const documents = cranfieldDocuments(150);
    for (const document of documents.slice(0, 50)) await knowledgeBase.addDocument(document);
    const hybrid = await knowledgeBase.search({ query: 'wing in a propeller slipstream' });
    expect(hybrid.warnings).toEqual([]);
    expect(hybrid.hits[0]!.chunk.source).toBe('cranfield/1');
    expect(hybrid.hits.every((hit) => hit.vectorRank === undefined)).toBe(true);
    const vector = await knowledgeBase.search({ query: 'slipstream', mode: 'vector' });
    expect(vector.hits).toEqual([]);
    expect(vector.warnings[0]).toMatch(/Vector search starts once the knowledge base holds 100/);

    for (const document of documents.slice(50)) await knowledgeBase.addDocument(document);
    expect(knowledgeBase.embedder.id).toMatch(/:unfitted$/); // adds do not fit
    await knowledgeBase.commit();
    expect(knowledgeBase.embedder.id).not.toMatch(/:unfitted$/);
    const fitted = await knowledgeBase.search({
      query: 'wing in a propeller slipstream',
      mode: 'vector',
    });
    expect(fitted.warnings).toEqual([]);
    // LSA is a fuzzy signal: the right abstract is near the top, not necessarily first.
    expect(fitted.hits.slice(0, 5).map((hit) => hit.chunk.source)).toContain('cranfield/1');
  });

  it('fits on the first search that needs vectors, and refits when the corpus has doubled', async () => {
    const embedder = new LsaEmbedder({ dimensions: 32, minFitChunks: 40 });
    const knowledgeBase = await KnowledgeBase.open({ embedder });
    const documents = cranfieldDocuments(200);
    for (const document of documents.slice(0, 60)) await knowledgeBase.addDocument(document);
    const { hits } = await knowledgeBase.search({ query: 'slipstream', mode: 'vector' });
    expect(hits.length).toBeGreaterThan(0);
    expect(embedder.fittedOn).toBe(60);
    const firstModel = embedder.id;

    // Fewer than double: new chunks are folded into the current model at once.
    for (const document of documents.slice(60, 100)) await knowledgeBase.addDocument(document);
    await knowledgeBase.commit();
    expect(embedder.id).toBe(firstModel);
    const late = await knowledgeBase.search({
      query: documents[90]!.chunks[0]!.text,
      mode: 'vector',
      topK: 3,
    });
    expect(late.warnings).toEqual([]);
    expect(late.hits.map((hit) => hit.chunk.source)).toContain(documents[90]!.source);

    for (const document of documents.slice(100, 130)) await knowledgeBase.addDocument(document);
    await knowledgeBase.commit();
    expect(embedder.fittedOn).toBe(130);
    expect(embedder.id).not.toBe(firstModel);
  });

  it('stores the model with each commit and reopens with it, without refitting', async () => {
    const original = await KnowledgeBase.open({ directory: directory.path });
    for (const document of cranfieldDocuments(150)) await original.addDocument(document);
    await original.commit();
    const id = original.embedder.id;
    const before = await original.search({ query: 'heat transfer in hypersonic flow' });
    await original.close();

    const manifest = JSON.parse(readFileSync(join(directory.path, 'manifest.json'), 'utf8'));
    expect(manifest.embedder.id).toBe(id);
    expect(manifest.files.embedderModel.name).toBe('embedder-1.bin');

    const reader = await KnowledgeBase.open({ directory: directory.path, readOnly: true });
    expect(reader.embedder.id).toBe(id);
    expect((reader.embedder as LsaEmbedder).fittedOn).toBe(150);
    const after = await reader.search({ query: 'heat transfer in hypersonic flow' });
    expect(after.hits.map((hit) => hit.chunk.id)).toEqual(before.hits.map((hit) => hit.chunk.id));
    await reader.close();
  });

  it('detects a damaged model file; rebuild fits a new one', async () => {
    const original = await KnowledgeBase.open({ directory: directory.path });
    for (const document of cranfieldDocuments(120)) await original.addDocument(document);
    await original.commit();
    await original.close();
    const path = join(directory.path, 'embedder-1.bin');
    const bytes = readFileSync(path);
    bytes[bytes.length - 3]! ^= 0xff;
    writeFileSync(path, bytes);

    await expect(KnowledgeBase.open({ directory: directory.path })).rejects.toThrow(
      IndexCorruptedError,
    );
    const rebuilt = await KnowledgeBase.rebuild({ directory: directory.path });
    const { hits, warnings } = await rebuilt.search({ query: 'slipstream', mode: 'vector' });
    expect(warnings).toEqual([]);
    expect(hits.length).toBeGreaterThan(0);
    await rebuilt.close();
    expect(readdirSync(directory.path)).toContain('embedder-2.bin');
    expect(existsSync(path)).toBe(true); // the previous generation stays for readers
  });

  it('opens a knowledge base built with the earlier offline default with that embedder', async () => {
    const original = await KnowledgeBase.open({
      directory: directory.path,
      embedder: new HashedNgramEmbedder(),
    });
    for (const document of cranfieldDocuments(120)) await original.addDocument(document);
    await original.commit();
    await original.close();

    const reopened = await KnowledgeBase.open({ directory: directory.path });
    expect(reopened.embedder).toBeInstanceOf(HashedNgramEmbedder);
    const { hits, warnings } = await reopened.search({ query: 'slipstream', mode: 'vector' });
    expect(warnings).toEqual([]);
    expect(hits.length).toBeGreaterThan(0);
    await reopened.close();
  });

  it('makes hybrid search better than BM25 alone on Cranfield (300 abstracts, 114 judged queries)', async () => {
    const collection = readBeirCollection(join(__dirname, 'fixtures', 'cranfield-mini'));
    const knowledgeBase = await KnowledgeBase.open({ bm25: { k1: 0.9, b: 0.4 } });
    for (const document of cranfieldDocuments(300)) await knowledgeBase.addDocument(document);
    await knowledgeBase.commit();
    const ndcg = async (mode: 'keyword' | 'hybrid') => {
      const run = new Map<string, { id: string; score: number }[]>();
      for (const query of collection.queries) {
        const { hits } = await knowledgeBase.search({
          query: query.text,
          mode,
          topK: 100,
          dedupe: false,
        });
        run.set(
          query.id,
          hits.map((hit) => ({ id: hit.chunk.source.replace('cranfield/', ''), score: hit.score })),
        );
      }
      return evaluateRun(run, collection.qrels).ndcgAt10;
    };
    const keyword = await ndcg('keyword');
    const hybrid = await ndcg('hybrid');
    expect(hybrid).toBeGreaterThan(keyword + 0.01);
  });
});
