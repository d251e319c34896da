import type { DocumentParser } from '@quiver/core';
import { errorMessage } from '@quiver/core';
import { decodeBody } from './charset.js';
import {
  classifyContent,
  documentFormatOf,
  isSkippableMediaType,
  mediaType,
} from './content-kind.js';
import { SearchToolsErrorCodes, WebFetchError } from './errors.js';
import type { LookupFunction } from './guarded-dispatcher.js';
import { type ExtractedLink, extractHtmlContent } from './html-content.js';
import {
  createHttpClient,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_REDIRECTS,
  DEFAULT_TIMEOUT_MS,
  type HttpClient,
} from './http-client.js';
import { createNetworkPolicy, type NetworkPolicy } from './network-policy.js';
import { isTransientStatus, parseRetryAfter } from './retry-after.js';
import { loadModule } from './load-module.js';
import type * as DocParser from '@quiver/doc-parser';

type DocParserModule = typeof DocParser;

/** Options of {@link createWebExtractor}. */
export interface WebExtractorOptions {
  /** Network policy (default: public addresses only, plus `allow`). */
  policy?: NetworkPolicy;
  /** Shortcut for `createNetworkPolicy({ allow })` when no `policy` is given. */
  allow?: string[];
  /** An HTTP client to reuse (its policy is then the one enforced). */
  httpClient?: HttpClient;
  /** Resolver for connections (tests, custom DNS). Ignored when `httpClient` is given. */
  lookup?: LookupFunction;
  /**
   * Parser for PDF, DOCX, PPTX, XLSX and CSV responses (any core `DocumentParser`). Default:
   * `@quiver/doc-parser`, loaded on the first document (no disk cache). `false` refuses
   * documents with `unsupported_content`.
   */
  documentParser?: DocumentParser | false;
  /** Body size cap in bytes (default 5 MiB). Longer HTML/text is cut; longer documents fail. */
  maxBytes?: number;
  /** Time limit for the whole fetch in milliseconds (default 30 000). */
  timeoutMs?: number;
  /** Redirects to follow (default 5). */
  maxRedirects?: number;
  /** `User-Agent` sent with requests. */
  userAgent?: string;
  /** Tool name put on errors (default `web_extractor`). */
  toolName?: string;
}

/** Per-call options of {@link WebExtractor.extract}. */
export interface ExtractOptions {
  signal?: AbortSignal;
  maxBytes?: number;
  timeoutMs?: number;
  /** Keep links inline as `[text](url)` in `text` (default false). */
  inlineLinks?: boolean;
}

/** A fetched page reduced to its content. */
export interface ExtractedPage {
  /** The URL asked for. */
  url: string;
  /** The URL the content came from, after redirects. */
  finalUrl: string;
  /** `<link rel="canonical">`, when the page declares one. */
  canonicalUrl?: string;
  title: string;
  /** Markdown-like text of the main content. */
  text: string;
  /** Outgoing links of the main content (HTML only). */
  links: ExtractedLink[];
  /** `html`, `text`, `markdown`, `json`, `xml`, or the document format (`pdf`, `docx` …). */
  format: string;
  /** The response's media type. */
  mediaType: string;
  /** The charset the text was decoded with (HTML and text only). */
  charset?: string;
  description?: string;
  language?: string;
  publishedAt?: string;
  /** True when the body was longer than the size cap and only its start was read. */
  truncated: boolean;
  /** URLs that redirected, in order. */
  redirects: string[];
  statusCode: number;
}

/** Fetches pages and documents and returns their main content. */
export interface WebExtractor {
  /**
   * Fetch `url` through the SSRF guard and extract its content.
   *
   * @throws {BlockedUrlError} when the URL, a redirect or a resolved address is refused.
   * @throws {WebFetchError} on invalid URLs, redirect loops, timeouts, HTTP errors (429/5xx are
   *   retryable), binary or unsupported content, and documents larger than the cap.
   */
  extract(url: string, options?: ExtractOptions): Promise<ExtractedPage>;
  /** Close connections (only those of an HTTP client this extractor created). */
  close(): Promise<void>;
}

const ACCEPT =
  'text/html,application/xhtml+xml;q=0.9,text/plain;q=0.8,application/pdf;q=0.8,application/vnd.openxmlformats-officedocument.wordprocessingml.document;q=0.8,*/*;q=0.5';

/**
 * Create a web extractor: fetches a URL (SSRF guard on every hop, size cap, total timeout,
 * bounded redirects), detects the charset (header, BOM, `<meta>`, detection; GBK and other legacy
 * encodings through iconv-lite), and turns HTML into Markdown-like main content with cheerio, or
 * hands PDF/DOCX/PPTX/XLSX/CSV to a document parser.
 *
 * @param options - Network policy, document parser and limits.
 * @returns An extractor; `close()` it when done.
 * @example
 * const extractor = createWebExtractor({ documentParser: myParser });
 * const page = await extractor.extract('https://example.com/article');
 * console.log(page.title, page.text.slice(0, 200));
 * await extractor.close();
 */
export function createWebExtractor(options: WebExtractorOptions = {}): WebExtractor {
  const policy = options.policy ?? createNetworkPolicy({ allow: options.allow ?? [] });
  const ownsClient = options.httpClient === undefined;
  const client =
    options.httpClient ??
    createHttpClient({
      policy,
      ...(options.lookup !== undefined ? { lookup: options.lookup } : {}),
      ...(options.userAgent !== undefined ? { userAgent: options.userAgent } : {}),
    });
  const toolName = options.toolName ?? 'web_extractor';
  const documentParser = options.documentParser;

  return {
    async extract(url, callOptions = {}) {
      const maxBytes = callOptions.maxBytes ?? options.maxBytes ?? DEFAULT_MAX_BYTES;
      const response = await client.fetch(url, {
        headers: { accept: ACCEPT, 'accept-language': 'en,zh;q=0.9,*;q=0.5' },
        maxBytes,
        timeoutMs: callOptions.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        maxRedirects: options.maxRedirects ?? DEFAULT_MAX_REDIRECTS,
        toolName,
        ...(callOptions.signal !== undefined ? { signal: callOptions.signal } : {}),
        // Don't download what would only end in an error: images, audio, video, and documents
        // whose declared length is over the cap (a cut document cannot be parsed).
        shouldReadBody: (head) => {
          if (head.status < 200 || head.status >= 300) return true;
          const type = mediaType(head.headers['content-type']);
          const length = Number(head.headers['content-length'] ?? Number.NaN);
          if (documentFormatOf(type) !== undefined && length > maxBytes) return false;
          return !isSkippableMediaType(type);
        },
      });
      const type = mediaType(response.headers['content-type']);
      if (response.status < 200 || response.status >= 300) {
        const transient = isTransientStatus(response.status);
        const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
        throw new WebFetchError(
          `${response.url} answered HTTP ${response.status}${transient ? ' (a temporary failure; try again later)' : ''}.`,
          {
            code: SearchToolsErrorCodes.httpStatus,
            url: response.url,
            toolName,
            statusCode: response.status,
            isRetryable: transient,
            ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
          },
        );
      }
      const base = {
        url,
        finalUrl: response.url,
        mediaType: type,
        truncated: response.truncated,
        redirects: response.redirects,
        statusCode: response.status,
      };
      const skippedDocument = response.bodySkipped ? documentFormatOf(type) : undefined;
      if (skippedDocument !== undefined) {
        throw new WebFetchError(
          `${response.url} is a ${skippedDocument.toUpperCase()} document of ${response.headers['content-length']} bytes, over the ${maxBytes}-byte limit; it was not downloaded. Raise maxBytes to read it.`,
          { code: SearchToolsErrorCodes.contentTooLarge, url: response.url, toolName },
        );
      }
      const kind = response.bodySkipped
        ? ({ kind: 'binary', mimeType: type } as const)
        : classifyContent(response.headers['content-type'], response.body, response.url);

      switch (kind.kind) {
        case 'html': {
          const decoded = decodeBody(response.body, response.headers['content-type']);
          const content = extractHtmlContent(decoded.text, {
            url: response.url,
            ...(callOptions.inlineLinks !== undefined
              ? { inlineLinks: callOptions.inlineLinks }
              : {}),
          });
          return { ...base, ...content, format: 'html', charset: decoded.charset };
        }
        case 'text': {
          const decoded = decodeBody(response.body, response.headers['content-type']);
          return {
            ...base,
            title: titleFromUrl(response.url),
            text: decoded.text.trim(),
            links: [],
            format: kind.format,
            charset: decoded.charset,
          };
        }
        case 'document': {
          if (documentParser === false) {
            throw new WebFetchError(
              `${response.url} is a ${kind.format.toUpperCase()} document, and document parsing is turned off for this web_extractor (documentParser: false).`,
              { code: SearchToolsErrorCodes.unsupportedContent, url: response.url, toolName },
            );
          }
          if (response.truncated) {
            throw new WebFetchError(
              `${response.url} is a ${kind.format.toUpperCase()} document larger than the ${maxBytes}-byte limit; a cut document cannot be parsed. Raise maxBytes to read it.`,
              { code: SearchToolsErrorCodes.contentTooLarge, url: response.url, toolName },
            );
          }
          let parsed;
          try {
            const parser = documentParser ?? (await loadDefaultParser());
            parsed = await parser.parse(response.body, {
              filename: kind.filename.includes('.')
                ? kind.filename
                : `${kind.filename}.${kind.format}`,
              ...(callOptions.signal !== undefined ? { signal: callOptions.signal } : {}),
            });
          } catch (error) {
            if (callOptions.signal?.aborted) throw error;
            throw new WebFetchError(
              `Could not parse the ${kind.format.toUpperCase()} document at ${response.url}: ${errorMessage(error)}`,
              { code: SearchToolsErrorCodes.unsupportedContent, url: response.url, toolName },
              { cause: error },
            );
          }
          return {
            ...base,
            title: parsed.title || titleFromUrl(response.url),
            text: parsed.text,
            links: [],
            format: parsed.format,
          };
        }
        case 'binary':
          throw new WebFetchError(
            `${response.url} returned binary content (${kind.mimeType}), not a web page or document; web_extractor only reads HTML, text and documents (PDF, DOCX, PPTX, XLSX, CSV).`,
            { code: SearchToolsErrorCodes.unsupportedContent, url: response.url, toolName },
          );
      }
    },
    async close() {
      if (ownsClient) await client.close();
    },
  };
}

let defaultParser: Promise<DocumentParser> | undefined;

/**
 * `@quiver/doc-parser`, imported on first use so that pages-only users never load PDF.js. The
 * download already went through the SSRF guard and the size cap; the parser only sees bytes.
 */
function loadDefaultParser(): Promise<DocumentParser> {
  defaultParser ??= loadModule<DocParserModule>('@quiver/doc-parser').then(
    ({ QuiverDocumentParser }) => new QuiverDocumentParser({ cacheDir: false, timeoutMs: 60_000 }),
    (error: unknown) => {
      defaultParser = undefined;
      throw error;
    },
  );
  return defaultParser;
}

function titleFromUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const last = parsed.pathname.split('/').filter(Boolean).pop();
    return last === undefined ? parsed.hostname : decodeURIComponent(last);
  } catch {
    return url;
  }
}
