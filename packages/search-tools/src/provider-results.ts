import { httpUrl, plainText, positiveNumber } from './plain-text.js';
import { normalizePublishedDate } from './published-date.js';
import type { ImageResult, SearchResult } from './search-types.js';

/** One web result as a provider's response has it, before normalisation. @internal */
export interface RawWebResult {
  url: unknown;
  title: unknown;
  snippet: unknown;
  /** Publication date candidates, best first; the first one that parses wins. */
  published?: unknown[];
}

/** One image result as a provider's response has it, before normalisation. @internal */
export interface RawImageResult {
  imageUrl: unknown;
  title: unknown;
  thumbnailUrl?: unknown;
  pageUrl?: unknown;
  width?: unknown;
  height?: unknown;
}

/**
 * Normalise a provider's web results: items without an http(s) URL are dropped, titles and
 * snippets become plain text (an empty title falls back to the URL), dates become ISO 8601.
 * @internal
 */
export function toWebResults(
  source: string,
  items: Iterable<RawWebResult>,
  count: number,
  now: number,
): SearchResult[] {
  const results: SearchResult[] = [];
  for (const item of items) {
    const url = httpUrl(item.url);
    if (url === undefined) continue;
    let publishedAt: string | undefined;
    for (const candidate of item.published ?? []) {
      publishedAt = normalizePublishedDate(candidate, now);
      if (publishedAt !== undefined) break;
    }
    results.push({
      title: plainText(item.title) || url,
      url,
      snippet: plainText(item.snippet),
      ...(publishedAt !== undefined ? { publishedAt } : {}),
      source,
    });
  }
  return results.slice(0, count);
}

/**
 * Normalise a provider's image results: items without an http(s) image URL are dropped, optional
 * links and sizes are kept only when valid.
 * @internal
 */
export function toImageResults(
  source: string,
  items: Iterable<RawImageResult>,
  count: number,
): ImageResult[] {
  const results: ImageResult[] = [];
  for (const item of items) {
    const imageUrl = httpUrl(item.imageUrl);
    if (imageUrl === undefined) continue;
    const thumbnailUrl = httpUrl(item.thumbnailUrl);
    const pageUrl = httpUrl(item.pageUrl);
    const width = positiveNumber(item.width);
    const height = positiveNumber(item.height);
    results.push({
      title: plainText(item.title),
      imageUrl,
      ...(thumbnailUrl !== undefined ? { thumbnailUrl } : {}),
      ...(pageUrl !== undefined ? { pageUrl } : {}),
      ...(width !== undefined ? { width } : {}),
      ...(height !== undefined ? { height } : {}),
      source,
    });
  }
  return results.slice(0, count);
}
