import type { HttpClient } from './http-client.js';

/** One web search result, the same shape whichever provider found it. */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
  /** ISO 8601 date(-time) when the provider gave a publication date. */
  publishedAt?: string;
  /** The provider that found it (`searxng`, `brave`, `tavily`, `serper`, `bing`, or a custom name). */
  source: string;
}

/** One image search result. */
export interface ImageResult {
  title: string;
  /** The image file. */
  imageUrl: string;
  thumbnailUrl?: string;
  /** The page the image appears on. */
  pageUrl?: string;
  width?: number;
  height?: number;
  source: string;
}

/** Time window a search can be restricted to. */
export type Freshness = 'day' | 'week' | 'month' | 'year';

/** What a provider is asked for. */
export interface SearchRequest {
  query: string;
  /** How many results to return (providers may return fewer). */
  count: number;
  /** Result language, e.g. `en`, `zh`. */
  language?: string;
  /** Two-letter country code, e.g. `us`, `cn`. */
  country?: string;
  safeSearch?: 'off' | 'moderate' | 'strict';
  freshness?: Freshness;
}

/** What a provider gets to make its requests with. */
export interface ProviderCallContext {
  /** The guarded HTTP client (SSRF guard, size cap, timeout). */
  http: HttpClient;
  signal?: AbortSignal;
  /** Time limit for one provider request in milliseconds. */
  timeoutMs: number;
  /** The tool making the call, for errors (`web_search` or `image_search`). */
  toolName: string;
  /** Current time in milliseconds (relative dates like "3 days ago" are resolved against it). */
  now: number;
}

/**
 * A search backend. Implement it to add a provider; the built-in ones are made by
 * `createSearxngProvider`, `createBraveProvider`, `createTavilyProvider`, `createSerperProvider`
 * and `createBingProvider`.
 */
export interface SearchProvider {
  /** Short stable name, used as `source` and in the cache key. */
  readonly name: string;
  /** Hosts of the provider's endpoints set by the operator; the SSRF guard lets them through. */
  readonly trustedHosts?: readonly string[];
  search(request: SearchRequest, context: ProviderCallContext): Promise<SearchResult[]>;
  /** Present when the provider can search images. */
  searchImages?(request: SearchRequest, context: ProviderCallContext): Promise<ImageResult[]>;
}
