import type { ToolResponse } from '@quiver/core';
import type { RegisteredTool, ToolInvocation } from '@quiver/core-registry';
import { canonicalJson } from './canonical-json.js';
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import type { GovernanceMiddleware } from './governance-middleware.js';
import { createGovernanceMiddleware } from './governance-middleware.js';
import { annotate, replayable } from './governance-metadata.js';
import { responseBytes } from './response-size.js';

/** Cache settings of one tool. */
export interface ToolCachePolicy {
  /** How long a result stays fresh, in milliseconds. Default: the cache's `ttlMs`. */
  ttlMs?: number;
}

/** Options of {@link resultCache}. */
export interface ResultCacheOptions {
  /**
   * The tools whose results are cached (opt-in): names, or names with their own TTL. Tools
   * flagged `sideEffects` are never cached, whatever this says.
   */
  tools?: string[] | Record<string, ToolCachePolicy>;
  /** Also cache every tool flagged `deterministic: true`. Default false. */
  deterministicTools?: boolean;
  /** Default freshness, in milliseconds. Default 5 minutes. */
  ttlMs?: number;
  /** Upper bound of the cached responses' total size in bytes (approximate). Default 32 MiB. */
  maxBytes?: number;
  /** Upper bound of the number of entries. Default 10 000. */
  maxEntries?: number;
  clock?: Clock;
}

/** Counters of a {@link resultCache}. */
export interface ResultCacheStats {
  hits: number;
  misses: number;
  /** Calls that waited for an identical call in flight instead of running. */
  coalesced: number;
  evictions: number;
  /** Results not stored because they alone exceed `maxBytes`. */
  rejected: number;
  entries: number;
  bytes: number;
}

interface CacheEntry {
  response: ToolResponse;
  bytes: number;
  expiresAt: number;
}

/** The result cache middleware; see {@link resultCache}. */
export interface ResultCacheMiddleware extends GovernanceMiddleware {
  stats(): ResultCacheStats;
  /** Drop every entry (counters are kept). */
  clear(): void;
}

/**
 * Middleware that caches successful results of opted-in tools: LRU with a TTL, keyed by tool
 * name and the canonical JSON of the arguments, bounded in entries and in bytes. Identical
 * calls that arrive while one is running wait for it instead of running twice. Error
 * responses and responses marked `rollback` are never stored.
 *
 * @example
 * ```ts
 * const cache = resultCache({ tools: { currency_rates: { ttlMs: 60_000 } }, maxBytes: 8 << 20 });
 * toolkit.use(cache);
 * cache.stats(); // { hits, misses, coalesced, evictions, rejected, entries, bytes }
 * ```
 */
export function resultCache(options: ResultCacheOptions = {}): ResultCacheMiddleware {
  const clock = options.clock ?? systemClock;
  const defaultTtl = options.ttlMs ?? 300_000;
  const maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
  const maxEntries = options.maxEntries ?? 10_000;
  const listed: Record<string, ToolCachePolicy> = Array.isArray(options.tools)
    ? Object.fromEntries(options.tools.map((name) => [name, {}]))
    : { ...options.tools };
  const entries = new Map<string, CacheEntry>();
  const inFlight = new Map<string, Promise<ToolResponse>>();
  const stats = { hits: 0, misses: 0, coalesced: 0, evictions: 0, rejected: 0, bytes: 0 };

  const ttlOf = (invocation: ToolInvocation): number | undefined => {
    const tool: RegisteredTool | undefined = invocation.tool;
    if (tool === undefined || tool.name !== invocation.name || tool.tool.flags.sideEffects)
      return undefined;
    const own = listed[tool.name];
    if (own !== undefined && Object.prototype.hasOwnProperty.call(listed, tool.name))
      return own.ttlMs ?? defaultTtl;
    return options.deterministicTools && tool.tool.flags.deterministic ? defaultTtl : undefined;
  };
  const remove = (key: string, entry: CacheEntry) => {
    entries.delete(key);
    stats.bytes -= entry.bytes;
  };
  const store = (key: string, response: ToolResponse, ttl: number) => {
    if (response.isError || response.metadata?.rollback !== undefined) return;
    const bytes = responseBytes(response);
    if (bytes > maxBytes) {
      stats.rejected++;
      return;
    }
    const existing = entries.get(key);
    if (existing !== undefined) remove(key, existing);
    while ((stats.bytes + bytes > maxBytes || entries.size >= maxEntries) && entries.size > 0) {
      const [oldestKey, oldest] = entries.entries().next().value!;
      remove(oldestKey, oldest);
      stats.evictions++;
    }
    entries.set(key, { response, bytes, expiresAt: clock.now() + ttl });
    stats.bytes += bytes;
  };

  return createGovernanceMiddleware(
    'resultCache',
    async (invocation, next) => {
      const ttl = ttlOf(invocation);
      if (ttl === undefined || invocation.arguments === undefined) return next(invocation);
      const tool = invocation.tool!;
      const key = `${invocation.name}\u0000${canonicalJson(tool.presetArgs ? { ...invocation.arguments, ...tool.presetArgs } : invocation.arguments)}`;
      const cached = entries.get(key);
      if (cached !== undefined) {
        if (cached.expiresAt > clock.now()) {
          // Refresh the LRU position: a Map iterates in insertion order.
          entries.delete(key);
          entries.set(key, cached);
          stats.hits++;
          return annotate(cached.response, { cache: 'hit' });
        }
        remove(key, cached);
      }
      const running = inFlight.get(key);
      if (running !== undefined) {
        stats.coalesced++;
        const response = await running;
        return annotate(response, { cache: 'coalesced' });
      }
      stats.misses++;
      const started = next(invocation);
      inFlight.set(key, started);
      try {
        const response = await started;
        store(key, replayable(response), ttl);
        return annotate(response, { cache: 'miss' });
      } finally {
        inFlight.delete(key);
      }
    },
    {
      stats: (): ResultCacheStats => ({ ...stats, entries: entries.size }),
      clear: (): void => {
        entries.clear();
        stats.bytes = 0;
      },
    },
  );
}
