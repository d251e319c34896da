import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  ConfigurationError,
  errorMessage,
  type DocumentChunk,
  type Embedder,
  type Logger,
  silentLogger,
} from '@quiver/core';
import { Bm25Index, type Bm25Options } from './bm25-index.js';
import { CachedEmbedder } from './cached-embedder.js';
import { decodeBm25, encodeBm25 } from './bm25-codec.js';
import {
  EmbedderMismatchError,
  IndexCorruptedError,
  InvalidQueryError,
  KnowledgeBaseLockedError,
  UnsupportedVersionError,
} from './errors.js';
import { HashedNgramEmbedder } from './hashed-ngram-embedder.js';
import { isCorpusFitted, LsaEmbedder, type CorpusFittedEmbedder } from './lsa-embedder.js';
import { convexFusion, reciprocalRankFusion } from './rank-fusion.js';
import {
  commitTemporary,
  crc32,
  fileCrc32,
  fsyncPath,
  isTemporaryName,
  safeUnlink,
  temporaryPath,
  writeFileAtomic,
} from './storage.js';
import { TextAnalyzer, type TextAnalyzerOptions } from './text-analyzer.js';
import { countTextTokens, truncateToTokens } from './token-counter.js';
import type { Scored } from './top-k.js';
import { VectorIndex, type VectorIndexOptions } from './vector-index.js';

/** On-disk format version this package writes. Older versions are migrated on open. */
export const KNOWLEDGE_BASE_FORMAT_VERSION = 1;
const manifestName = 'manifest.json';
const lockName = 'write.lock';

/** Options of {@link KnowledgeBase.open}. */
export interface KnowledgeBaseOptions {
  /** Directory to persist to. Omit for an in-memory knowledge base. */
  directory?: string;
  /**
   * Embedder for the vector index. Default: {@link LsaEmbedder} (offline, fitted to this knowledge
   * base's chunks once it holds enough of them). A knowledge base built with the earlier offline
   * default, {@link HashedNgramEmbedder}, keeps using it when opened without this option.
   */
  embedder?: Embedder;
  /**
   * Vectors kept in a {@link CachedEmbedder} wrapped around `embedder` (keyed by content hash), so
   * re-indexing a changed file or repeating a query does not pay the model again. Default 10,000;
   * `0` turns it off. The offline embedders are never cached (computing is cheaper than hashing).
   */
  embeddingCacheSize?: number;
  /** Open without the write lock; writes then throw. Any number of readers may open a knowledge base at once. */
  readOnly?: boolean;
  /** Tokenisation for keyword search. Stored with the index; a change re-indexes keyword search on open. */
  analyzer?: TextAnalyzerOptions;
  /** BM25 parameters (used when the knowledge base is created). */
  bm25?: Bm25Options;
  /** HNSW parameters. */
  hnsw?: VectorIndexOptions;
  /** Re-embed every chunk when the stored embedder differs from `embedder`, instead of throwing. */
  reindex?: boolean;
  logger?: Logger;
}

/** A document to add: its chunks (e.g. from doc-parser's `chunkDocument`) and where it came from. */
export interface AddDocumentInput {
  /** Path or URL; a document with the same source is replaced. */
  source: string;
  chunks: readonly DocumentChunk[];
  /** Hash of the original bytes, to skip unchanged files later. Default: SHA-256 of the chunk texts. */
  contentHash?: string;
  title?: string;
}

/** A document held by a knowledge base. */
export interface KnowledgeBaseDocument {
  source: string;
  contentHash: string;
  title?: string;
  chunkCount: number;
}

/** How search lists are fused in hybrid mode. */
export interface FusionOptions {
  /**
   * `rrf` (weighted reciprocal rank fusion) or `convex` (weighted min-max-normalised scores).
   * Default `convex` with the offline {@link LsaEmbedder}, `rrf` with any other embedder.
   */
  method?: 'rrf' | 'convex';
  /** Weight of keyword (BM25) results. Default 0.7 with {@link LsaEmbedder}, 1 with any other embedder. */
  keywordWeight?: number;
  /** Weight of vector results. Default 0.3 with an offline embedder ({@link LsaEmbedder}, {@link HashedNgramEmbedder}), 1 with any other. */
  vectorWeight?: number;
  /** Weight of the front-page list (when `frontPage` is on). Default 0.5. */
  frontPageWeight?: number;
  /** RRF constant. Default 60. */
  k?: number;
  /** Candidates taken from each list before fusion. Default `max(50, topK)`. */
  depth?: number;
}

/** Search modes. */
export type SearchMode = 'keyword' | 'vector' | 'hybrid';

/** Options of {@link KnowledgeBase.search}. */
export interface SearchOptions {
  query: string;
  /** Default `hybrid`. */
  mode?: SearchMode;
  /** Most results. Default 10. */
  topK?: number;
  /** Only search these documents (sources as added). */
  sources?: readonly string[];
  fusion?: FusionOptions;
  /** Also search the first chunk of every document (title, abstract) as a third signal. Default false. */
  frontPage?: boolean;
  /** Token budget of the returned chunk texts (o200k tokens); the last chunk that fits is truncated. */
  maxRefTokens?: number;
  /** Drop chunks whose text repeats a better-ranked chunk's (copies of a file). Default true. */
  dedupe?: boolean;
  signal?: AbortSignal;
}

/** One search result. */
export interface SearchHit {
  chunk: DocumentChunk;
  /** Fused score (mode-specific scale; higher is better). */
  score: number;
  /** 1-based rank in the keyword list, when the chunk was in it. */
  keywordRank?: number;
  /** 1-based rank in the vector list, when the chunk was in it. */
  vectorRank?: number;
}

/** What {@link KnowledgeBase.search} returns. */
export interface SearchResult {
  hits: SearchHit[];
  /** Degraded modes and skipped work, for the caller (and the model) to know. */
  warnings: string[];
}

interface StoredChunk extends DocumentChunk {
  slot: number;
  /** False while the chunk has no vector (the embedding service was down when it was added). */
  embedded: boolean;
}

interface StoredDocument {
  source: string;
  contentHash: string;
  title?: string;
  chunks: StoredChunk[];
}

interface FileEntry {
  name: string;
  bytes: number;
  crc32: number;
}

interface Manifest {
  format: 'quiver-knowledge-base';
  version: number;
  generation: number;
  writer: string;
  embedder: { id: string; dimensions: number | null };
  analyzer: string;
  bm25: { k1: number; b: number };
  counts: { documents: number; chunks: number; vectors: number };
  files: {
    chunks: FileEntry;
    keyword: FileEntry;
    vectors: FileEntry | null;
    /** The fitted model of a {@link CorpusFittedEmbedder} (absent in knowledge bases written before it existed). */
    embedderModel?: FileEntry | null;
  };
}

interface ChunkStoreFile {
  nextSlot: number;
  documents: StoredDocument[];
}

/**
 * A searchable collection of document chunks: BM25 keyword index, HNSW vector index and a chunk
 * store, in memory or persisted to a directory.
 *
 * Persistence is crash-safe: {@link KnowledgeBase.commit} writes a new generation of every file
 * (temporary file, fsync, rename) and then switches `manifest.json` to it with one atomic rename,
 * so a crash at any point leaves the previous generation intact. Files carry CRC-32 checksums that
 * are verified on open. One writer at a time holds `write.lock` (a lock left by a dead process
 * is taken over); readers take no lock and read a consistent generation.
 *
 * @example
 * ```ts
 * const kb = await KnowledgeBase.open({ directory: './kb' });
 * await kb.addDocument({ source: 'notes.md', chunks });
 * await kb.commit();
 * const { hits } = await kb.search({ query: 'how do I reset my password?', topK: 5 });
 * await kb.close();
 * ```
 */
export class KnowledgeBase {
  /** The directory, for a persistent knowledge base. */
  readonly directory: string | undefined;
  readonly readOnly: boolean;
  #embedder: Embedder;
  readonly #analyzer: TextAnalyzer;
  readonly #hnswOptions: VectorIndexOptions;
  readonly #logger: Logger;
  #bm25: Bm25Index;
  #vectors: VectorIndex | undefined;
  readonly #documents = new Map<string, StoredDocument>();
  #slots: (StoredChunk | undefined)[] = [];
  #frontPageSlots = new Set<number>();
  /** Chunks without a vector yet, in the order they were added. */
  readonly #pending = new Set<StoredChunk>();
  #generation = 0;
  #dirty = false;
  #closed = false;
  #lockHeld = false;
  /** Serialises writes (adds, deletes, commits) within this process. */
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(options: KnowledgeBaseOptions, directory: string | undefined) {
    this.directory = directory;
    this.readOnly = options.readOnly ?? false;
    const embedder = options.embedder ?? new LsaEmbedder();
    const cacheSize = options.embeddingCacheSize ?? 10_000;
    this.#embedder =
      cacheSize > 0 &&
      !isOfflineEmbedder(embedder) &&
      !isCorpusFitted(embedder) &&
      !(embedder instanceof CachedEmbedder)
        ? new CachedEmbedder(embedder, { maxEntries: cacheSize })
        : embedder;
    this.#analyzer = new TextAnalyzer(options.analyzer ?? { stopWords: 'natural' });
    this.#hnswOptions = options.hnsw ?? {};
    this.#logger = options.logger ?? silentLogger;
    this.#bm25 = new Bm25Index(options.bm25);
  }

  /**
   * Open a knowledge base: in memory (no `directory`), or from a directory (created when empty).
   * @throws IndexCorruptedError when a stored file fails its checksum or does not parse (see {@link KnowledgeBase.rebuild}).
   * @throws EmbedderMismatchError when `embedder` is not the one the knowledge base was built with (unless `reindex`).
   * @throws KnowledgeBaseLockedError when another live process is writing to it (open with `readOnly: true` to search).
   * @throws UnsupportedVersionError when a newer version of this package wrote it.
   */
  static async open(options: KnowledgeBaseOptions = {}): Promise<KnowledgeBase> {
    const directory = options.directory === undefined ? undefined : resolve(options.directory);
    const knowledgeBase = new KnowledgeBase(options, directory);
    if (directory === undefined) return knowledgeBase;
    if (!options.readOnly) mkdirSync(directory, { recursive: true });
    if (!options.readOnly) knowledgeBase.#acquireLock();
    try {
      await knowledgeBase.#load(options);
      if (!options.readOnly) knowledgeBase.#removeStaleFiles();
    } catch (error) {
      knowledgeBase.#releaseLock();
      throw error;
    }
    return knowledgeBase;
  }

  /**
   * Recover a corrupted knowledge base: re-index keyword and vector search from its chunk store
   * (re-embedding every chunk with `embedder`) and commit a fresh generation. When the chunk store
   * itself is damaged, the newest intact one of an earlier generation is used.
   * @returns The reopened knowledge base.
   * @throws IndexCorruptedError when no intact chunk store is left (delete the directory and add the documents again).
   */
  static async rebuild(
    options: KnowledgeBaseOptions & { directory: string },
  ): Promise<KnowledgeBase> {
    const directory = resolve(options.directory);
    const knowledgeBase = new KnowledgeBase(options, directory);
    knowledgeBase.#acquireLock();
    try {
      const store = knowledgeBase.#findIntactChunkStore();
      let manifest: Partial<Manifest> = {};
      try {
        manifest = JSON.parse(readFileSync(join(directory, manifestName), 'utf8')) as Manifest;
      } catch {
        // A damaged manifest is one of the things rebuild repairs.
      }
      knowledgeBase.#generation = Math.max(manifest.generation ?? 0, store.generation);
      if (manifest.bm25) knowledgeBase.#bm25 = new Bm25Index(manifest.bm25);
      knowledgeBase.#restoreDocuments(store.data);
      knowledgeBase.#markAllUnembedded();
      knowledgeBase.#reindexKeyword();
      knowledgeBase.#vectors = undefined;
      await knowledgeBase.#embedPending(undefined, true);
      knowledgeBase.#dirty = true;
      await knowledgeBase.commit();
      knowledgeBase.#removeStaleFiles();
    } catch (error) {
      knowledgeBase.#releaseLock();
      throw error;
    }
    return knowledgeBase;
  }

  /** The embedder of the vector index (for a {@link CorpusFittedEmbedder}, its `id` names the fitted model). */
  get embedder(): Embedder {
    return this.#embedder;
  }

  /** Number of chunks held. */
  get chunkCount(): number {
    let count = 0;
    for (const document of this.#documents.values()) count += document.chunks.length;
    return count;
  }

  /** The documents held, in the order they were added. */
  documents(): KnowledgeBaseDocument[] {
    return [...this.#documents.values()].map((document) => describe(document));
  }

  /** The document added from `source`, if any. */
  getDocument(source: string): KnowledgeBaseDocument | undefined {
    const document = this.#documents.get(source);
    return document ? describe(document) : undefined;
  }

  /** True when there are uncommitted changes. */
  get isDirty(): boolean {
    return this.#dirty;
  }

  /**
   * Add (or replace) a document. Its chunks are indexed for keyword search at once and embedded for
   * vector search; when the embedder fails, the chunks stay searchable by keyword and are embedded
   * on a later add or commit. Call {@link KnowledgeBase.commit} to persist.
   * @returns Warnings (an embedding failure), empty when everything was indexed.
   */
  async addDocument(
    input: AddDocumentInput,
    options: { signal?: AbortSignal } = {},
  ): Promise<{ warnings: string[] }> {
    return this.#serialised(async () => {
      this.#assertWritable();
      options.signal?.throwIfAborted();
      this.#deleteNow(input.source);
      const contentHash =
        input.contentHash ?? sha256(input.chunks.map((chunk) => chunk.text).join('\u0000'));
      const document: StoredDocument = {
        source: input.source,
        contentHash,
        ...(input.title !== undefined ? { title: input.title } : {}),
        chunks: [],
      };
      input.chunks.forEach((chunk, position) => {
        const stored: StoredChunk = {
          id: chunk.id,
          index: chunk.index,
          text: chunk.text,
          source: input.source,
          page: chunk.page,
          headingPath: [...chunk.headingPath],
          tokenCount: chunk.tokenCount,
          slot: this.#slots.length,
          embedded: false,
        };
        this.#slots.push(stored);
        this.#pending.add(stored);
        document.chunks.push(stored);
        this.#bm25.add(stored.slot, this.#analyzer.analyze(chunkSearchText(stored)));
        if (position === 0) this.#frontPageSlots.add(stored.slot);
      });
      this.#documents.set(input.source, document);
      this.#dirty = true;
      return { warnings: await this.#embedPending(options.signal) };
    });
  }

  /** Remove the document added from `source`. @returns whether it was there */
  async deleteDocument(source: string): Promise<boolean> {
    return this.#serialised(async () => {
      this.#assertWritable();
      return this.#deleteNow(source);
    });
  }

  /**
   * Embed chunks that have no vector yet (added while the embedding service was down).
   * @returns Warnings when the embedder still fails.
   */
  async embedPending(
    options: { signal?: AbortSignal } = {},
  ): Promise<{ warnings: string[]; pending: number }> {
    return this.#serialised(async () => {
      const warnings = await this.#embedPending(options.signal, !this.readOnly);
      return { warnings, pending: this.#pending.size };
    });
  }

  /**
   * Search the knowledge base.
   *
   * Hybrid mode starts the query embedding (possibly a remote call) and runs BM25 while it is in
   * flight, then searches HNSW and fuses the lists; if the embedder fails, the keyword results are
   * returned with a warning.
   * @throws InvalidQueryError for an empty or whitespace-only query.
   */
  async search(options: SearchOptions): Promise<SearchResult> {
    this.#assertOpen();
    const query = options.query?.trim() ?? '';
    if (query.length === 0) {
      throw new InvalidQueryError(
        'The search query is empty: pass the words or question to search for.',
      );
    }
    const mode = options.mode ?? 'hybrid';
    const topK = Math.max(1, Math.floor(options.topK ?? 10));
    const fusion = options.fusion ?? {};
    // One list needs a little slack for deduplication; fusion needs deeper lists (the notes
    // measured depths of 50–1000 giving the same nDCG@10).
    const depth =
      mode === 'hybrid' || options.frontPage ? Math.max(topK, fusion.depth ?? 50) : topK * 2;
    const warnings: string[] = [];
    const allowed = this.#allowedSlots(options.sources);
    const filter = allowed ? (slot: number) => allowed.has(slot) : undefined;

    // After bulk adds, the first search that needs vectors (re)fits a corpus-fitted embedder.
    if (mode !== 'keyword' && !this.readOnly && this.#fitDue()) {
      await this.#serialised(() => this.#embedPending(options.signal, true));
    }
    const awaitingFit = this.#awaitingFit();
    if (awaitingFit && mode === 'vector') {
      const embedder = this.#embedder as CorpusFittedEmbedder;
      warnings.push(
        `Vector search starts once the knowledge base holds ${embedder.minFitChunks} chunks (it has ${this.chunkCount}): the offline embedder is fitted to them. Use keyword or hybrid search.`,
      );
    }

    // Start the query embedding first: BM25 runs while a remote embedder is answering.
    const embedding =
      mode === 'keyword' || this.#slots.length === 0 || awaitingFit
        ? undefined
        : this.#embedder
            .embed([truncateToTokens(query, 512)], options.signal ? { signal: options.signal } : {})
            .then(
              (vectors) => ({ vector: vectors[0]! }),
              (error: unknown) => ({ error }),
            );
    const queryTerms = this.#analyzer.analyze(query);
    const keyword = mode === 'vector' ? [] : this.#bm25.search(queryTerms, depth, filter);
    const frontPage =
      options.frontPage && mode !== 'vector'
        ? this.#bm25.search(
            queryTerms,
            depth,
            (slot) => this.#frontPageSlots.has(slot) && (!filter || filter(slot)),
          )
        : [];
    if (mode !== 'vector' && queryTerms.length === 0) {
      warnings.push(
        'The query has no searchable words (only stop words or punctuation); keyword search found nothing.',
      );
    }

    let vector: Scored[] = [];
    if (embedding) {
      const outcome = await embedding;
      options.signal?.throwIfAborted();
      if ('error' in outcome) {
        warnings.push(
          `Vector search is unavailable (${errorMessage(outcome.error)}); ${mode === 'hybrid' ? 'showing keyword results only' : 'no results'}.`,
        );
        this.#logger.warn('query embedding failed', { error: errorMessage(outcome.error) });
      } else if (this.#vectors && outcome.vector.length !== this.#vectors.dimensions) {
        throw new EmbedderMismatchError(
          this.directory ?? '(in memory)',
          { id: this.#embedder.id, dimensions: this.#vectors.dimensions },
          { id: this.#embedder.id, dimensions: outcome.vector.length },
        );
      } else if (this.#vectors) {
        vector = this.#vectors.search(outcome.vector, depth, filter);
      }
      const pending = this.#pending.size;
      if (pending > 0 && !awaitingFit)
        warnings.push(`${pending} chunks are not embedded yet; vector search does not see them.`);
    }

    const defaults = fusionDefaults(this.#embedder);
    const vectorWeight = fusion.vectorWeight ?? defaults.vectorWeight;
    const lists = [
      { hits: keyword, weight: fusion.keywordWeight ?? defaults.keywordWeight },
      { hits: vector, weight: mode === 'keyword' ? 0 : vectorWeight },
      { hits: frontPage, weight: fusion.frontPageWeight ?? 0.5 },
    ].filter((list) => list.hits.length > 0 && list.weight > 0);
    let fused: { id: number; score: number }[];
    if (mode === 'keyword' && !options.frontPage)
      fused = keyword.map((hit) => ({ id: hit.slot, score: hit.score }));
    else if (mode === 'vector') fused = vector.map((hit) => ({ id: hit.slot, score: hit.score }));
    else if ((fusion.method ?? defaults.method) === 'convex') {
      fused = convexFusion(
        lists.map((list) => ({ items: list.hits.map(toItem), weight: list.weight })),
      );
    } else {
      fused = reciprocalRankFusion(
        lists.map((list) => ({ ids: list.hits.map((hit) => hit.slot), weight: list.weight })),
        fusion.k ?? 60,
      );
    }

    const keywordRanks = new Map(keyword.map((hit, i) => [hit.slot, i + 1]));
    const vectorRanks = new Map(vector.map((hit, i) => [hit.slot, i + 1]));
    const seen = new Set<string>();
    const hits: SearchHit[] = [];
    let budget = options.maxRefTokens ?? Infinity;
    for (const { id: slot, score } of fused) {
      if (hits.length >= topK || budget <= 0) break;
      const stored = this.#slots[slot];
      if (!stored) continue;
      if (options.dedupe ?? true) {
        const fingerprint = stored.text.replace(/\s+/g, ' ').trim().toLowerCase();
        if (seen.has(fingerprint)) continue;
        seen.add(fingerprint);
      }
      let text = stored.text;
      if (Number.isFinite(budget)) {
        const tokens = countTextTokens(text);
        if (tokens > budget) {
          // Keep a truncated chunk only if a useful part fits (or it is the first one).
          if (hits.length > 0 && budget < 32) break;
          text = truncateToTokens(text, budget);
          budget = 0;
        } else {
          budget -= tokens;
        }
      }
      hits.push({
        chunk: publicChunk(stored, text),
        score,
        ...(keywordRanks.has(slot) ? { keywordRank: keywordRanks.get(slot)! } : {}),
        ...(vectorRanks.has(slot) ? { vectorRank: vectorRanks.get(slot)! } : {}),
      });
    }
    return { hits, warnings };
  }

  /**
   * Persist all changes as a new generation (atomic; see the class description). Chunks still
   * waiting for vectors are embedded first when the embedder answers. No-op for an in-memory
   * knowledge base or when nothing changed.
   */
  async commit(options: { signal?: AbortSignal } = {}): Promise<{ warnings: string[] }> {
    return this.#serialised(async () => {
      this.#assertWritable();
      const warnings =
        this.#pending.size > 0 || this.#fitDue()
          ? await this.#embedPending(options.signal, true)
          : [];
      if (!this.directory || !this.#dirty) return { warnings };
      this.#writeGeneration(this.#generation + 1);
      this.#dirty = false;
      return { warnings };
    });
  }

  /** Release the write lock. Uncommitted changes are discarded: call {@link KnowledgeBase.commit} first. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#queue.catch(() => undefined);
    this.#closed = true;
    this.#releaseLock();
  }

  // ------------------------------------------------------------------ internals

  #serialised<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  #assertOpen(): void {
    if (this.#closed)
      throw new ConfigurationError(
        'This knowledge base is closed; open it again with KnowledgeBase.open().',
      );
  }

  #assertWritable(): void {
    this.#assertOpen();
    if (this.readOnly) {
      throw new ConfigurationError(
        'This knowledge base was opened read-only; open it without `readOnly` to change it.',
      );
    }
  }

  #deleteNow(source: string): boolean {
    const document = this.#documents.get(source);
    if (!document) return false;
    for (const chunk of document.chunks) {
      this.#bm25.remove(chunk.slot);
      if (chunk.embedded) this.#vectors?.remove(chunk.slot);
      this.#frontPageSlots.delete(chunk.slot);
      this.#pending.delete(chunk);
      this.#slots[chunk.slot] = undefined;
    }
    this.#documents.delete(source);
    this.#dirty = true;
    return true;
  }

  #pendingSlots(): StoredChunk[] {
    return [...this.#pending];
  }

  #markAllUnembedded(): void {
    for (const chunk of this.#slots) {
      if (!chunk) continue;
      chunk.embedded = false;
      this.#pending.add(chunk);
    }
  }

  /** True when a corpus-fitted embedder should be (re)fitted: enough chunks and none fitted, or the corpus doubled since. */
  #fitDue(): boolean {
    const embedder = this.#embedder;
    if (!isCorpusFitted(embedder)) return false;
    const chunks = this.chunkCount;
    return embedder.fittedOn === 0
      ? chunks >= embedder.minFitChunks
      : chunks >= 2 * embedder.fittedOn;
  }

  /** True while a corpus-fitted embedder waits for enough chunks to fit on (search is keyword-only). */
  #awaitingFit(): boolean {
    const embedder = this.#embedder;
    return isCorpusFitted(embedder) && embedder.fittedOn === 0;
  }

  /** Fit a corpus-fitted embedder to every chunk held; all vectors are then made again. */
  #fitEmbedder(embedder: CorpusFittedEmbedder): void {
    const texts: string[] = [];
    for (const chunk of this.#slots) if (chunk) texts.push(chunkSearchText(chunk));
    const started = performance.now();
    embedder.fit(texts);
    this.#vectors = undefined;
    this.#markAllUnembedded();
    this.#dirty = true;
    this.#logger.info('fitted the offline embedder to the knowledge base', {
      chunks: texts.length,
      seconds: Number(((performance.now() - started) / 1000).toFixed(2)),
    });
  }

  /**
   * Embed the chunks without vectors. With a corpus-fitted embedder, `allowFit` lets this (re)fit
   * it first when due (commit, embedPending, search); adds only fold new chunks into the current model.
   */
  async #embedPending(signal?: AbortSignal, allowFit = false): Promise<string[]> {
    const embedder = this.#embedder;
    if (isCorpusFitted(embedder)) {
      if (this.#fitDue()) {
        if (!allowFit) return [];
        signal?.throwIfAborted();
        this.#fitEmbedder(embedder);
      } else if (embedder.fittedOn === 0) {
        return [];
      }
    }
    const pending = this.#pendingSlots();
    const batchSize = 256;
    for (let start = 0; start < pending.length; start += batchSize) {
      const batch = pending.slice(start, start + batchSize);
      let vectors: number[][];
      try {
        vectors = await this.#embedder.embed(batch.map(chunkSearchText), signal ? { signal } : {});
      } catch (error) {
        signal?.throwIfAborted();
        const remaining = pending.length - start;
        this.#logger.warn(
          'embedding failed; chunks stay keyword-only until a later add or commit',
          {
            error: errorMessage(error),
            remaining,
          },
        );
        return [
          `Embedding failed (${errorMessage(error)}); ${remaining} chunks are searchable by keyword only until they are embedded.`,
        ];
      }
      batch.forEach((chunk, i) => {
        const vector = vectors[i]!;
        this.#vectors ??= VectorIndex.create(
          vector.length,
          this.#hnswOptions,
          Math.max(1024, pending.length),
        );
        if (vector.length !== this.#vectors.dimensions) {
          throw new EmbedderMismatchError(
            this.directory ?? '(in memory)',
            { id: this.#embedder.id, dimensions: this.#vectors.dimensions },
            { id: this.#embedder.id, dimensions: vector.length },
          );
        }
        // The chunk may have been deleted while the embedder was answering.
        if (this.#slots[chunk.slot] !== chunk) return;
        this.#vectors.add(chunk.slot, vector);
        chunk.embedded = true;
        this.#pending.delete(chunk);
      });
      this.#dirty = true;
    }
    return [];
  }

  #allowedSlots(sources: readonly string[] | undefined): Set<number> | undefined {
    if (!sources) return undefined;
    const allowed = new Set<number>();
    for (const source of sources) {
      for (const chunk of this.#documents.get(source)?.chunks ?? []) allowed.add(chunk.slot);
    }
    return allowed;
  }

  #reindexKeyword(): void {
    this.#bm25 = new Bm25Index({ k1: this.#bm25.k1, b: this.#bm25.b });
    for (const chunk of this.#slots)
      if (chunk) this.#bm25.add(chunk.slot, this.#analyzer.analyze(chunkSearchText(chunk)));
  }

  #restoreDocuments(store: ChunkStoreFile): void {
    this.#slots = new Array(store.nextSlot);
    this.#documents.clear();
    this.#frontPageSlots.clear();
    this.#pending.clear();
    for (const document of store.documents) {
      this.#documents.set(document.source, document);
      document.chunks.forEach((chunk, position) => {
        chunk.source = document.source;
        this.#slots[chunk.slot] = chunk;
        if (!chunk.embedded) this.#pending.add(chunk);
        if (position === 0) this.#frontPageSlots.add(chunk.slot);
      });
    }
  }

  // ------------------------------------------------------------------ persistence

  async #load(options: KnowledgeBaseOptions): Promise<void> {
    const directory = this.directory!;
    // A writer may switch generations and delete old files while we read: retry on a vanished file.
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#loadOnce(directory, options);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT' && attempt < 5) continue;
        throw error;
      }
    }
  }

  async #loadOnce(directory: string, options: KnowledgeBaseOptions): Promise<void> {
    const manifestPath = join(directory, manifestName);
    if (!existsSync(manifestPath)) {
      if (options.readOnly) {
        throw new IndexCorruptedError(
          directory,
          manifestName,
          'does not exist (this is not a knowledge base)',
        );
      }
      return;
    }
    let manifest: Manifest;
    try {
      manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
    } catch (error) {
      throw new IndexCorruptedError(directory, manifestName, 'is not valid JSON', { cause: error });
    }
    if (manifest.format !== 'quiver-knowledge-base' || typeof manifest.version !== 'number') {
      throw new IndexCorruptedError(
        directory,
        manifestName,
        'is not a Quiver knowledge base manifest',
      );
    }
    if (manifest.version > KNOWLEDGE_BASE_FORMAT_VERSION) {
      throw new UnsupportedVersionError(directory, manifest.version, KNOWLEDGE_BASE_FORMAT_VERSION);
    }
    // (Format migrations go here: version 1 is the first format.)

    const storedEmbedder = manifest.embedder;
    if (options.embedder === undefined && storedEmbedder.id.startsWith('quiver-hashed-ngram-v1:')) {
      // Built with the earlier offline default: keep using it rather than re-embed everything.
      const legacy = new HashedNgramEmbedder();
      if (legacy.id === storedEmbedder.id) this.#embedder = legacy;
    }
    const embedder = this.#embedder;
    const modelEntry = manifest.files.embedderModel;
    if (
      isCorpusFitted(embedder) &&
      modelEntry &&
      storedEmbedder.id.startsWith(`${embedder.family}:`)
    ) {
      const data = this.#readVerified(modelEntry);
      try {
        embedder.importModel(data);
      } catch (error) {
        throw new IndexCorruptedError(directory, modelEntry.name, errorMessage(error), {
          cause: error,
        });
      }
    }
    const sameEmbedder =
      storedEmbedder.id === this.#embedder.id &&
      (storedEmbedder.dimensions === null ||
        this.#embedder.dimensions === undefined ||
        storedEmbedder.dimensions === this.#embedder.dimensions);
    if (!sameEmbedder && !options.reindex) {
      throw new EmbedderMismatchError(
        directory,
        { id: storedEmbedder.id, dimensions: storedEmbedder.dimensions ?? 0 },
        { id: this.#embedder.id, dimensions: this.#embedder.dimensions },
      );
    }

    const chunkData = this.#readVerified(manifest.files.chunks);
    let store: ChunkStoreFile;
    try {
      store = JSON.parse(chunkData.toString('utf8')) as ChunkStoreFile;
    } catch (error) {
      throw new IndexCorruptedError(directory, manifest.files.chunks.name, 'does not parse', {
        cause: error,
      });
    }
    this.#generation = manifest.generation;
    this.#restoreDocuments(store);

    const keywordData = this.#readVerified(manifest.files.keyword);
    if (manifest.analyzer === this.#analyzer.signature) {
      try {
        this.#bm25 = Bm25Index.fromSnapshot(decodeBm25(keywordData));
      } catch (error) {
        throw new IndexCorruptedError(directory, manifest.files.keyword.name, errorMessage(error), {
          cause: error,
        });
      }
    } else {
      this.#bm25 = new Bm25Index(manifest.bm25);
      this.#reindexKeyword();
      this.#dirty = true;
      this.#logger.info('keyword settings changed; re-indexed keyword search', { directory });
    }

    if (!sameEmbedder) {
      this.#markAllUnembedded();
      this.#dirty = true;
      this.#logger.info('embedder changed; re-embedding every chunk', { directory });
      await this.#embedPending(undefined, true);
    } else if (manifest.files.vectors && storedEmbedder.dimensions !== null) {
      const entry = manifest.files.vectors;
      const path = join(directory, entry.name);
      this.#verify(entry, readFileSync(path));
      try {
        this.#vectors = VectorIndex.read(
          path,
          storedEmbedder.dimensions,
          manifest.counts.vectors,
          this.#hnswOptions,
        );
      } catch (error) {
        throw new IndexCorruptedError(
          directory,
          entry.name,
          `cannot be read (${errorMessage(error)})`,
          { cause: error },
        );
      }
    }
  }

  #readVerified(entry: FileEntry): Buffer {
    const data = readFileSync(join(this.directory!, entry.name));
    this.#verify(entry, data);
    return data;
  }

  #verify(entry: FileEntry, data: Uint8Array): void {
    if (data.byteLength !== entry.bytes) {
      throw new IndexCorruptedError(
        this.directory!,
        entry.name,
        `has ${data.byteLength} bytes, expected ${entry.bytes}`,
      );
    }
    if (crc32(data) !== entry.crc32)
      throw new IndexCorruptedError(this.directory!, entry.name, 'fails its checksum');
  }

  #writeGeneration(generation: number): void {
    const directory = this.directory!;
    // Chunks repeat their document's source in memory; on disk it is stored once per document.
    const store = {
      nextSlot: this.#slots.length,
      documents: [...this.#documents.values()].map((document) => ({
        ...document,
        chunks: document.chunks.map(({ source: _source, ...chunk }) => chunk),
      })),
    };
    const chunkBytes = Buffer.from(JSON.stringify(store));
    const chunks = this.#writeFile(`chunks-${generation}.json`, [chunkBytes]);
    const keyword = this.#writeFile(`keyword-${generation}.bin`, encodeBm25(this.#bm25.snapshot()));
    let vectors: FileEntry | null = null;
    if (this.#vectors) {
      const name = `vectors-${generation}.hnsw`;
      const temporary = temporaryPath(join(directory, name));
      this.#vectors.write(temporary);
      fsyncPath(temporary);
      const { crc32: checksum, bytes } = fileCrc32(temporary);
      commitTemporary(temporary, join(directory, name));
      vectors = { name, bytes, crc32: checksum };
    }
    const embedder = this.#embedder;
    const embedderModel =
      isCorpusFitted(embedder) && embedder.fittedOn > 0
        ? this.#writeFile(`embedder-${generation}.bin`, [embedder.exportModel()])
        : null;
    const manifest: Manifest = {
      format: 'quiver-knowledge-base',
      version: KNOWLEDGE_BASE_FORMAT_VERSION,
      generation,
      writer: '@quiver/rag-retrieval',
      embedder: { id: this.#embedder.id, dimensions: this.#vectors?.dimensions ?? null },
      analyzer: this.#analyzer.signature,
      bm25: { k1: this.#bm25.k1, b: this.#bm25.b },
      counts: {
        documents: this.#documents.size,
        chunks: this.chunkCount,
        vectors: this.#vectors?.size ?? 0,
      },
      files: { chunks, keyword, vectors, embedderModel },
    };
    // The commit point: until this rename, readers and a restarted writer see the previous generation.
    writeFileAtomic(join(directory, manifestName), [
      Buffer.from(JSON.stringify(manifest, null, 2)),
    ]);
    this.#generation = generation;
    this.#removeStaleFiles();
  }

  #writeFile(name: string, parts: Uint8Array[]): FileEntry {
    writeFileAtomic(join(this.directory!, name), parts);
    let checksum = 0;
    let bytes = 0;
    if (parts.length === 1) {
      checksum = crc32(parts[0]!);
      bytes = parts[0]!.byteLength;
    } else {
      const joined = Buffer.concat(parts);
      checksum = crc32(joined);
      bytes = joined.byteLength;
    }
    return { name, bytes, crc32: checksum };
  }

  /**
   * Delete temporary files of dead writers and generation files older than the previous one
   * (the previous one stays for readers that loaded its manifest a moment ago).
   */
  #removeStaleFiles(): void {
    if (!this.directory || this.readOnly) return;
    for (const name of readdirSync(this.directory)) {
      const generation = /^(?:chunks|keyword|vectors|embedder)-(\d+)\.(?:json|bin|hnsw)$/.exec(
        name,
      )?.[1];
      const stale =
        (isTemporaryName(name) && !name.includes(`.tmp-${process.pid}-`)) ||
        (generation !== undefined && Number(generation) < this.#generation - 1) ||
        (generation !== undefined && Number(generation) > this.#generation);
      if (stale) safeUnlink(join(this.directory, name));
    }
  }

  #findIntactChunkStore(): { generation: number; data: ChunkStoreFile } {
    const directory = this.directory!;
    const candidates = existsSync(directory)
      ? readdirSync(directory)
          .map((name) => ({
            name,
            generation: Number(/^chunks-(\d+)\.json$/.exec(name)?.[1] ?? NaN),
          }))
          .filter((candidate) => Number.isFinite(candidate.generation))
          .sort((a, b) => b.generation - a.generation)
      : [];
    let manifest: Manifest | undefined;
    try {
      manifest = JSON.parse(readFileSync(join(directory, manifestName), 'utf8')) as Manifest;
    } catch {
      manifest = undefined;
    }
    for (const candidate of candidates) {
      try {
        const data = readFileSync(join(directory, candidate.name));
        const entry = manifest?.files.chunks;
        if (
          entry &&
          entry.name === candidate.name &&
          (entry.bytes !== data.byteLength || entry.crc32 !== crc32(data))
        ) {
          continue;
        }
        const parsed = JSON.parse(data.toString('utf8')) as ChunkStoreFile;
        if (!Array.isArray(parsed.documents) || typeof parsed.nextSlot !== 'number') continue;
        return { generation: candidate.generation, data: parsed };
      } catch {
        continue;
      }
    }
    throw new IndexCorruptedError(
      directory,
      'chunks-*.json',
      'has no intact copy left, so the indexes cannot be rebuilt; delete the directory and add the documents again',
    );
  }

  #acquireLock(): void {
    const path = join(this.directory!, lockName);
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        writeFileSync(path, String(process.pid), { flag: 'wx' });
        this.#lockHeld = true;
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      let holder: number | undefined;
      try {
        holder = Number.parseInt(readFileSync(path, 'utf8'), 10) || undefined;
      } catch {
        holder = undefined;
      }
      if (holder !== undefined && isAlive(holder))
        throw new KnowledgeBaseLockedError(this.directory!, holder);
      // The writer died (crash, kill -9): its lock is stale. Its half-written files are temporary
      // names that the manifest never referenced, removed after loading.
      safeUnlink(path);
    }
    throw new KnowledgeBaseLockedError(this.directory!, undefined);
  }

  #releaseLock(): void {
    if (!this.#lockHeld) return;
    safeUnlink(join(this.directory!, lockName));
    this.#lockHeld = false;
  }
}

/**
 * Default fusion per embedder. The offline embedders are weaker than BM25, so they get a low
 * weight; the LSA list is fused by score (0.7·BM25 + 0.3·LSA on min-max-normalised scores), the
 * setting the shared notes found to hold across two collections of different domains.
 */
function fusionDefaults(embedder: Embedder): {
  method: 'rrf' | 'convex';
  keywordWeight: number;
  vectorWeight: number;
} {
  const inner = embedder instanceof CachedEmbedder ? embedder.inner : embedder;
  if (inner instanceof LsaEmbedder)
    return { method: 'convex', keywordWeight: 0.7, vectorWeight: 0.3 };
  if (inner instanceof HashedNgramEmbedder)
    return { method: 'rrf', keywordWeight: 1, vectorWeight: 0.3 };
  return { method: 'rrf', keywordWeight: 1, vectorWeight: 1 };
}

function isOfflineEmbedder(embedder: Embedder): boolean {
  const inner = embedder instanceof CachedEmbedder ? embedder.inner : embedder;
  return inner instanceof HashedNgramEmbedder || inner instanceof LsaEmbedder;
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Text indexed for a chunk: its heading path gives context a chunk body often lacks. */
function chunkSearchText(chunk: DocumentChunk): string {
  return chunk.headingPath.length > 0
    ? `${chunk.headingPath.join(' / ')}\n${chunk.text}`
    : chunk.text;
}

function publicChunk(chunk: StoredChunk, text: string): DocumentChunk {
  return {
    id: chunk.id,
    index: chunk.index,
    text,
    source: chunk.source,
    page: chunk.page,
    headingPath: [...chunk.headingPath],
    tokenCount: text === chunk.text ? chunk.tokenCount : countTextTokens(text),
  };
}

function describe(document: StoredDocument): KnowledgeBaseDocument {
  return {
    source: document.source,
    contentHash: document.contentHash,
    ...(document.title !== undefined ? { title: document.title } : {}),
    chunkCount: document.chunks.length,
  };
}

function toItem(hit: Scored): { id: number; score: number } {
  return { id: hit.slot, score: hit.score };
}
