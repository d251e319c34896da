import { z } from 'zod';
import { joinUrl, requestProviderJson } from '../provider-request.js';
import { httpUrl, plainText } from '../plain-text.js';
import { normalizePublishedDate } from '../published-date.js';
import type { ImageResult, SearchProvider, SearchRequest, SearchResult } from '../search-types.js';

/** Options of {@link createTavilyProvider}. */
export interface TavilyProviderOptions {
  /** Tavily API key, `tvly-…` (env `TAVILY_API_KEY`). */
  apiKey: string;
  /** API base URL (default `https://api.tavily.com`). */
  baseUrl?: string;
  /** `basic` (default) or `advanced` (slower, costs more credits). */
  searchDepth?: 'basic' | 'advanced';
}

// Tavily `POST /search` response.
const responseSchema = z.object({
  query: z.string().optional(),
  results: z.array(
    z.object({
      title: z.string().nullish(),
      url: z.string().nullish(),
      content: z.string().nullish(),
      score: z.number().nullish(),
      published_date: z.string().nullish(),
    }),
  ),
  images: z
    .array(
      z.union([
        z.string(),
        z.object({ url: z.string().nullish(), description: z.string().nullish() }),
      ]),
    )
    .nullish(),
});

/**
 * Tavily's search API (`POST /search`, `Authorization: Bearer <key>`). Image search uses the same
 * endpoint with `include_images` and `include_image_descriptions`.
 *
 * @param options - API key, optional base URL and search depth.
 * @returns A provider for web and image search.
 * @example
 * const tavily = createTavilyProvider({ apiKey: process.env.TAVILY_API_KEY! });
 */
export function createTavilyProvider(options: TavilyProviderOptions): SearchProvider {
  const endpoint = joinUrl(options.baseUrl ?? 'https://api.tavily.com', 'search');
  const headers = { authorization: `Bearer ${options.apiKey}` };
  const body = (request: SearchRequest, images: boolean): Record<string, unknown> => ({
    query: request.query,
    max_results: Math.min(Math.max(request.count, 1), 20),
    search_depth: options.searchDepth ?? 'basic',
    topic: 'general',
    include_answer: false,
    include_raw_content: false,
    include_images: images,
    ...(images ? { include_image_descriptions: true } : {}),
    ...(request.freshness !== undefined ? { time_range: request.freshness } : {}),
  });
  return {
    name: 'tavily',
    trustedHosts: options.baseUrl === undefined ? [] : [new URL(options.baseUrl).hostname],
    async search(request, context) {
      const response = await requestProviderJson(
        context,
        {
          provider: 'tavily',
          url: endpoint,
          method: 'POST',
          headers,
          json: body(request, false),
          secrets: [options.apiKey],
        },
        responseSchema,
      );
      const results: SearchResult[] = [];
      for (const item of response.results) {
        const url = httpUrl(item.url);
        if (url === undefined) continue;
        const publishedAt = normalizePublishedDate(item.published_date, context.now);
        results.push({
          title: plainText(item.title) || url,
          url,
          snippet: plainText(item.content),
          ...(publishedAt !== undefined ? { publishedAt } : {}),
          source: 'tavily',
        });
      }
      return results.slice(0, request.count);
    },
    async searchImages(request, context) {
      const response = await requestProviderJson(
        context,
        {
          provider: 'tavily',
          url: endpoint,
          method: 'POST',
          headers,
          json: body(request, true),
          secrets: [options.apiKey],
        },
        responseSchema,
      );
      const results: ImageResult[] = [];
      for (const image of response.images ?? []) {
        const imageUrl = httpUrl(typeof image === 'string' ? image : image.url);
        if (imageUrl === undefined) continue;
        results.push({
          title: typeof image === 'string' ? '' : plainText(image.description),
          imageUrl,
          source: 'tavily',
        });
      }
      return results.slice(0, request.count);
    },
  };
}
