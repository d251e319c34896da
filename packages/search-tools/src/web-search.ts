import { ConfigurationError, errorMessage, QuiverError, ToolArgumentError } from '@quiver/core';
import { canonicalUrlKey } from './canonical-url.js';
import { ProviderError, SearchToolsErrorCodes } from './errors.js';
import type { LookupFunction } from './guarded-dispatcher.js';
import { createHttpClient, type HttpClient } from './http-client.js';
import { createNetworkPolicy, type NetworkPolicy } from './network-policy.js';
import { type ProviderSpec, resolveSearchProviders } from './provider-config.js';
import type {
  Freshness,
  ImageResult,
  SearchProvider,
  SearchRequest,
  SearchResult,
} from './search-types.js';
import { TtlCache } from './ttl-cache.js';

/** Options of {@link createWebSearch}. */
export interface WebSearchOptions {
  /** Providers to query (several are queried in parallel and merged). Default: from the environment. */
  providers?: readonly ProviderSpec[];
  /** Environment to read keys and `QUIVER_SEARCH_PROVIDERS` from (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Result cache; `false` disables it. Default: 10 minutes, 256 queries. */
  cache?: { ttlMs?: number; maxEntries?: number } | false;
  /** Network policy for provider requests; providers' configured endpoints are added to it. */
  policy?: NetworkPolicy;
  /** Resolver for connections (tests, custom DNS). */
  lookup?: LookupFunction;
  /** Time limit for one provider request in milliseconds (default 15 000). */
  timeoutMs?: number;
  /** Default number of results (default 8). */
  defaultCount?: number;
  /** Clock in milliseconds, for the cache and relative dates (default `Date.now`). */
  now?: () => number;
}

/** Per-query options. */
export interface SearchOptions {
  /** Number of merged results wanted (1..50). */
  count?: number;
  language?: string;
  country?: string;
  safeSearch?: 'off' | 'moderate' | 'strict';
  freshness?: Freshness;
  signal?: AbortSignal;
}

/** A provider that failed while others answered. */
export interface ProviderFailure {
  provider: string;
  code: string;
  message: string;
  isRetryable: boolean;
}

/** The merged answer of a search. */
export interface SearchResponse<T> {
  query: string;
  results: T[];
  /** Providers that answered. */
  providers: string[];
  /** Providers that failed (the search still succeeds when at least one answered). */
  failures: ProviderFailure[];
  /** True when served from the cache. */
  cached: boolean;
}

/** Web and image search over one or more providers. */
export interface WebSearch {
  /** Names of the providers in use, in merge order. */
  readonly providers: readonly string[];
  /**
   * Search the web. Providers are queried in parallel; their results are interleaved by rank,
   * de-duplicated by canonical URL, cut to `count`, and cached.
   *
   * @throws {ProviderError} when every provider fails (retryable when any failure was).
   */
  search(query: string, options?: SearchOptions): Promise<SearchResponse<SearchResult>>;
  /**
   * Search images with the providers that support it.
   *
   * @throws {ConfigurationError} when no configured provider searches images.
   * @throws {ProviderError} when every provider fails.
   */
  searchImages(query: string, options?: SearchOptions): Promise<SearchResponse<ImageResult>>;
  close(): Promise<void>;
}

/**
 * Create a multi-provider web search: SearXNG, Brave, Tavily, Serper and Bing (or your own
 * {@link SearchProvider}s), chosen in code or by environment variables.
 *
 * Every provider request goes through the SSRF-guarded HTTP client; the endpoints the operator
 * configured (e.g. a SearXNG instance on the local network) are allowed explicitly.
 *
 * @param options - Providers, cache, limits.
 * @returns A search client; `close()` it when done.
 * @throws {ConfigurationError} naming the environment variable to set when a provider lacks a key.
 * @example
 * const search = createWebSearch({ providers: ['brave', 'searxng'] });
 * const { results } = await search.search('quiver agent tools', { count: 5 });
 */
export function createWebSearch(options: WebSearchOptions = {}): WebSearch {
  const providers = resolveSearchProviders(options.providers, options.env ?? process.env);
  const names = new Set<string>();
  for (const provider of providers) {
    if (names.has(provider.name)) {
      throw new ConfigurationError(
        `Search provider "${provider.name}" is configured twice; list each provider once.`,
      );
    }
    names.add(provider.name);
  }
  const trusted = providers.flatMap((provider) => [...(provider.trustedHosts ?? [])]);
  const policy = (options.policy ?? createNetworkPolicy()).extend(trusted);
  const http: HttpClient = createHttpClient({
    policy,
    ...(options.lookup !== undefined ? { lookup: options.lookup } : {}),
  });
  const now = options.now ?? Date.now;
  const cache =
    options.cache === false
      ? undefined
      : new TtlCache<SearchResponse<unknown>>({
          ttlMs: options.cache?.ttlMs ?? 10 * 60_000,
          maxEntries: options.cache?.maxEntries ?? 256,
          now,
        });
  const timeoutMs = options.timeoutMs ?? 15_000;
  const defaultCount = options.defaultCount ?? 8;

  async function run<T>(
    kind: 'web' | 'images',
    query: string,
    searchOptions: SearchOptions,
    active: SearchProvider[],
    call: (
      provider: SearchProvider,
      request: SearchRequest,
      context: Parameters<SearchProvider['search']>[1],
    ) => Promise<T[]>,
    keyOf: (item: T) => string | undefined,
    merge: (kept: T, duplicate: T) => T,
  ): Promise<SearchResponse<T>> {
    const toolName = kind === 'web' ? 'web_search' : 'image_search';
    const normalized = query.replace(/\s+/g, ' ').trim();
    if (normalized === '') {
      throw new ToolArgumentError(toolName, [
        {
          path: ['query'],
          message: 'The search query is empty: give a few keywords to search for.',
        },
      ]);
    }
    const count = Math.min(Math.max(Math.floor(searchOptions.count ?? defaultCount), 1), 50);
    const request: SearchRequest = {
      query: normalized,
      count,
      ...(searchOptions.language !== undefined ? { language: searchOptions.language } : {}),
      ...(searchOptions.country !== undefined ? { country: searchOptions.country } : {}),
      ...(searchOptions.safeSearch !== undefined ? { safeSearch: searchOptions.safeSearch } : {}),
      ...(searchOptions.freshness !== undefined ? { freshness: searchOptions.freshness } : {}),
    };
    const cacheKey = JSON.stringify([
      kind,
      active.map((provider) => provider.name),
      { ...request, query: normalized.toLowerCase() },
    ]);
    const hit = cache?.get(cacheKey) as SearchResponse<T> | undefined;
    if (hit !== undefined) return { ...hit, cached: true };

    const context = {
      http,
      timeoutMs,
      toolName,
      now: now(),
      ...(searchOptions.signal !== undefined ? { signal: searchOptions.signal } : {}),
    };
    const settled = await Promise.allSettled(
      active.map((provider) => call(provider, request, context)),
    );
    searchOptions.signal?.throwIfAborted();

    const lists: T[][] = [];
    const answered: string[] = [];
    const failures: ProviderFailure[] = [];
    const errors: unknown[] = [];
    settled.forEach((outcome, index) => {
      const provider = active[index]!.name;
      if (outcome.status === 'fulfilled') {
        lists.push(outcome.value);
        answered.push(provider);
      } else {
        errors.push(outcome.reason);
        failures.push({
          provider,
          code: QuiverError.isInstance(outcome.reason)
            ? outcome.reason.code
            : 'search_provider_error',
          message: errorMessage(outcome.reason),
          isRetryable: (outcome.reason as { isRetryable?: unknown })?.isRetryable === true,
        });
      }
    });
    if (answered.length === 0) throw combineFailures(errors, failures, toolName);

    // Interleave by rank (1st of each provider, then 2nd …) so no provider crowds out the others.
    const merged: T[] = [];
    const positions = new Map<string, number>();
    const longest = Math.max(...lists.map((list) => list.length));
    for (let rank = 0; rank < longest; rank += 1) {
      for (const list of lists) {
        const item = list[rank];
        if (item === undefined) continue;
        const key = keyOf(item);
        if (key === undefined) continue;
        const existing = positions.get(key);
        if (existing !== undefined) {
          merged[existing] = merge(merged[existing]!, item);
          continue;
        }
        positions.set(key, merged.length);
        merged.push(item);
      }
    }
    const response: SearchResponse<T> = {
      query: normalized,
      results: merged.slice(0, count),
      providers: answered,
      failures,
      cached: false,
    };
    // Partial answers are not cached: the failed provider may be back on the next call.
    if (failures.length === 0) cache?.set(cacheKey, response as SearchResponse<unknown>);
    return response;
  }

  return {
    providers: providers.map((provider) => provider.name),
    search(query, searchOptions = {}) {
      return run<SearchResult>(
        'web',
        query,
        searchOptions,
        providers,
        (provider, request, context) => provider.search(request, context),
        (item) => canonicalUrlKey(item.url),
        (kept, duplicate) => ({
          ...kept,
          snippet:
            kept.snippet.length >= duplicate.snippet.length ? kept.snippet : duplicate.snippet,
          ...(kept.publishedAt === undefined && duplicate.publishedAt !== undefined
            ? { publishedAt: duplicate.publishedAt }
            : {}),
        }),
      );
    },
    async searchImages(query, searchOptions = {}) {
      const capable = providers.filter((provider) => provider.searchImages !== undefined);
      if (capable.length === 0) {
        throw new ConfigurationError(
          `None of the configured search providers (${[...names].join(', ')}) supports image search. Configure SearXNG, Brave, Tavily, Serper or Bing.`,
        );
      }
      return run<ImageResult>(
        'images',
        query,
        searchOptions,
        capable,
        (provider, request, context) => provider.searchImages!(request, context),
        (item) => canonicalUrlKey(item.imageUrl),
        (kept, duplicate) => ({ ...duplicate, ...kept }),
      );
    },
    close: () => http.close(),
  };
}

function combineFailures(errors: unknown[], failures: ProviderFailure[], toolName: string): Error {
  // One provider: its own error, with its own status and Retry-After.
  if (errors.length === 1) return errors[0] as Error;
  const retryAfter = errors
    .map((error) => (error as { retryAfterMs?: unknown }).retryAfterMs)
    .filter((value): value is number => typeof value === 'number');
  return new ProviderError(
    `Every search provider failed: ${failures.map((failure) => `${failure.provider}: ${failure.message}`).join(' | ')}`,
    {
      provider: failures.map((failure) => failure.provider).join(','),
      toolName,
      code: SearchToolsErrorCodes.providerStatus,
      isRetryable: failures.some((failure) => failure.isRetryable),
      ...(retryAfter.length > 0 ? { retryAfterMs: Math.max(...retryAfter) } : {}),
    },
  );
}
