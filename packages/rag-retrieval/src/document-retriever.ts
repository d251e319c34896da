import { createHash } from 'node:crypto';
import { loadModule } from './load-module.js';
import type * as DocParser from '@quiver/doc-parser';

type DocParserModule = typeof DocParser;

import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  errorMessage,
  type DocumentChunk,
  type DocumentParser,
  type Logger,
  type ParsedDocument,
  type RetrievalRequest,
  type RetrievalResult,
  type Retriever,
  silentLogger,
} from '@quiver/core';
import { KnowledgeBase, type SearchOptions } from './knowledge-base.js';

/** Splits a parsed document into chunks (doc-parser's `chunkDocument` has this shape). */
export type DocumentChunker = (
  document: ParsedDocument,
  options: { maxTokens: number; overlap: number },
) => DocumentChunk[];

/** Options of {@link DocumentRetriever}. */
export interface DocumentRetrieverOptions {
  /** Parses files and URLs into documents. Default: `@quiver/doc-parser` (PDF, Word, PowerPoint, Excel, HTML, Markdown, text). */
  parser?: DocumentParser;
  /** Splits parsed documents into chunks. Default: `chunkDocument` of `@quiver/doc-parser` (heading- and page-aware). */
  chunker?: DocumentChunker;
  /** Where chunks are indexed. Default: a new in-memory knowledge base with the offline embedder. */
  knowledgeBase?: KnowledgeBase;
  /** Chunk size and overlap in tokens. Default 500 and 50. */
  chunking?: { maxTokens?: number; overlap?: number };
  /** Results returned. Default 8. */
  topK?: number;
  /** Token budget of the returned snippets when the request sets none. Default 4000. */
  maxRefTokens?: number;
  /** Search settings (mode, fusion, front page). Default: hybrid search with RRF. */
  search?: Omit<SearchOptions, 'query' | 'sources' | 'signal' | 'maxRefTokens' | 'topK'>;
  /** Files parsed at once. Default 2. */
  concurrency?: number;
  logger?: Logger;
}

/** What {@link DocumentRetriever.index} did with each file. */
export interface IndexReport {
  /** Files parsed and (re-)indexed now. */
  indexed: string[];
  /** Files whose content hash matched the indexed copy: skipped. */
  unchanged: string[];
  /** Files that could not be read or parsed: skipped, the rest indexed. */
  failed: { file: string; error: string }[];
  warnings: string[];
}

/**
 * Answers {@link Retriever} requests from files: parses them (through `@quiver/doc-parser` or any {@link DocumentParser}),
 * chunks them, indexes only new or changed files (by SHA-256 of their bytes), and searches the
 * knowledge base, restricted to the requested files, within a token budget.
 *
 * @example
 * ```ts
 * const retriever = new DocumentRetriever({ knowledgeBase: await KnowledgeBase.open({ directory: '.kb' }) });
 * const { chunks, warnings } = await retriever.retrieve({ query: 'refund policy', files: ['./terms.pdf'] });
 * ```
 */
export class DocumentRetriever implements Retriever {
  #parser: DocumentParser | undefined;
  #chunker: DocumentChunker | undefined;
  readonly #options: DocumentRetrieverOptions;
  readonly #logger: Logger;
  #knowledgeBase: Promise<KnowledgeBase>;

  constructor(options: DocumentRetrieverOptions = {}) {
    this.#parser = options.parser;
    this.#chunker = options.chunker;
    this.#options = options;
    this.#logger = options.logger ?? silentLogger;
    this.#knowledgeBase = options.knowledgeBase
      ? Promise.resolve(options.knowledgeBase)
      : KnowledgeBase.open(options.logger ? { logger: options.logger } : {});
  }

  /** The knowledge base chunks are indexed in. */
  knowledgeBase(): Promise<KnowledgeBase> {
    return this.#knowledgeBase;
  }

  /**
   * Index files that are new or changed since they were last indexed. A file that fails to read or
   * parse is reported in `failed` and skipped; the others are indexed. Commits a persistent knowledge base.
   */
  async index(
    files: readonly string[],
    options: { signal?: AbortSignal } = {},
  ): Promise<IndexReport> {
    const knowledgeBase = await this.#knowledgeBase;
    const report: IndexReport = { indexed: [], unchanged: [], failed: [], warnings: [] };
    const unique = [...new Set(files.map(sourceKey))];
    let next = 0;
    const worker = async () => {
      while (next < unique.length) {
        const file = unique[next++]!;
        options.signal?.throwIfAborted();
        try {
          await this.#indexOne(knowledgeBase, file, report, options.signal);
        } catch (error) {
          options.signal?.throwIfAborted();
          this.#logger.warn('file skipped', { file, error: errorMessage(error) });
          report.failed.push({ file, error: errorMessage(error) });
        }
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(this.#options.concurrency ?? 2, unique.length) }, worker),
    );
    if (report.indexed.length > 0 && knowledgeBase.directory && !knowledgeBase.readOnly) {
      report.warnings.push(
        ...(await knowledgeBase.commit(options.signal ? { signal: options.signal } : {})).warnings,
      );
    }
    return report;
  }

  /**
   * Index `request.files` (incrementally), then search them (or the whole knowledge base when no
   * files are given). Never throws for a bad file or a failing embedder: those become warnings.
   * @throws InvalidQueryError for an empty query.
   */
  async retrieve(request: RetrievalRequest): Promise<RetrievalResult> {
    const knowledgeBase = await this.#knowledgeBase;
    const warnings: string[] = [];
    let sources: string[] | undefined;
    if (request.files && request.files.length > 0) {
      const report = await this.index(
        request.files,
        request.signal ? { signal: request.signal } : {},
      );
      warnings.push(...report.warnings);
      for (const failure of report.failed)
        warnings.push(`Skipped ${failure.file}: ${failure.error}`);
      sources = request.files
        .map(sourceKey)
        .filter((source) => knowledgeBase.getDocument(source) !== undefined);
    }
    const result = await knowledgeBase.search({
      ...this.#options.search,
      query: request.query,
      topK: request.topK ?? this.#options.topK ?? 8,
      maxRefTokens: request.maxTokens ?? this.#options.maxRefTokens ?? 4000,
      ...(sources ? { sources } : {}),
      ...(request.signal ? { signal: request.signal } : {}),
    });
    warnings.push(...result.warnings);
    return {
      warnings: [...new Set(warnings)],
      chunks: result.hits.map((hit) => ({
        chunkId: hit.chunk.id,
        text: hit.chunk.text,
        source: hit.chunk.source,
        page: hit.chunk.page,
        headingPath: hit.chunk.headingPath,
        score: hit.score,
      })),
    };
  }

  /** doc-parser is loaded on first use: PDF and Office parsing is heavy, and keyword search alone does not need it. */
  async #parsing(): Promise<{ parser: DocumentParser; chunker: DocumentChunker }> {
    if (!this.#parser || !this.#chunker) {
      const docParser = await loadModule<DocParserModule>('@quiver/doc-parser');
      this.#parser ??= new docParser.QuiverDocumentParser();
      this.#chunker ??= docParser.chunkDocument;
    }
    return { parser: this.#parser, chunker: this.#chunker };
  }

  async #indexOne(
    knowledgeBase: KnowledgeBase,
    file: string,
    report: IndexReport,
    signal?: AbortSignal,
  ) {
    const { parser, chunker } = await this.#parsing();
    const isUrl = /^https?:\/\//i.test(file);
    let document: ParsedDocument;
    let contentHash: string;
    if (isUrl) {
      // A URL can only be hashed after fetching it; unchanged pages still skip re-indexing.
      document = await parser.parse(file, signal ? { signal } : {});
      contentHash = sha256(document.text);
    } else {
      const bytes = await readFile(file, signal ? { signal } : {});
      contentHash = sha256(bytes);
      if (knowledgeBase.getDocument(file)?.contentHash === contentHash) {
        report.unchanged.push(file);
        return;
      }
      document = await parser.parse(new Uint8Array(bytes), {
        filename: file,
        ...(signal ? { signal } : {}),
      });
    }
    if (knowledgeBase.getDocument(file)?.contentHash === contentHash) {
      report.unchanged.push(file);
      return;
    }
    const chunks = chunker(
      { ...document, source: file },
      {
        maxTokens: this.#options.chunking?.maxTokens ?? 500,
        overlap: this.#options.chunking?.overlap ?? 50,
      },
    ).map((chunk, index) => ({
      ...chunk,
      id: `${contentHash.slice(0, 16)}#${index}`,
      index,
      source: file,
    }));
    if (chunks.length === 0) report.warnings.push(`${file} has no text to index.`);
    const added = await knowledgeBase.addDocument(
      { source: file, chunks, contentHash, title: document.title },
      signal ? { signal } : {},
    );
    report.warnings.push(...added.warnings);
    report.indexed.push(file);
  }
}

/** Local paths are indexed under their absolute path (so `./a.md` and `a.md` are one document); URLs as given. */
function sourceKey(file: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(file) ? file : resolve(file);
}

function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
