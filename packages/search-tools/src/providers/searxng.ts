import { z } from 'zod';
import { joinUrl, requestProviderJson } from '../provider-request.js';
import { toImageResults, toWebResults } from '../provider-results.js';
import { httpUrl } from '../plain-text.js';
import type { SearchProvider, SearchRequest } from '../search-types.js';

/** Options of {@link createSearxngProvider}. */
export interface SearxngProviderOptions {
  /** Base URL of the SearXNG instance, e.g. `http://localhost:8080` (env `SEARXNG_URL`). */
  baseUrl: string;
  /** Comma-separated engines to use (default: the instance's defaults). */
  engines?: string;
  /** Extra headers, e.g. an `Authorization` header for an instance behind a proxy. */
  headers?: Record<string, string>;
}

// SearXNG's JSON output format (`format=json`): the documented `results` entries.
const resultSchema = z.object({
  url: z.string().nullish(),
  title: z.string().nullish(),
  content: z.string().nullish(),
  publishedDate: z.string().nullish(),
  img_src: z.string().nullish(),
  thumbnail_src: z.string().nullish(),
  thumbnail: z.string().nullish(),
  resolution: z.string().nullish(),
});
const responseSchema = z.object({ query: z.string().optional(), results: z.array(resultSchema) });

const TIME_RANGE = { day: 'day', week: 'week', month: 'month', year: 'year' } as const;
const SAFE_SEARCH = { off: '0', moderate: '1', strict: '2' } as const;

/**
 * SearXNG, the self-hosted metasearch engine, through its JSON API (`/search?format=json`; the
 * instance must list `json` under `search.formats` in settings.yml). No key needed. The
 * configured base URL is trusted by the SSRF guard (it is usually on a private network).
 *
 * @param options - Instance URL and engines.
 * @returns A provider for web and image search.
 * @example
 * const searxng = createSearxngProvider({ baseUrl: 'http://localhost:8080' });
 */
export function createSearxngProvider(options: SearxngProviderOptions): SearchProvider {
  const base = new URL(options.baseUrl);
  const buildUrl = (request: SearchRequest, category: 'general' | 'images'): string => {
    const url = new URL(joinUrl(base.href, 'search'));
    url.searchParams.set('q', request.query);
    url.searchParams.set('format', 'json');
    url.searchParams.set('pageno', '1');
    url.searchParams.set('categories', category);
    if (options.engines !== undefined) url.searchParams.set('engines', options.engines);
    if (request.language !== undefined) url.searchParams.set('language', request.language);
    if (request.safeSearch !== undefined)
      url.searchParams.set('safesearch', SAFE_SEARCH[request.safeSearch]);
    if (request.freshness !== undefined)
      url.searchParams.set('time_range', TIME_RANGE[request.freshness]);
    return url.href;
  };
  return {
    name: 'searxng',
    trustedHosts: [base.hostname],
    async search(request, context) {
      const body = await requestProviderJson(
        context,
        {
          provider: 'searxng',
          url: buildUrl(request, 'general'),
          ...(options.headers ? { headers: options.headers } : {}),
        },
        responseSchema,
      );
      return toWebResults(
        'searxng',
        body.results.map((item) => ({
          url: item.url,
          title: item.title,
          snippet: item.content,
          published: [item.publishedDate],
        })),
        request.count,
        context.now,
      );
    },
    async searchImages(request, context) {
      const body = await requestProviderJson(
        context,
        {
          provider: 'searxng',
          url: buildUrl(request, 'images'),
          ...(options.headers ? { headers: options.headers } : {}),
        },
        responseSchema,
      );
      return toImageResults(
        'searxng',
        body.results.map((item) => {
          const [width, height] = (item.resolution ?? '').split(/\s*[x×]\s*/);
          return {
            imageUrl: item.img_src,
            title: item.title,
            thumbnailUrl: httpUrl(item.thumbnail_src) ?? item.thumbnail,
            pageUrl: item.url,
            width,
            height,
          };
        }),
        request.count,
      );
    },
  };
}
