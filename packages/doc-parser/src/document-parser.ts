import type { DocumentInput, DocumentParser, ParsedDocument } from '@quiver/core';
import { chunkDocument, type ChunkDocumentOptions } from './chunk-document.js';
import { parseDocument } from './parse-document.js';
import type { ParseDocumentOptions } from './parse-options.js';

/**
 * {@link DocumentParser} (from `@quiver/core`) backed by {@link parseDocument}: hand it to
 * components that take any parser (retrievers, agents). Options given here are defaults;
 * per-call `signal` and `filename` are passed through.
 *
 * @example
 * ```ts
 * const parser = new QuiverDocumentParser({ maxBytes: 20 * 1024 * 1024, cacheDir: '.cache/docs' });
 * const doc = await parser.parse('https://example.com/paper.pdf');
 * const chunks = parser.chunk(doc, { maxTokens: 300 });
 * ```
 */
export class QuiverDocumentParser implements DocumentParser {
  constructor(private readonly defaults: ParseDocumentOptions = {}) {}

  /**
   * Parse a path, URL or bytes.
   * @throws {DocumentParseError} See {@link parseDocument}.
   */
  parse(input: DocumentInput, options: ParseDocumentOptions = {}): Promise<ParsedDocument> {
    return parseDocument(input, { ...this.defaults, ...options });
  }

  /** {@link chunkDocument} on a parsed document. */
  chunk(
    document: ParsedDocument,
    options?: ChunkDocumentOptions,
  ): ReturnType<typeof chunkDocument> {
    return chunkDocument(document, options);
  }
}
