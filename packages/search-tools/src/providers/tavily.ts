import { z } from 'zod';
import { joinUrl, requestProviderJson } from '../provider-request.js';
import { toImageResults, toWebResults } from '../provider-results.js';
import type { SearchProvider, SearchRequest } from '../search-types.js';

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
      return toWebResults(
        'tavily',
        response.results.map((item) => ({
          url: item.url,
          title: item.title,
          snippet: item.content,
          published: [item.published_date],
        })),
        request.count,
        context.now,
      );
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
      return toImageResults(
        'tavily',
        (response.images ?? []).map((image) =>
          typeof image === 'string'
            ? { imageUrl: image, title: '' }
            : { imageUrl: image.url, title: image.description },
        ),
        request.count,
      );
    },
  };
}
