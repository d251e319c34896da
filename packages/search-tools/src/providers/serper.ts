import { z } from 'zod';
import { joinUrl, requestProviderJson } from '../provider-request.js';
import { toImageResults, toWebResults } from '../provider-results.js';
import type { SearchProvider, SearchRequest } from '../search-types.js';

/** Options of {@link createSerperProvider}. */
export interface SerperProviderOptions {
  /** Serper API key (env `SERPER_API_KEY`). */
  apiKey: string;
  /** API base URL (default `https://google.serper.dev`). */
  baseUrl?: string;
}

// Serper `POST /search` response (Google results).
const searchSchema = z.object({
  organic: z
    .array(
      z.object({
        title: z.string().nullish(),
        link: z.string().nullish(),
        snippet: z.string().nullish(),
        date: z.string().nullish(),
        position: z.number().nullish(),
      }),
    )
    .optional(),
});
// Serper `POST /images` response.
const imagesSchema = z.object({
  images: z
    .array(
      z.object({
        title: z.string().nullish(),
        imageUrl: z.string().nullish(),
        imageWidth: z.number().nullish(),
        imageHeight: z.number().nullish(),
        thumbnailUrl: z.string().nullish(),
        link: z.string().nullish(),
      }),
    )
    .optional(),
});

const TBS = { day: 'qdr:d', week: 'qdr:w', month: 'qdr:m', year: 'qdr:y' } as const;

/**
 * Serper, a Google Search API (`POST /search`, `POST /images`, `X-API-KEY` header).
 *
 * @param options - API key and optional base URL.
 * @returns A provider for web and image search.
 * @example
 * const serper = createSerperProvider({ apiKey: process.env.SERPER_API_KEY! });
 */
export function createSerperProvider(options: SerperProviderOptions): SearchProvider {
  const base = options.baseUrl ?? 'https://google.serper.dev';
  const headers = { 'x-api-key': options.apiKey };
  const body = (request: SearchRequest): Record<string, unknown> => ({
    q: request.query,
    num: Math.min(Math.max(request.count, 1), 100),
    ...(request.country !== undefined ? { gl: request.country.toLowerCase() } : {}),
    ...(request.language !== undefined ? { hl: request.language } : {}),
    ...(request.freshness !== undefined ? { tbs: TBS[request.freshness] } : {}),
  });
  return {
    name: 'serper',
    trustedHosts: options.baseUrl === undefined ? [] : [new URL(options.baseUrl).hostname],
    async search(request, context) {
      const response = await requestProviderJson(
        context,
        {
          provider: 'serper',
          url: joinUrl(base, 'search'),
          method: 'POST',
          headers,
          json: body(request),
          secrets: [options.apiKey],
        },
        searchSchema,
      );
      return toWebResults(
        'serper',
        (response.organic ?? []).map((item) => ({
          url: item.link,
          title: item.title,
          snippet: item.snippet,
          published: [item.date],
        })),
        request.count,
        context.now,
      );
    },
    async searchImages(request, context) {
      const response = await requestProviderJson(
        context,
        {
          provider: 'serper',
          url: joinUrl(base, 'images'),
          method: 'POST',
          headers,
          json: body(request),
          secrets: [options.apiKey],
        },
        imagesSchema,
      );
      return toImageResults(
        'serper',
        (response.images ?? []).map((item) => ({
          imageUrl: item.imageUrl,
          title: item.title,
          thumbnailUrl: item.thumbnailUrl,
          pageUrl: item.link,
          width: item.imageWidth,
          height: item.imageHeight,
        })),
        request.count,
      );
    },
  };
}
