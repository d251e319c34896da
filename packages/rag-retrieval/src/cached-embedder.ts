import { createHash } from 'node:crypto';
import type { Embedder } from '@quiver/core';

/** Options of {@link CachedEmbedder}. */
export interface CachedEmbedderOptions {
  /** Most vectors kept (least recently used are evicted). Default 50,000. */
  maxEntries?: number;
}

/**
 * Wraps an {@link Embedder} with a cache keyed by the SHA-256 of the embedder id and the text, so a
 * re-indexed or repeated text is never sent to the model twice; duplicates inside one call are
 * embedded once. The id and dimensions are the wrapped embedder's, so a cached embedder opens the
 * same knowledge bases.
 *
 * @example
 * ```ts
 * const embedder = new CachedEmbedder(new OpenAIEmbedder({ model: 'text-embedding-3-small' }));
 * ```
 */
export class CachedEmbedder implements Embedder {
  readonly inner: Embedder;
  readonly #maxEntries: number;
  readonly #cache = new Map<string, number[]>();
  #hits = 0;
  #misses = 0;

  constructor(inner: Embedder, options: CachedEmbedderOptions = {}) {
    this.inner = inner;
    this.#maxEntries = Math.max(1, options.maxEntries ?? 50_000);
  }

  get id(): string {
    return this.inner.id;
  }

  get dimensions(): number | undefined {
    return this.inner.dimensions;
  }

  /** Cache statistics since construction. */
  get stats(): { hits: number; misses: number; size: number } {
    return { hits: this.#hits, misses: this.#misses, size: this.#cache.size };
  }

  async embed(texts: string[], options?: { signal?: AbortSignal }): Promise<number[][]> {
    const keys = texts.map((text) =>
      createHash('sha256').update(this.inner.id).update('\0').update(text).digest('base64'),
    );
    const missing = new Map<string, string>();
    keys.forEach((key, i) => {
      if (this.#cache.has(key)) return;
      if (!missing.has(key)) missing.set(key, texts[i]!);
    });
    this.#misses += missing.size;
    this.#hits += texts.length - missing.size;
    // Hold the hits locally: storing the misses may evict them before they are returned.
    const found = new Map<string, number[]>();
    for (const key of keys) {
      const vector = this.#cache.get(key);
      if (vector) {
        found.set(key, vector);
        this.#cache.delete(key); // re-insert below: Map order is the LRU order
        this.#cache.set(key, vector);
      }
    }
    if (missing.size > 0) {
      const vectors = await this.inner.embed([...missing.values()], options);
      [...missing.keys()].forEach((key, i) => {
        const vector = vectors[i]!;
        found.set(key, vector);
        this.#cache.set(key, vector);
      });
      while (this.#cache.size > this.#maxEntries)
        this.#cache.delete(this.#cache.keys().next().value!);
    }
    return keys.map((key) => found.get(key)!);
  }
}
