import { QuiverError, ToolExecutionError } from '@quiver/core';

/** Stable error codes raised by `@quiver/search-tools`. */
export const SearchToolsErrorCodes = {
  /** The SSRF guard refused a URL or an address (private network, bad scheme). */
  urlBlocked: 'url_blocked',
  /** The text given as a URL is not an absolute http(s) URL. */
  invalidUrl: 'invalid_url',
  /** More redirects than allowed. */
  tooManyRedirects: 'too_many_redirects',
  /** A redirect led back to a URL already visited. */
  redirectLoop: 'redirect_loop',
  /** The whole fetch (every hop and the body) took longer than its time limit. */
  fetchTimeout: 'fetch_timeout',
  /** The server answered with an HTTP error status. */
  httpStatus: 'http_status',
  /** The connection failed (refused, reset, DNS failure). */
  network: 'network_error',
  /** The response is of a type the tool cannot turn into text (images, archives, executables). */
  unsupportedContent: 'unsupported_content',
  /** A document was larger than the size cap and cannot be parsed from a prefix. */
  contentTooLarge: 'content_too_large',
  /** A search provider answered with an error status. */
  providerStatus: 'search_provider_error',
  /** A search provider answered with a body that does not follow its documented format. */
  providerResponse: 'search_provider_bad_response',
  /** The images API refused or failed a generation request (HTTP error, content policy). */
  imageGeneration: 'image_generation_error',
  /** The images API answered with a body that does not follow the Images API format. */
  imageGenerationResponse: 'image_generation_bad_response',
  /** What the images API returned (or its image URL served) is not a PNG, JPEG or WebP image. */
  invalidImage: 'image_invalid',
} as const;

/** Why the SSRF guard refused a request. */
export type BlockReason = 'scheme' | 'address' | 'credentials' | 'port';

/**
 * The SSRF guard refused to connect: the URL's scheme is not http(s), or the host is (or resolves
 * to) an address on a private, loopback, link-local or otherwise non-public network that is not
 * on the allow-list. Not retryable: the same request will be refused again.
 */
export class BlockedUrlError extends QuiverError {
  /** The URL (or host) that was refused. */
  readonly url: string;
  /** The IP address that was refused, when the refusal is about an address. */
  readonly address: string | undefined;
  /** The kind of range the address is in (`loopback`, `private`, `link-local` …), when known. */
  readonly range: string | undefined;
  readonly reason: BlockReason;
  readonly isRetryable = false;

  constructor(
    message: string,
    details: { url: string; reason: BlockReason; address?: string; range?: string },
    options?: { cause?: unknown },
  ) {
    super(SearchToolsErrorCodes.urlBlocked, message, options);
    this.url = details.url;
    this.reason = details.reason;
    this.address = details.address;
    this.range = details.range;
  }

  override toJSON(): Record<string, unknown> {
    return {
      ...super.toJSON(),
      url: this.url,
      reason: this.reason,
      isRetryable: false,
      ...(this.address !== undefined ? { address: this.address, range: this.range } : {}),
    };
  }
}

/**
 * Fetching a URL failed. A subclass of core's `ToolExecutionError`, so a governance layer sees
 * `isRetryable` (timeouts, connection failures, 429 and 5xx) and `retryAfterMs` (from `Retry-After`).
 */
export class WebFetchError extends ToolExecutionError {
  /** The URL being fetched when the failure happened (the last redirect hop). */
  readonly url: string;
  /** HTTP status, when the server answered. */
  readonly statusCode: number | undefined;

  constructor(
    message: string,
    details: {
      code: (typeof SearchToolsErrorCodes)[keyof typeof SearchToolsErrorCodes];
      url: string;
      toolName?: string;
      statusCode?: number;
      isRetryable?: boolean;
      retryAfterMs?: number;
    },
    options?: { cause?: unknown },
  ) {
    super(details.toolName ?? 'web_fetch', message, {
      code: details.code,
      isRetryable: details.isRetryable ?? false,
      ...(details.retryAfterMs !== undefined ? { retryAfterMs: details.retryAfterMs } : {}),
      ...(options?.cause !== undefined ? { cause: options.cause } : {}),
    });
    this.url = details.url;
    this.statusCode = details.statusCode;
  }

  override toJSON(): Record<string, unknown> {
    return {
      ...super.toJSON(),
      url: this.url,
      ...(this.statusCode !== undefined ? { statusCode: this.statusCode } : {}),
    };
  }
}

/**
 * A search (or weather) provider failed: an error status (429 and 5xx are retryable and carry
 * `retryAfterMs` when the provider sent `Retry-After`), or a body that does not follow the
 * provider's documented format.
 */
export class ProviderError extends ToolExecutionError {
  /** Provider name, e.g. `brave`. */
  readonly provider: string;
  /** HTTP status, when the provider answered. */
  readonly statusCode: number | undefined;

  constructor(
    message: string,
    details: {
      provider: string;
      toolName: string;
      code?: string;
      statusCode?: number;
      isRetryable?: boolean;
      retryAfterMs?: number;
    },
    options?: { cause?: unknown },
  ) {
    super(details.toolName, message, {
      code: details.code ?? SearchToolsErrorCodes.providerStatus,
      isRetryable: details.isRetryable ?? false,
      ...(details.retryAfterMs !== undefined ? { retryAfterMs: details.retryAfterMs } : {}),
      ...(options?.cause !== undefined ? { cause: options.cause } : {}),
    });
    this.provider = details.provider;
    this.statusCode = details.statusCode;
  }

  override toJSON(): Record<string, unknown> {
    return {
      ...super.toJSON(),
      provider: this.provider,
      ...(this.statusCode !== undefined ? { statusCode: this.statusCode } : {}),
    };
  }
}

/**
 * Generating an image failed: the images API answered an error (429, 408 and 5xx are retryable
 * and carry `retryAfterMs` from `Retry-After`; 400 and the like are not and quote the API's
 * message), answered a body that breaks the Images API format, or handed back something that is
 * not an image.
 */
export class ImageGenerationError extends ToolExecutionError {
  /** HTTP status of the images API (or of the image download), when there was one. */
  readonly statusCode: number | undefined;
  /** The API's own error code (`content_policy_violation`, `unknown_parameter` …), when it gave one. */
  readonly apiCode: string | undefined;

  constructor(
    message: string,
    details: {
      code: (typeof SearchToolsErrorCodes)[keyof typeof SearchToolsErrorCodes];
      toolName?: string;
      statusCode?: number;
      apiCode?: string;
      isRetryable?: boolean;
      retryAfterMs?: number;
    },
    options?: { cause?: unknown },
  ) {
    super(details.toolName ?? 'image_gen', message, {
      code: details.code,
      isRetryable: details.isRetryable ?? false,
      ...(details.retryAfterMs !== undefined ? { retryAfterMs: details.retryAfterMs } : {}),
      ...(options?.cause !== undefined ? { cause: options.cause } : {}),
    });
    this.statusCode = details.statusCode;
    this.apiCode = details.apiCode;
  }

  override toJSON(): Record<string, unknown> {
    return {
      ...super.toJSON(),
      ...(this.statusCode !== undefined ? { statusCode: this.statusCode } : {}),
      ...(this.apiCode !== undefined ? { apiCode: this.apiCode } : {}),
    };
  }
}
