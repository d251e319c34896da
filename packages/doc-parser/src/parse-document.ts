import { createHash } from 'node:crypto';
import type { DocumentFormat, DocumentInput, ParsedDocument } from '@quiver/core';
import { ConfigurationError } from '@quiver/core';
import { Deadline } from './deadline.js';
import { detectFormat, type FormatDetection } from './detect-format.js';
import { loadInput } from './document-input.js';
import { pagesText } from './document-builder.js';
import { parseDocx } from './docx-parser.js';
import { DocumentParseError } from './errors.js';
import type { FormatResult } from './format-result.js';
import { parseHtml } from './html-parser.js';
import { parseMarkdown } from './markdown-parser.js';
import { ParseCache, defaultCacheDirectory } from './parse-cache.js';
import {
  DEFAULT_PARSE_LIMITS,
  type ParseDocumentOptions,
  type ResolvedParseOptions,
} from './parse-options.js';
import { parsePdf } from './pdf-parser.js';
import { parsePptx } from './pptx-parser.js';
import { parseCsv, parseXlsx } from './spreadsheet-parser.js';
import { declaredCharset, decodeText } from './text-decoding.js';
import { parseJson, parseText } from './text-parser.js';
import { countTokens } from './tokenizer.js';
import { ZipArchive } from './zip-archive.js';

/**
 * Version of the output shape; part of the cache key, bumped whenever a parser's output changes.
 * @internal
 */
export const PARSER_VERSION = '1';

/**
 * Parse a document into structure (pages of headings, paragraphs, lists, tables, code and
 * image references, each with its page and heading path) plus flat text and a token count.
 *
 * The format comes from the content (signatures, zip entries, text sniffing), not the
 * extension. Results are cached on disk by content hash (see `cacheDir`), so parsing an
 * unchanged file again costs a hash and a JSON read.
 *
 * `metadata` always has `contentHash` (sha256 of the bytes), `bytes`, `detectedBy`,
 * `titleSource` and `warnings` (rows or pages cut, scanned pages, extension mismatch), plus
 * format-specific fields (`pageCount`, `author`, `sheets`, `canonicalUrl`, `encoding`…).
 *
 * @param input - A file path, an `http(s)://` or `file:` URL (string or `URL`), or the bytes.
 * @param options - Limits, timeout, signal, cache, fetch; see {@link ParseDocumentOptions}.
 * @returns The parsed document; `source` is the path or URL when there was one.
 * @throws {ConfigurationError} When a limit option is not a positive number.
 * @throws {DocumentParseError} With a code from {@link DocumentParseErrorCodes}: `empty`,
 *   `unsupported_format`, `corrupted`, `encrypted`, `too_large`, `scanned`, `timeout`,
 *   `aborted`, `not_found`, `fetch_failed`.
 * @example
 * ```ts
 * const doc = await parseDocument('quarterly-report.pdf', { timeoutMs: 30_000 });
 * console.log(doc.title, doc.pages.length, doc.tokenCount);
 * const tables = doc.pages.flatMap((page) => page.blocks).filter((block) => block.type === 'table');
 * ```
 */
export async function parseDocument(
  input: DocumentInput,
  options: ParseDocumentOptions = {},
): Promise<ParsedDocument> {
  const resolved = resolveOptions(options);
  const source = typeof input === 'string' ? input : input instanceof URL ? input.href : undefined;
  const deadline = new Deadline(resolved.timeoutMs, source ?? resolved.filename, resolved.signal);
  try {
    return await deadline.race(run(input, resolved, deadline));
  } finally {
    deadline.dispose();
  }
}

function resolveOptions(options: ParseDocumentOptions): ResolvedParseOptions {
  const positive = (name: string, value: number | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    if (!(value > 0)) {
      throw new ConfigurationError(
        `parseDocument: option ${name} must be a positive number, got ${value}.`,
      );
    }
    return value;
  };
  return {
    signal: options.signal,
    timeoutMs: positive('timeoutMs', options.timeoutMs, DEFAULT_PARSE_LIMITS.timeoutMs),
    filename: options.filename,
    format: options.format,
    maxBytes: positive('maxBytes', options.maxBytes, DEFAULT_PARSE_LIMITS.maxBytes),
    maxDecompressedBytes: positive(
      'maxDecompressedBytes',
      options.maxDecompressedBytes,
      DEFAULT_PARSE_LIMITS.maxDecompressedBytes,
    ),
    maxPages: positive('maxPages', options.maxPages, DEFAULT_PARSE_LIMITS.maxPages),
    maxRows: positive('maxRows', options.maxRows, DEFAULT_PARSE_LIMITS.maxRows),
    password: options.password,
    cacheDir: options.cacheDir === undefined ? defaultCacheDirectory() : options.cacheDir,
    fetch: options.fetch ?? globalThis.fetch,
  };
}

async function run(
  input: DocumentInput,
  options: ResolvedParseOptions,
  deadline: Deadline,
): Promise<ParsedDocument> {
  const loaded = await loadInput(input, options, deadline);
  const label = loaded.source ?? loaded.filename;
  const detection: FormatDetection = options.format
    ? { format: options.format, by: 'option' }
    : detectFormat(loaded.bytes, loaded.filename ?? loaded.source);
  if (options.format && loaded.bytes.byteLength === 0) detectFormat(loaded.bytes, label);
  const contentHash = createHash('sha256').update(loaded.bytes).digest('hex');
  const fallbackTitle = titleFromName(loaded.filename);

  const cache = options.cacheDir === false ? undefined : new ParseCache(options.cacheDir);
  const cacheKey = createHash('sha256')
    .update(
      [
        contentHash,
        PARSER_VERSION,
        detection.format,
        options.maxRows,
        options.maxPages,
        options.password ?? '',
      ].join('\0'),
    )
    .digest('hex');
  const cached = await cache?.get(cacheKey);
  if (cached) {
    return withSource(
      {
        ...cached,
        title:
          cached.metadata.titleSource === 'document'
            ? cached.title
            : (fallbackTitle ?? cached.title),
        metadata: { ...cached.metadata, cached: true },
      },
      loaded.source,
    );
  }

  let result: FormatResult;
  let encoding: string | undefined;
  try {
    const format = detection.format;
    if (format === 'pdf') {
      result = await parsePdf(loaded.bytes, deadline, {
        password: options.password,
        maxPages: options.maxPages,
        source: label,
      });
    } else if (format === 'docx' || format === 'pptx' || format === 'xlsx') {
      const archive = new ZipArchive(loaded.bytes, options.maxDecompressedBytes, label);
      result =
        format === 'docx'
          ? await parseDocx(archive, deadline)
          : format === 'pptx'
            ? await parsePptx(archive, deadline)
            : await parseXlsx(archive, deadline, options.maxRows);
    } else {
      const decoded = decodeText(loaded.bytes, declaredCharset(loaded.bytes, loaded.contentType));
      encoding = decoded.encoding;
      const text = decoded.text;
      await deadline.tick();
      result =
        format === 'html'
          ? await parseHtml(text, deadline)
          : format === 'markdown'
            ? parseMarkdown(text)
            : format === 'csv'
              ? parseCsv(text, loaded.filename, options.maxRows)
              : format === 'json'
                ? parseJson(text, label)
                : parseText(text);
    }
  } catch (error) {
    if (DocumentParseError.isInstance(error)) throw error;
    throw new DocumentParseError(
      'corrupted',
      `${label ? `"${label}"` : 'The document'} could not be parsed as ${detection.format.toUpperCase()}: ${(error as Error).message ?? String(error)}. The file is probably damaged; re-export it.`,
      { source: label, format: detection.format, cause: error },
    );
  }

  const blocks = result.pages.flatMap((page) => page.blocks);
  const hasContent = blocks.some(
    (block) =>
      block.text.trim().length > 0 && !(detection.format === 'xlsx' && block.type === 'heading'),
  );
  if (!hasContent) {
    throw new DocumentParseError(
      'empty',
      `${label ? `"${label}"` : 'The document'} (${detection.format.toUpperCase()}) contains no text.`,
      { source: label, format: detection.format },
    );
  }
  const warnings = [...(result.warnings ?? [])];
  if (detection.extensionMismatch) {
    warnings.push(
      `The file name says .${detection.extensionMismatch.extension} but the content is ${detection.format.toUpperCase()}; it was parsed as ${detection.format.toUpperCase()}.`,
    );
  }
  const firstHeading = blocks.find((block) => block.type === 'heading')?.text;
  // Office formats state their title (core properties, first heading/slide title) themselves.
  const officeFormat =
    detection.format === 'docx' || detection.format === 'pptx' || detection.format === 'xlsx';
  const ownTitle = result.title?.trim() || (officeFormat ? undefined : firstHeading);
  const text = pagesText(result.pages);
  const document: ParsedDocument = {
    title: ownTitle ?? fallbackTitle ?? firstLine(text),
    format: detection.format as DocumentFormat,
    pages: result.pages,
    text,
    tokenCount: countTokens(text),
    metadata: {
      ...result.metadata,
      contentHash,
      bytes: loaded.bytes.byteLength,
      detectedBy: detection.by,
      titleSource: ownTitle ? 'document' : 'filename',
      ...(encoding ? { encoding } : {}),
      ...(loaded.contentType ? { contentType: loaded.contentType } : {}),
      warnings,
    },
  };
  await cache?.set(cacheKey, document);
  return withSource(document, loaded.source);
}

function withSource(document: ParsedDocument, source: string | undefined): ParsedDocument {
  return source === undefined ? document : { ...document, source };
}

function titleFromName(filename: string | undefined): string | undefined {
  if (!filename) return undefined;
  const base = filename.split(/[\\/]/).pop() ?? filename;
  return base.replace(/\.[^.]+$/, '') || base;
}

function firstLine(text: string): string {
  const line = text.split('\n').find((candidate) => candidate.trim()) ?? '';
  return line.length > 80 ? `${line.slice(0, 77)}…` : line;
}
