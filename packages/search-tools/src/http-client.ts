import { errorMessage } from '@quiver/core';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { type Dispatcher, request } from 'undici';
import { BlockedUrlError, SearchToolsErrorCodes, WebFetchError } from './errors.js';
import { createGuardedDispatcher, type LookupFunction } from './guarded-dispatcher.js';
import { createNetworkPolicy, type NetworkPolicy } from './network-policy.js';

/** Default cap on a response body: 5 MiB. */
export const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
/** Default time limit for a whole fetch (every redirect hop and the body): 30 s. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** Default number of redirects followed. */
export const DEFAULT_MAX_REDIRECTS = 5;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const RETRYABLE_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
// Headers that may follow a redirect to another origin; everything else (API keys,
// Authorization, cookies) stays with the origin it was meant for.
const CROSS_ORIGIN_SAFE_HEADERS = new Set(['accept', 'accept-language', 'user-agent']);

/** Options of {@link createHttpClient}. */
export interface HttpClientOptions {
  /** What may be reached (default: public addresses only). */
  policy?: NetworkPolicy;
  /** Resolver used when connecting (default `dns.lookup`); ignored when `dispatcher` is given. */
  lookup?: LookupFunction;
  /**
   * A dispatcher to send requests through. Defaults to a guarded dispatcher built from `policy`.
   * Passing your own one replaces the connection-time SSRF check: only do it with a dispatcher
   * made by `createGuardedDispatcher`.
   */
  dispatcher?: Dispatcher;
  /** `User-Agent` header (default `QuiverBot/0.1 (+https://github.com/quiver)`). */
  userAgent?: string;
}

/** What the server said before the body: passed to `shouldReadBody`. */
export interface ResponseHead {
  url: string;
  status: number;
  headers: Record<string, string>;
}

/** Options of one {@link HttpClient.fetch}. */
export interface HttpRequestOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Read at most this many (decoded) body bytes; the rest is never downloaded. Default 5 MiB. */
  maxBytes?: number;
  /** Time limit for the whole fetch, redirects and body included. Default 30 000 ms. */
  timeoutMs?: number;
  /** Redirects to follow before failing with `too_many_redirects`. Default 5; 0 disables. */
  maxRedirects?: number;
  signal?: AbortSignal;
  /** Tool name put on errors (default `web_fetch`). */
  toolName?: string;
  /** Decide from the status and headers whether to download the body (default: always). */
  shouldReadBody?: (head: ResponseHead) => boolean;
}

/** A fetched response. `body` holds at most `maxBytes` bytes. */
export interface HttpResponse extends ResponseHead {
  /** The decoded (decompressed) body, cut at `maxBytes`. */
  body: Uint8Array;
  /** True when the body was longer than `maxBytes` and was cut. */
  truncated: boolean;
  /** True when `shouldReadBody` declined the body. */
  bodySkipped: boolean;
  /** URLs that redirected, in order (the final URL is `url`). */
  redirects: string[];
}

/** Fetches URLs through the SSRF guard with a size cap, a total timeout and bounded redirects. */
export interface HttpClient {
  readonly policy: NetworkPolicy;
  /**
   * Fetch `url`, following redirects (each hop is checked by the policy and connects through the
   * guarded dispatcher). Any HTTP status is returned as is, except redirects which are followed.
   *
   * @throws {WebFetchError} `invalid_url`, `too_many_redirects`, `redirect_loop`, `fetch_timeout`, `network_error`.
   * @throws {BlockedUrlError} when the URL, a redirect target or a resolved address is refused.
   */
  fetch(url: string | URL, options?: HttpRequestOptions): Promise<HttpResponse>;
  /** Close the connections this client opened (only when it created its own dispatcher). */
  close(): Promise<void>;
}

/**
 * Create an HTTP client for web tools: every request and redirect hop goes through the SSRF
 * guard, bodies are read up to a cap only, and one deadline covers the whole exchange.
 *
 * @param options - Policy, resolver, dispatcher, user agent.
 * @returns A client; `close()` it when done.
 * @example
 * const client = createHttpClient({ policy: createNetworkPolicy() });
 * const response = await client.fetch('https://example.com', { maxBytes: 1_000_000, timeoutMs: 10_000 });
 * await client.close();
 */
export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const policy = options.policy ?? createNetworkPolicy();
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher =
    options.dispatcher ??
    createGuardedDispatcher({
      policy,
      ...(options.lookup !== undefined ? { lookup: options.lookup } : {}),
    });
  const userAgent = options.userAgent ?? 'QuiverBot/0.1 (+https://github.com/quiver)';

  return {
    policy,
    fetch: (url, requestOptions = {}) =>
      fetchGuarded(policy, dispatcher, userAgent, url, requestOptions),
    async close() {
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}

async function fetchGuarded(
  policy: NetworkPolicy,
  dispatcher: Dispatcher,
  userAgent: string,
  input: string | URL,
  options: HttpRequestOptions,
): Promise<HttpResponse> {
  const toolName = options.toolName ?? 'web_fetch';
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  let url = policy.checkUrl(input);
  options.signal?.throwIfAborted();

  const controller = new AbortController();
  const timeoutReason = new Error('fetch deadline reached');
  const timer = setTimeout(() => controller.abort(timeoutReason), timeoutMs);
  const onAbort = (): void => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });

  let method = options.method ?? 'GET';
  let body = options.body;
  let headers: Record<string, string> = {
    'user-agent': userAgent,
    'accept-encoding': 'gzip, deflate, br',
    ...lowerCaseKeys(options.headers ?? {}),
  };
  const redirects: string[] = [];
  const visited = new Set<string>([withoutHash(url)]);

  try {
    for (;;) {
      const response = await request(url, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        dispatcher,
        signal: controller.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const head: ResponseHead = {
        url: url.href,
        status: response.statusCode,
        headers: flattenHeaders(response.headers),
      };

      if (REDIRECT_STATUSES.has(response.statusCode) && head.headers.location !== undefined) {
        discard(response.body);
        if (redirects.length >= maxRedirects) {
          throw new WebFetchError(
            `Stopped after ${maxRedirects} redirects (last at ${url.href}). The page redirects too often; try the final address directly.`,
            { code: SearchToolsErrorCodes.tooManyRedirects, url: url.href, toolName },
          );
        }
        let next: URL;
        try {
          next = new URL(head.headers.location, url);
        } catch (error) {
          throw new WebFetchError(
            `${url.href} redirected to an invalid URL "${head.headers.location.slice(0, 200)}".`,
            { code: SearchToolsErrorCodes.invalidUrl, url: url.href, toolName },
            { cause: error },
          );
        }
        // Each hop is checked like the first request (scheme, literal address); its socket
        // is checked again by the guarded dispatcher.
        next = policy.checkUrl(next);
        if (visited.has(withoutHash(next))) {
          throw new WebFetchError(
            `Redirect loop: ${url.href} redirects back to ${next.href}, which was already visited.`,
            { code: SearchToolsErrorCodes.redirectLoop, url: url.href, toolName },
          );
        }
        visited.add(withoutHash(next));
        redirects.push(url.href);
        if (
          response.statusCode === 303 ||
          ((response.statusCode === 301 || response.statusCode === 302) && method === 'POST')
        ) {
          method = 'GET';
          body = undefined;
          delete headers['content-type'];
        }
        if (next.origin !== url.origin) {
          headers = Object.fromEntries(
            Object.entries(headers).filter(([key]) => CROSS_ORIGIN_SAFE_HEADERS.has(key)),
          );
          headers['accept-encoding'] = 'gzip, deflate, br';
        }
        url = next;
        continue;
      }

      if (options.shouldReadBody !== undefined && !options.shouldReadBody(head)) {
        discard(response.body);
        return { ...head, body: new Uint8Array(0), truncated: false, bodySkipped: true, redirects };
      }
      const { bytes, truncated } = await readCapped(
        response.body,
        head.headers['content-encoding'],
        maxBytes,
      );
      return { ...head, body: bytes, truncated, bodySkipped: false, redirects };
    }
  } catch (error) {
    if (controller.signal.aborted && controller.signal.reason === timeoutReason) {
      throw new WebFetchError(
        `Fetching ${url.href} did not finish within ${timeoutMs} ms (the server is slow or trickles its response). Try again later or another source.`,
        { code: SearchToolsErrorCodes.fetchTimeout, url: url.href, toolName, isRetryable: true },
        { cause: error },
      );
    }
    if (options.signal?.aborted) throw options.signal.reason ?? error;
    throw toFetchError(error, url, toolName);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

async function readCapped(
  body: Readable,
  encoding: string | undefined,
  maxBytes: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const decoder = decompressor(encoding);
  const stream: Readable = decoder === undefined ? body : body.pipe(decoder);
  if (decoder !== undefined) body.on('error', (error) => decoder.destroy(error));
  const chunks: Buffer[] = [];
  let total = 0;
  let truncated = false;
  try {
    for await (const chunk of stream) {
      const buffer = chunk as Buffer;
      if (total + buffer.length > maxBytes) {
        chunks.push(buffer.subarray(0, maxBytes - total));
        total = maxBytes;
        truncated = true;
        break;
      }
      chunks.push(buffer);
      total += buffer.length;
    }
  } finally {
    // Stop the download: whatever the server still sends is never read.
    if (truncated || !body.readableEnded) discard(body);
    if (decoder !== undefined) discard(decoder);
  }
  return { bytes: new Uint8Array(Buffer.concat(chunks, total)), truncated };
}

/** Destroy a stream we no longer read; the abort error it then emits is expected, not a failure. */
function discard(stream: Readable): void {
  stream.on('error', () => {});
  stream.destroy();
}

function decompressor(
  encoding: string | undefined,
): (NodeJS.ReadWriteStream & Readable) | undefined {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      return undefined;
  }
}

function toFetchError(error: unknown, url: URL, toolName: string): Error {
  const blocked = findInCauses(
    error,
    (item): item is BlockedUrlError => item instanceof BlockedUrlError,
  );
  if (blocked !== undefined) return blocked;
  if (error instanceof WebFetchError) return error;
  const code = findInCauses(
    error,
    (item): item is { code: string } => typeof (item as { code?: unknown }).code === 'string',
  )?.code;
  if (code === 'ENOTFOUND') {
    return new WebFetchError(
      `Host ${url.hostname} was not found (DNS lookup failed). Check the address.`,
      {
        code: SearchToolsErrorCodes.network,
        url: url.href,
        toolName,
      },
      { cause: error },
    );
  }
  return new WebFetchError(
    `Could not fetch ${url.href}: ${errorMessage(error)}${code !== undefined ? ` (${code})` : ''}.`,
    {
      code: SearchToolsErrorCodes.network,
      url: url.href,
      toolName,
      isRetryable: code === undefined || RETRYABLE_NETWORK_CODES.has(code),
    },
    { cause: error },
  );
}

function findInCauses<T>(
  error: unknown,
  predicate: (item: object) => item is T & object,
): T | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth += 1) {
    if (predicate(current)) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function flattenHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    flat[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([key, value]) => [key.toLowerCase(), value]),
  );
}

function withoutHash(url: URL): string {
  const copy = new URL(url.href);
  copy.hash = '';
  return copy.href;
}
