/** Options of {@link TtlCache}. */
export interface TtlCacheOptions {
  /** How long an entry stays fresh, in milliseconds. */
  ttlMs: number;
  /** Most entries kept; the least recently used goes first. */
  maxEntries: number;
  /** Clock in milliseconds (injectable for tests). Default `Date.now`. */
  now?: () => number;
}

/**
 * A small LRU cache whose entries expire after a fixed time. Used to keep search results so that
 * an agent repeating a query does not pay (or wait) twice.
 *
 * @example
 * const cache = new TtlCache<string>({ ttlMs: 60_000, maxEntries: 100 });
 * cache.set('q', 'answer');
 * cache.get('q'); // 'answer' for the next minute
 */
export class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: TtlCacheOptions) {
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = Math.max(1, options.maxEntries);
    this.#now = options.now ?? Date.now;
  }

  /** The fresh value under `key`, or `undefined` (expired entries are dropped). */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    // Re-insert to mark it most recently used.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt: this.#now() + this.#ttlMs });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}
