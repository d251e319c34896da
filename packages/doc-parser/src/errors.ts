import { QuiverError } from '@quiver/core';
import type { DocumentFormat } from '@quiver/core';

/**
 * Stable codes of {@link DocumentParseError}. Each one maps to a different user action:
 * convert the file, supply a password, run OCR, raise a limit, or fix the path/URL.
 */
export const DocumentParseErrorCodes = {
  /** The content is not a format this package reads (images, legacy .doc/.xls/.ppt, archives). */
  unsupportedFormat: 'unsupported_format',
  /** The file claims a format but its bytes are damaged or truncated. */
  corrupted: 'corrupted',
  /** The document is password-protected and no (or a wrong) password was given. */
  encrypted: 'encrypted',
  /** The input, or what it decompresses to, is above a configured size limit. */
  tooLarge: 'too_large',
  /** The input has no bytes, or no extractable content at all. */
  empty: 'empty',
  /** Parsing did not finish within `timeoutMs`. */
  timeout: 'timeout',
  /** The caller's AbortSignal fired. */
  aborted: 'aborted',
  /** Every page is a scanned image with no text layer: OCR is needed. */
  scanned: 'scanned',
  /** The path does not exist or cannot be read. */
  notFound: 'not_found',
  /** A URL could not be fetched (network error or HTTP error status). */
  fetchFailed: 'fetch_failed',
} as const;

/** One of the {@link DocumentParseErrorCodes} values. */
export type DocumentParseErrorCode =
  (typeof DocumentParseErrorCodes)[keyof typeof DocumentParseErrorCodes];

/**
 * A document could not be parsed. `code` says why (see {@link DocumentParseErrorCodes}); the
 * message names the file and what to do about it.
 *
 * @example
 * ```ts
 * try {
 *   await parseDocument('report.pdf');
 * } catch (error) {
 *   if (error instanceof DocumentParseError && error.code === 'encrypted') askForPassword();
 * }
 * ```
 */
export class DocumentParseError extends QuiverError {
  declare readonly code: DocumentParseErrorCode;
  /** Path or URL of the document, when known. */
  readonly source: string | undefined;
  /** Format the content was detected as, when it got that far. */
  readonly format: DocumentFormat | undefined;
  /** True when trying again may succeed (network failures, HTTP 429/5xx). */
  readonly isRetryable: boolean;

  constructor(
    code: DocumentParseErrorCode,
    message: string,
    options?: { cause?: unknown; source?: string; format?: DocumentFormat; isRetryable?: boolean },
  ) {
    super(code, message, options);
    this.source = options?.source;
    this.format = options?.format;
    this.isRetryable = options?.isRetryable ?? false;
  }

  override toJSON(): Record<string, unknown> {
    return {
      ...super.toJSON(),
      ...(this.source !== undefined ? { source: this.source } : {}),
      ...(this.format !== undefined ? { format: this.format } : {}),
      isRetryable: this.isRetryable,
    };
  }
}
