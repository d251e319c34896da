import { z } from 'zod';
import { joinUrl, requestProviderJson } from '../provider-request.js';
import { toImageResults, toWebResults } from '../provider-results.js';
import type { SearchProvider, SearchRequest } from '../search-types.js';

/** Options of {@link createBingProvider}. */
export interface BingProviderOptions {
  /** Bing Search v7 subscription key (env `BING_API_KEY`). */
  apiKey: string;
  /** API base URL (default `https://api.bing.microsoft.com`). */
  baseUrl?: string;
}

// Bing Web Search API v7 `SearchResponse` (the `webPages` answer).
const webSchema = z.object({
  _type: z.string().optional(),
  webPages: z
    .object({
      value: z.array(
        z.object({
          name: z.string().nullish(),
          url: z.string().nullish(),
          snippet: z.string().nullish(),
          datePublished: z.string().nullish(),
          dateLastCrawled: z.string().nullish(),
        }),
      ),
    })
    .optional(),
});
// Bing Image Search API v7 `Images` answer.
const imagesSchema = z.object({
  _type: z.string().optional(),
  value: z.array(
    z.object({
      name: z.string().nullish(),
      contentUrl: z.string().nullish(),
      thumbnailUrl: z.string().nullish(),
      hostPageUrl: z.string().nullish(),
      width: z.number().nullish(),
      height: z.number().nullish(),
    }),
  ),
});

const FRESHNESS = { day: 'Day', week: 'Week', month: 'Month', year: undefined } as const;
const SAFE_SEARCH = { off: 'Off', moderate: 'Moderate', strict: 'Strict' } as const;

/**
 * Bing Web and Image Search API v7 (`/v7.0/search`, `/v7.0/images/search`,
 * `Ocp-Apim-Subscription-Key` header). Microsoft retired these APIs for new customers in
 * August 2025; the provider stays for existing keys and compatible endpoints (set `baseUrl`).
 *
 * @param options - Subscription key and optional base URL.
 * @returns A provider for web and image search.
 * @example
 * const bing = createBingProvider({ apiKey: process.env.BING_API_KEY! });
 */
export function createBingProvider(options: BingProviderOptions): SearchProvider {
  const base = options.baseUrl ?? 'https://api.bing.microsoft.com';
  const headers = { 'ocp-apim-subscription-key': options.apiKey };
  const applyCommon = (url: URL, request: SearchRequest): void => {
    url.searchParams.set('q', request.query);
    if (request.language !== undefined && request.country !== undefined) {
      url.searchParams.set('mkt', `${request.language}-${request.country.toUpperCase()}`);
    } else if (request.language !== undefined) {
      url.searchParams.set('setLang', request.language);
    } else if (request.country !== undefined) {
      url.searchParams.set('cc', request.country.toUpperCase());
    }
    if (request.safeSearch !== undefined)
      url.searchParams.set('safeSearch', SAFE_SEARCH[request.safeSearch]);
    const freshness = request.freshness === undefined ? undefined : FRESHNESS[request.freshness];
    if (freshness !== undefined) url.searchParams.set('freshness', freshness);
  };
  return {
    name: 'bing',
    trustedHosts: options.baseUrl === undefined ? [] : [new URL(options.baseUrl).hostname],
    async search(request, context) {
      const url = new URL(joinUrl(base, 'v7.0/search'));
      applyCommon(url, request);
      url.searchParams.set('count', String(Math.min(request.count, 50)));
      url.searchParams.set('responseFilter', 'Webpages');
      const body = await requestProviderJson(
        context,
        { provider: 'bing', url: url.href, headers, secrets: [options.apiKey] },
        webSchema,
      );
      return toWebResults(
        'bing',
        (body.webPages?.value ?? []).map((item) => ({
          url: item.url,
          title: item.name,
          snippet: item.snippet,
          published: [item.datePublished],
        })),
        request.count,
        context.now,
      );
    },
    async searchImages(request, context) {
      const url = new URL(joinUrl(base, 'v7.0/images/search'));
      applyCommon(url, request);
      url.searchParams.set('count', String(Math.min(request.count, 150)));
      const body = await requestProviderJson(
        context,
        { provider: 'bing', url: url.href, headers, secrets: [options.apiKey] },
        imagesSchema,
      );
      return toImageResults(
        'bing',
        body.value.map((item) => ({
          imageUrl: item.contentUrl,
          title: item.name,
          thumbnailUrl: item.thumbnailUrl,
          pageUrl: item.hostPageUrl,
          width: item.width,
          height: item.height,
        })),
        request.count,
      );
    },
  };
}
