import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  EmbedderMismatchError,
  HashedNgramEmbedder,
  IndexCorruptedError,
  InvalidQueryError,
  KnowledgeBase,
  KnowledgeBaseLockedError,
  OpenAIEmbedder,
  UnsupportedVersionError,
  countTextTokens,
} from '../src/index.js';
import { startEmbeddingServer } from '../src/testing.js';
import { chunk, cranfieldDocuments, temporaryDirectory } from './helpers.js';

const small = () => new HashedNgramEmbedder({ dimensions: 64 });

async function filled(
  options: Parameters<typeof KnowledgeBase.open>[0] = {},
  count = 120,
): Promise<KnowledgeBase> {
  const knowledgeBase = await KnowledgeBase.open({ embedder: small(), ...options });
  for (const document of cranfieldDocuments(count)) await knowledgeBase.addDocument(document);
  return knowledgeBase;
}

describe('KnowledgeBase in memory', () => {
  it('finds the right abstract by keyword, vector and hybrid search, with source and page', async () => {
    const knowledgeBase = await filled();
    // Cranfield document 1 is about a wing in a propeller slipstream.
    for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
      const { hits, warnings } = await knowledgeBase.search({
        query: 'wing in a propeller slipstream',
        mode,
        topK: 5,
      });
      expect(warnings).toEqual([]);
      expect(hits[0]!.chunk.source).toBe('cranfield/1');
      expect(hits[0]!.chunk.page).toBe(1);
    }
    const { hits } = await knowledgeBase.search({ query: 'propeller slipstream', topK: 3 });
    expect(hits[0]!.keywordRank).toBe(1);
    expect(hits[0]!.vectorRank).toBeGreaterThanOrEqual(1);
  });

  it('restricts search to the given sources', async () => {
    const knowledgeBase = await filled();
    const { hits } = await knowledgeBase.search({
      query: 'slipstream',
      sources: ['cranfield/2', 'cranfield/3'],
    });
    expect(hits.length).toBeGreaterThan(0);
    for (const hit of hits) expect(['cranfield/2', 'cranfield/3']).toContain(hit.chunk.source);
  });

  it('deletes and replaces documents', async () => {
    const knowledgeBase = await filled();
    expect(await knowledgeBase.deleteDocument('cranfield/1')).toBe(true);
    expect(await knowledgeBase.deleteDocument('cranfield/1')).toBe(false);
    expect(knowledgeBase.getDocument('cranfield/1')).toBeUndefined();
    let { hits } = await knowledgeBase.search({
      query: 'wing in a propeller slipstream',
      topK: 50,
    });
    expect(hits.map((hit) => hit.chunk.source)).not.toContain('cranfield/1');
    await knowledgeBase.addDocument({
      source: 'cranfield/2',
      chunks: [chunk('cranfield/2', 'quasar luminosity survey')],
    });
    ({ hits } = await knowledgeBase.search({ query: 'quasar', mode: 'keyword' }));
    expect(hits.map((hit) => hit.chunk.source)).toEqual(['cranfield/2']);
    ({ hits } = await knowledgeBase.search({ query: 'quasar luminosity' }));
    expect(hits[0]!.chunk.source).toBe('cranfield/2');
    expect(knowledgeBase.getDocument('cranfield/2')!.chunkCount).toBe(1);
  });

  it('drops duplicate texts unless told not to', async () => {
    const knowledgeBase = await KnowledgeBase.open({ embedder: small() });
    for (const source of ['a.md', 'copy-of-a.md']) {
      await knowledgeBase.addDocument({
        source,
        chunks: [chunk(source, 'Supersonic  flutter of panels.')],
      });
    }
    expect((await knowledgeBase.search({ query: 'flutter' })).hits).toHaveLength(1);
    expect((await knowledgeBase.search({ query: 'flutter', dedupe: false })).hits).toHaveLength(2);
  });

  it('cuts results to the maxRefTokens budget with the real tokenizer', async () => {
    const knowledgeBase = await filled();
    const { hits } = await knowledgeBase.search({
      query: 'boundary layer heat transfer',
      topK: 20,
      maxRefTokens: 300,
    });
    const used = hits.reduce((sum, hit) => sum + countTextTokens(hit.chunk.text), 0);
    expect(hits.length).toBeGreaterThan(0);
    expect(used).toBeLessThanOrEqual(300);
    const one = await knowledgeBase.search({
      query: 'boundary layer heat transfer',
      maxRefTokens: 10,
    });
    expect(one.hits).toHaveLength(1);
    expect(countTextTokens(one.hits[0]!.chunk.text)).toBeLessThanOrEqual(10);
  });

  it('uses the first chunk of each document as a front-page signal when asked', async () => {
    const knowledgeBase = await KnowledgeBase.open({ embedder: small() });
    await knowledgeBase.addDocument({
      source: 'b.md',
      chunks: [chunk('b.md', 'miscellaneous notes'), chunk('b.md', 'heat transfer in slabs', 1)],
    });
    await knowledgeBase.addDocument({
      source: 'a.md',
      chunks: [chunk('a.md', 'heat transfer in slabs'), chunk('a.md', 'other things', 1)],
    });
    const plain = await knowledgeBase.search({
      query: 'heat transfer',
      mode: 'keyword',
      dedupe: false,
    });
    const withFrontPage = await knowledgeBase.search({
      query: 'heat transfer',
      mode: 'keyword',
      dedupe: false,
      frontPage: true,
    });
    expect(plain.hits[0]!.chunk.source).toBe('b.md');
    expect(withFrontPage.hits[0]!.chunk.source).toBe('a.md');
  });

  it('rejects an empty query', async () => {
    const knowledgeBase = await filled({}, 5);
    await expect(knowledgeBase.search({ query: '' })).rejects.toBeInstanceOf(InvalidQueryError);
    await expect(knowledgeBase.search({ query: '  \n ' })).rejects.toThrow(/empty/);
  });

  it('answers a 10,000-word query', async () => {
    const knowledgeBase = await filled();
    const words = readFileSync(
      join(__dirname, 'fixtures', 'cranfield-mini', 'corpus.jsonl'),
      'utf8',
    ).split(/\s+/);
    const query = Array.from({ length: 10_000 }, (_, i) => words[i % words.length]).join(' ');
    const { hits } = await knowledgeBase.search({ query, topK: 5 });
    expect(hits).toHaveLength(5);
  });

  it('warns when a query has only stop words', async () => {
    const knowledgeBase = await filled({}, 5);
    const { warnings } = await knowledgeBase.search({ query: 'the of and', mode: 'keyword' });
    expect(warnings.join(' ')).toMatch(/no searchable words/);
  });

  it('keeps answering by keyword, with a warning, while the embedding service is down', async () => {
    const server = await startEmbeddingServer({ dimensions: 32 });
    try {
      const embedder = new OpenAIEmbedder({
        model: 'test-embedding',
        baseURL: server.baseURL,
        apiKey: 'k',
        maxRetries: 0,
      });
      const knowledgeBase = await KnowledgeBase.open({ embedder });
      await knowledgeBase.addDocument({
        source: 'up.md',
        chunks: [chunk('up.md', 'pressure distribution on cones')],
      });
      server.goDown();
      const added = await knowledgeBase.addDocument({
        source: 'down.md',
        chunks: [chunk('down.md', 'flutter of panels')],
      });
      expect(added.warnings.join(' ')).toMatch(/keyword only/);
      const result = await knowledgeBase.search({ query: 'flutter of panels' });
      expect(result.hits[0]!.chunk.source).toBe('down.md');
      expect(result.warnings.join(' ')).toMatch(/Vector search is unavailable/);
      server.recover();
      expect(await knowledgeBase.embedPending()).toEqual({ warnings: [], pending: 0 });
      const vector = await knowledgeBase.search({ query: 'flutter of panels', mode: 'vector' });
      expect(vector.warnings).toEqual([]);
      expect(vector.hits[0]!.chunk.source).toBe('down.md');
    } finally {
      await server.close();
    }
  });
});

describe('KnowledgeBase embedding cache', () => {
  it('does not send a text to the embedding service twice', async () => {
    const server = await startEmbeddingServer({ dimensions: 16 });
    try {
      const embedder = new OpenAIEmbedder({
        model: 'test-embedding',
        baseURL: server.baseURL,
        apiKey: 'k',
      });
      const knowledgeBase = await KnowledgeBase.open({ embedder });
      const document = {
        source: 'a.md',
        chunks: [chunk('a.md', 'first part'), chunk('a.md', 'second part', 1)],
      };
      await knowledgeBase.addDocument(document);
      const afterFirst = server.requests.flatMap((request) => request.input);
      expect(afterFirst).toEqual(['first part', 'second part']);
      // The file changed in one chunk: only that chunk goes to the model.
      await knowledgeBase.addDocument({
        ...document,
        chunks: [document.chunks[0]!, chunk('a.md', 'third part', 1)],
      });
      await knowledgeBase.search({ query: 'third part' });
      await knowledgeBase.search({ query: 'third part' });
      expect(server.requests.flatMap((request) => request.input)).toEqual([
        'first part',
        'second part',
        'third part',
      ]);
    } finally {
      await server.close();
    }
  });
});

describe('KnowledgeBase on disk', () => {
  let directory: { path: string; cleanup: () => void };
  beforeEach(() => {
    directory = temporaryDirectory();
  });
  afterEach(() => directory.cleanup());

  async function committed(count = 60): Promise<void> {
    const knowledgeBase = await filled({ directory: directory.path }, count);
    await knowledgeBase.commit();
    await knowledgeBase.close();
  }

  it('reopens with the same documents and results, and supports adding and deleting', async () => {
    const original = await filled({ directory: directory.path }, 60);
    await original.commit();
    const before = await original.search({ query: 'supersonic flutter', topK: 10 });
    await original.close();

    const reopened = await KnowledgeBase.open({ directory: directory.path, embedder: small() });
    expect(reopened.documents()).toHaveLength(60);
    expect(await reopened.search({ query: 'supersonic flutter', topK: 10 })).toEqual(before);
    await reopened.deleteDocument('cranfield/1');
    await reopened.addDocument({
      source: 'new.md',
      chunks: [chunk('new.md', 'hypersonic quasar propulsion')],
    });
    await reopened.commit();
    await reopened.close();

    const again = await KnowledgeBase.open({
      directory: directory.path,
      embedder: small(),
      readOnly: true,
    });
    expect(again.getDocument('cranfield/1')).toBeUndefined();
    expect(
      (await again.search({ query: 'quasar', mode: 'vector', topK: 1 })).hits[0]!.chunk.source,
    ).toBe('new.md');
    expect((await again.search({ query: 'quasar', mode: 'keyword' })).hits[0]!.chunk.source).toBe(
      'new.md',
    );
  });

  it('writes a manifest with a format version and checksummed files, and refuses newer versions', async () => {
    await committed(5);
    const manifestPath = join(directory.path, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    expect(manifest.version).toBe(1);
    expect(manifest.files.vectors.crc32).toEqual(expect.any(Number));
    writeFileSync(manifestPath, JSON.stringify({ ...manifest, version: 99 }));
    await expect(
      KnowledgeBase.open({ directory: directory.path, embedder: small() }),
    ).rejects.toBeInstanceOf(UnsupportedVersionError);
  });

  it('refuses another embedder with a clear error, or re-embeds when asked', async () => {
    await committed(20);
    const other = new HashedNgramEmbedder({ dimensions: 128 });
    const error = await KnowledgeBase.open({ directory: directory.path, embedder: other }).catch(
      (caught) => caught,
    );
    expect(error).toBeInstanceOf(EmbedderMismatchError);
    expect(error.message).toMatch(/64 dimensions/);
    expect(error.message).toMatch(/128 dimensions/);
    const reindexed = await KnowledgeBase.open({
      directory: directory.path,
      embedder: other,
      reindex: true,
    });
    expect(
      (await reindexed.search({ query: 'slipstream', mode: 'vector' })).hits.length,
    ).toBeGreaterThan(0);
    await reindexed.commit();
    await reindexed.close();
    await expect(
      KnowledgeBase.open({ directory: directory.path, embedder: other }),
    ).resolves.toBeInstanceOf(KnowledgeBase);
  });

  it('detects a corrupted vector index and rebuilds it', async () => {
    const original = await filled({ directory: directory.path }, 60);
    await original.commit();
    const before = await original.search({ query: 'supersonic flutter', topK: 5 });
    await original.close();
    const vectors = readdirSync(directory.path).find((name) => name.endsWith('.hnsw'))!;
    const bytes = readFileSync(join(directory.path, vectors));
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
    writeFileSync(join(directory.path, vectors), bytes);

    const error = await KnowledgeBase.open({ directory: directory.path, embedder: small() }).catch(
      (caught) => caught,
    );
    expect(error).toBeInstanceOf(IndexCorruptedError);
    expect(error.file).toBe(vectors);
    expect(error.message).toMatch(/rebuild/);

    const rebuilt = await KnowledgeBase.rebuild({ directory: directory.path, embedder: small() });
    expect(
      (await rebuilt.search({ query: 'supersonic flutter', topK: 5 })).hits.map(
        (hit) => hit.chunk.source,
      ),
    ).toEqual(before.hits.map((hit) => hit.chunk.source));
    await rebuilt.close();
    await expect(
      KnowledgeBase.open({ directory: directory.path, embedder: small() }),
    ).resolves.toBeInstanceOf(KnowledgeBase);
  });

  it('detects a damaged manifest or keyword index; rebuild recovers from the chunk store', async () => {
    await committed(10);
    const keyword = readdirSync(directory.path).find((name) => name.startsWith('keyword-'))!;
    writeFileSync(join(directory.path, keyword), 'garbage');
    await expect(
      KnowledgeBase.open({ directory: directory.path, embedder: small() }),
    ).rejects.toThrow(/fails its checksum|bytes/);
    writeFileSync(join(directory.path, 'manifest.json'), '{"truncated": ');
    await expect(
      KnowledgeBase.open({ directory: directory.path, embedder: small() }),
    ).rejects.toBeInstanceOf(IndexCorruptedError);
    const rebuilt = await KnowledgeBase.rebuild({ directory: directory.path, embedder: small() });
    expect(rebuilt.documents()).toHaveLength(10);
    await rebuilt.close();
  });

  it('cannot rebuild without an intact chunk store and says what to do', async () => {
    await committed(5);
    const store = readdirSync(directory.path).find((name) => name.startsWith('chunks-'))!;
    writeFileSync(join(directory.path, store), '{not json');
    await expect(
      KnowledgeBase.rebuild({ directory: directory.path, embedder: small() }),
    ).rejects.toThrow(/add the documents again/);
  });

  it('allows one writer and any number of readers; a dead writer’s lock is taken over', async () => {
    await committed(5);
    const writer = await KnowledgeBase.open({ directory: directory.path, embedder: small() });
    await expect(
      KnowledgeBase.open({ directory: directory.path, embedder: small() }),
    ).rejects.toBeInstanceOf(KnowledgeBaseLockedError);
    const reader = await KnowledgeBase.open({
      directory: directory.path,
      embedder: small(),
      readOnly: true,
    });
    await expect(reader.addDocument({ source: 'x', chunks: [] })).rejects.toThrow(/read-only/);
    await writer.close();

    const dead = spawnSync(process.execPath, [
      '-e',
      'process.stdout.write(String(process.pid))',
    ]).stdout.toString();
    writeFileSync(join(directory.path, 'write.lock'), dead);
    const next = await KnowledgeBase.open({ directory: directory.path, embedder: small() });
    expect(readFileSync(join(directory.path, 'write.lock'), 'utf8')).toBe(String(process.pid));
    await next.close();
    expect(existsSync(join(directory.path, 'write.lock'))).toBe(false);
  });

  it('removes temporary files a crashed writer left behind', async () => {
    await committed(5);
    const leftover = join(directory.path, '.vectors-9.hnsw.tmp-999999-0a1b2c3d');
    writeFileSync(leftover, 'half written');
    const knowledgeBase = await KnowledgeBase.open({
      directory: directory.path,
      embedder: small(),
    });
    expect(existsSync(leftover)).toBe(false);
    await knowledgeBase.close();
  });

  it('keeps only the current and previous generations on disk', async () => {
    const knowledgeBase = await filled({ directory: directory.path }, 3);
    for (let round = 0; round < 4; round++) {
      await knowledgeBase.addDocument({
        source: `r${round}`,
        chunks: [chunk(`r${round}`, `round ${round}`)],
      });
      await knowledgeBase.commit();
    }
    await knowledgeBase.close();
    const generations = new Set(
      readdirSync(directory.path)
        .map((name) => /-(\d+)\./.exec(name)?.[1])
        .filter(Boolean),
    );
    expect([...generations].sort()).toEqual(['3', '4']);
  });
});
