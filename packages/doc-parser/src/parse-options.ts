import type { DocumentFormat } from '@quiver/core';

/** Options of {@link parseDocument}. Every field is optional; defaults suit interactive agents. */
export interface ParseDocumentOptions {
  /** Cancels the parse (and a URL download). */
  signal?: AbortSignal;
  /** Give up after this many milliseconds with a `timeout` error. Default 60 000. */
  timeoutMs?: number;
  /**
   * File name used as a hint when the content alone is ambiguous (CSV vs text, Markdown vs
   * text) and for the title. Paths and URLs supply it themselves.
   */
  filename?: string;
  /** Skip content detection and parse as this format. */
  format?: DocumentFormat;
  /** Largest input accepted, in bytes (files, downloads and buffers). Default 100 MiB. */
  maxBytes?: number;
  /** Largest total size the entries of a DOCX/PPTX/XLSX may decompress to. Default 200 MiB (zip-bomb guard). */
  maxDecompressedBytes?: number;
  /** PDF pages read at most; later pages are dropped with a note in `metadata.warnings`. Default 2 000. */
  maxPages?: number;
  /** Rows kept per sheet or CSV file (header included); the rest is dropped with a note. Default 1 000. */
  maxRows?: number;
  /** Password of an encrypted PDF. */
  password?: string;
  /**
   * Directory of the parse cache (results keyed by content hash). `false` turns caching off.
   * Default: `$QUIVER_DOC_PARSER_CACHE_DIR`, else `$XDG_CACHE_HOME/quiver/doc-parser`, else
   * `~/.cache/quiver/doc-parser`.
   */
  cacheDir?: string | false;
  /** `fetch` used for URLs (inject one for proxies or tests). Default: the global `fetch`. */
  fetch?: typeof fetch;
}

/** @internal Options with every default applied. */
export interface ResolvedParseOptions {
  signal: AbortSignal | undefined;
  timeoutMs: number;
  filename: string | undefined;
  format: DocumentFormat | undefined;
  maxBytes: number;
  maxDecompressedBytes: number;
  maxPages: number;
  maxRows: number;
  password: string | undefined;
  cacheDir: string | false;
  fetch: typeof fetch;
}

/** Defaults of {@link ParseDocumentOptions}. */
export const DEFAULT_PARSE_LIMITS = {
  timeoutMs: 60_000,
  maxBytes: 100 * 1024 * 1024,
  maxDecompressedBytes: 200 * 1024 * 1024,
  maxPages: 2_000,
  maxRows: 1_000,
} as const;
