import hnswlib from 'hnswlib-node';
import type { Scored } from './top-k.js';

/** HNSW parameters. */
export interface VectorIndexOptions {
  /** Graph degree. Default 16. */
  m?: number;
  /** Build-time candidate list. Default 200. */
  efConstruction?: number;
  /** Query-time candidate list (raised to k when k is larger). Default 200: lower values cost char-n-gram vectors recall. */
  efSearch?: number;
}

/**
 * A cosine HNSW index (hnswlib-node) over integer slots, growing as needed; removal marks deleted.
 * @internal
 */
export class VectorIndex {
  readonly dimensions: number;
  readonly #efSearch: number;
  readonly #index: hnswlib.HierarchicalNSW;
  #live = 0;

  private constructor(
    dimensions: number,
    index: hnswlib.HierarchicalNSW,
    efSearch: number,
    live: number,
  ) {
    this.dimensions = dimensions;
    this.#index = index;
    this.#efSearch = efSearch;
    this.#live = live;
  }

  /** A new, empty index. */
  static create(
    dimensions: number,
    options: VectorIndexOptions = {},
    capacity = 1024,
  ): VectorIndex {
    const index = new hnswlib.HierarchicalNSW('cosine', dimensions);
    index.initIndex({
      maxElements: Math.max(16, capacity),
      m: options.m ?? 16,
      efConstruction: options.efConstruction ?? 200,
      randomSeed: 100,
      allowReplaceDeleted: true,
    });
    return new VectorIndex(dimensions, index, options.efSearch ?? 200, 0);
  }

  /** Load an index written by {@link VectorIndex.write}. Verify the file first: hnswlib trusts its input. */
  static read(
    path: string,
    dimensions: number,
    liveCount: number,
    options: VectorIndexOptions = {},
  ): VectorIndex {
    const index = new hnswlib.HierarchicalNSW('cosine', dimensions);
    index.readIndexSync(path, true);
    return new VectorIndex(dimensions, index, options.efSearch ?? 200, liveCount);
  }

  /** Number of live (not removed) vectors. */
  get size(): number {
    return this.#live;
  }

  /** Add or replace the vector of `slot`. */
  add(slot: number, vector: readonly number[]): void {
    if (vector.length !== this.dimensions) {
      throw new RangeError(
        `Expected a vector of ${this.dimensions} numbers, got ${vector.length}.`,
      );
    }
    // A zero vector has no direction; cosine distance would be NaN. Nudge it so it ranks last.
    const point = vector.some((value) => value !== 0)
      ? Array.from(vector)
      : zeroSubstitute(this.dimensions);
    const capacity = this.#index.getMaxElements();
    if (this.#index.getCurrentCount() >= capacity) this.#index.resizeIndex(capacity * 2);
    this.#index.addPoint(point, slot, true);
    this.#live++;
  }

  /** Remove `slot` (unknown slots are ignored). */
  remove(slot: number): void {
    try {
      this.#index.markDelete(slot);
      this.#live--;
    } catch {
      // hnswlib throws for labels it does not hold or that are already deleted: nothing to remove.
    }
  }

  /** The `topK` nearest slots by cosine similarity (score = 1 − distance). */
  search(vector: readonly number[], topK: number, filter?: (slot: number) => boolean): Scored[] {
    const k = Math.min(topK, this.#live);
    if (k <= 0) return [];
    this.#index.setEf(Math.max(this.#efSearch, k));
    const point = Array.from(vector);
    const { neighbors, distances } = filter
      ? this.#index.searchKnn(point, k, filter)
      : this.#index.searchKnn(point, k);
    return neighbors.map((slot, i) => ({ slot, score: 1 - distances[i]! }));
  }

  /** Write the index to `path` (the caller makes the write atomic). */
  write(path: string): void {
    this.#index.writeIndexSync(path);
  }
}

function zeroSubstitute(dimensions: number): number[] {
  const point = new Array<number>(dimensions).fill(0);
  point[0] = 1e-6;
  return point;
}
