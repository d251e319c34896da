import { z } from 'zod';
import { joinUrl, requestProviderJson } from '../provider-request.js';
import { toImageResults, toWebResults } from '../provider-results.js';
import type { SearchProvider } from '../search-types.js';

/** Options of {@link createBraveProvider}. */
export interface BraveProviderOptions {
  /** Brave Search API subscription token (env `BRAVE_API_KEY`). */
  apiKey: string;
  /** API base URL (default `https://api.search.brave.com`); set it for a proxy or a test server. */
  baseUrl?: string;
}

// Brave Search API `WebSearchApiResponse` (documented fields only).
const webSchema = z.object({
  type: z.string().optional(),
  web: z
    .object({
      results: z.array(
        z.object({
          title: z.string().nullish(),
          url: z.string().nullish(),
          description: z.string().nullish(),
          age: z.string().nullish(),
          page_age: z.string().nullish(),
        }),
      ),
    })
    .optional(),
});
// Brave Search API `ImageSearchApiResponse`.
const imageSchema = z.object({
  type: z.string().optional(),
  results: z.array(
    z.object({
      title: z.string().nullish(),
      url: z.string().nullish(),
      thumbnail: z
        .object({
          src: z.string().nullish(),
          width: z.number().nullish(),
          height: z.number().nullish(),
        })
        .nullish(),
      properties: z
        .object({
          url: z.string().nullish(),
          width: z.number().nullish(),
          height: z.number().nullish(),
        })
        .nullish(),
    }),
  ),
});

const FRESHNESS = { day: 'pd', week: 'pw', month: 'pm', year: 'py' } as const;

/**
 * Brave Search API (`/res/v1/web/search`, `/res/v1/images/search`), authenticated with the
 * `X-Subscription-Token` header.
 *
 * @param options - API key and optional base URL.
 * @returns A provider for web and image search.
 * @example
 * const brave = createBraveProvider({ apiKey: process.env.BRAVE_API_KEY! });
 */
export function createBraveProvider(options: BraveProviderOptions): SearchProvider {
  const base = options.baseUrl ?? 'https://api.search.brave.com';
  const headers = { 'x-subscription-token': options.apiKey };
  return {
    name: 'brave',
    trustedHosts: options.baseUrl === undefined ? [] : [new URL(options.baseUrl).hostname],
    async search(request, context) {
      const url = new URL(joinUrl(base, 'res/v1/web/search'));
      url.searchParams.set('q', request.query);
      url.searchParams.set('count', String(Math.min(request.count, 20)));
      if (request.language !== undefined) url.searchParams.set('search_lang', request.language);
      if (request.country !== undefined)
        url.searchParams.set('country', request.country.toUpperCase());
      if (request.safeSearch !== undefined) url.searchParams.set('safesearch', request.safeSearch);
      if (request.freshness !== undefined)
        url.searchParams.set('freshness', FRESHNESS[request.freshness]);
      const body = await requestProviderJson(
        context,
        { provider: 'brave', url: url.href, headers, secrets: [options.apiKey] },
        webSchema,
      );
      return toWebResults(
        'brave',
        (body.web?.results ?? []).map((item) => ({
          url: item.url,
          title: item.title,
          snippet: item.description,
          published: [item.page_age, item.age],
        })),
        request.count,
        context.now,
      );
    },
    async searchImages(request, context) {
      const url = new URL(joinUrl(base, 'res/v1/images/search'));
      url.searchParams.set('q', request.query);
      url.searchParams.set('count', String(Math.min(request.count, 100)));
      if (request.language !== undefined) url.searchParams.set('search_lang', request.language);
      if (request.country !== undefined)
        url.searchParams.set('country', request.country.toUpperCase());
      // The image endpoint knows only `off` and `strict`.
      if (request.safeSearch !== undefined)
        url.searchParams.set('safesearch', request.safeSearch === 'off' ? 'off' : 'strict');
      const body = await requestProviderJson(
        context,
        { provider: 'brave', url: url.href, headers, secrets: [options.apiKey] },
        imageSchema,
      );
      return toImageResults(
        'brave',
        body.results.map((item) => ({
          imageUrl: item.properties?.url,
          title: item.title,
          thumbnailUrl: item.thumbnail?.src,
          pageUrl: item.url,
          width: item.properties?.width,
          height: item.properties?.height,
        })),
        request.count,
      );
    },
  };
}
