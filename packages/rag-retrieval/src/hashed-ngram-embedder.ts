import type { Embedder } from '@quiver/core';
import { TextAnalyzer, type StopWords } from './text-analyzer.js';

/** Options of {@link HashedNgramEmbedder}. */
export interface HashedNgramEmbedderOptions {
  /** Vector length. Default 1024 (the notes measured 256 dimensions losing a fifth of the quality). */
  dimensions?: number;
  /** Shortest and longest character n-gram. Default `[3, 5]`. */
  ngramRange?: [number, number];
  /** Stop words dropped before n-grams are taken. Default `'natural'`. */
  stopWords?: StopWords;
}

/**
 * The offline default embedder: character 3–5-grams of each (stop-word-filtered, unstemmed) word,
 * feature-hashed with a sign into a fixed-length vector, sub-linear term weights, L2-normalised.
 *
 * It needs no network, no downloaded model and no fitting, so retrieval works on a fresh machine
 * and a knowledge base never has to be re-embedded as it grows. Be clear about what it is: a
 * **fuzzy lexical signal**, not semantic search. It matches inflections, compounds, misspellings and
 * shared word parts ("aeroelastic" ~ "elasticity"), which BM25's exact stems miss, and it knows
 * nothing about synonyms. Fused with BM25 at a low weight it adds a little quality; for semantic
 * search use {@link OpenAIEmbedder} with a real embedding model.
 *
 * @example
 * ```ts
 * const embedder = new HashedNgramEmbedder();
 * const [vector] = await embedder.embed(['wing flutter at supersonic speed']);
 * ```
 */
export class HashedNgramEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly #minN: number;
  readonly #maxN: number;
  readonly #analyzer: TextAnalyzer;

  constructor(options: HashedNgramEmbedderOptions = {}) {
    this.dimensions = options.dimensions ?? 1024;
    [this.#minN, this.#maxN] = options.ngramRange ?? [3, 5];
    if (!Number.isInteger(this.dimensions) || this.dimensions < 8) {
      throw new RangeError(`dimensions must be an integer >= 8 (got ${this.dimensions}).`);
    }
    if (!(this.#minN >= 1 && this.#maxN >= this.#minN)) {
      throw new RangeError(
        `ngramRange must be [min, max] with 1 <= min <= max (got [${this.#minN}, ${this.#maxN}]).`,
      );
    }
    this.#analyzer = new TextAnalyzer({
      stopWords: options.stopWords ?? 'natural',
      stemming: false,
    });
    this.id = `quiver-hashed-ngram-v1:${this.#minN}-${this.#maxN}:${this.dimensions}:${hash32(this.#analyzer.signature)}`;
  }

  /**
   * Embed each text. Never fails and never waits on I/O.
   * @param texts - Texts to embed; an empty text gives the zero vector.
   * @returns One vector of {@link HashedNgramEmbedder.dimensions} numbers per text.
   */
  async embed(texts: string[], options?: { signal?: AbortSignal }): Promise<number[][]> {
    options?.signal?.throwIfAborted();
    return texts.map((text) => this.embedOne(text));
  }

  /** Synchronous form of {@link HashedNgramEmbedder.embed} for one text. */
  embedOne(text: string): number[] {
    const counts = new Map<number, number>();
    for (const word of this.#analyzer.analyze(text)) {
      // FNV-1a over the UTF-16 code units of each n-gram of "\u0002word\u0003", without building substrings.
      const length = word.length + 2;
      const code = (i: number) => (i === 0 ? 2 : i === length - 1 ? 3 : word.charCodeAt(i - 1));
      for (let start = 0; start + this.#minN <= length; start++) {
        let hash = 0x811c9dc5;
        for (let end = start; end < start + this.#maxN && end < length; end++) {
          hash = Math.imul(hash ^ code(end), 0x01000193);
          if (end - start + 1 >= this.#minN) {
            const feature = hash >>> 0;
            counts.set(feature, (counts.get(feature) ?? 0) + 1);
          }
        }
      }
    }
    const vector = new Array<number>(this.dimensions).fill(0);
    for (const [feature, count] of counts) {
      const sign = feature & 0x80000000 ? -1 : 1;
      vector[(feature & 0x7fffffff) % this.dimensions]! += sign * (1 + Math.log(count));
    }
    let norm = 0;
    for (const value of vector) norm += value * value;
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
    return vector;
  }
}

/** FNV-1a, 32 bits, over UTF-16 code units. @internal */
export function hash32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
