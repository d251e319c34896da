import { join, resolve } from 'node:path';
import type { RetrievedChunk } from '@quiver/core';
import { ConfigurationError } from '@quiver/core';
import { DocumentRetriever, KnowledgeBase } from '@quiver/rag-retrieval';
import type { KnowledgeBaseService } from './services.js';
import { documentParsing } from './document-parsing.js';

/** Options of {@link KnowledgeBases}. */
export interface KnowledgeBasesOptions {
  /** Where knowledge bases without a configured path live: `<directory>/<name>`. Omit for in-memory ones. */
  directory?: string;
  /** Knowledge bases with their own directory, by name (`quiver.config.json`'s `knowledgeBases`). */
  paths?: Record<string, string>;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Named knowledge bases on `@quiver/rag-retrieval` (hybrid BM25 + vector search, crash-safe on
 * disk) with documents parsed and chunked by `@quiver/doc-parser`; opened on first use, indexed
 * incrementally (unchanged files are skipped). Backs `/v1/kb/:name/…` and the page cache.
 */
export class KnowledgeBases implements KnowledgeBaseService {
  readonly #options: KnowledgeBasesOptions;
  readonly #open = new Map<
    string,
    Promise<{ knowledgeBase: KnowledgeBase; retriever: DocumentRetriever }>
  >();

  constructor(options: KnowledgeBasesOptions = {}) {
    this.#options = options;
  }

  /** The knowledge base and retriever of `name`, opened on first use. */
  async get(name: string): Promise<{ knowledgeBase: KnowledgeBase; retriever: DocumentRetriever }> {
    if (!NAME.test(name)) {
      throw new ConfigurationError(
        `Knowledge base names are 1-64 letters, digits, "_" or "-"; got "${name}".`,
      );
    }
    let opening = this.#open.get(name);
    if (!opening) {
      const configured = this.#options.paths?.[name];
      const directory =
        configured !== undefined
          ? resolve(configured)
          : this.#options.directory !== undefined
            ? join(this.#options.directory, name)
            : undefined;
      opening = KnowledgeBase.open(directory !== undefined ? { directory } : {}).then(
        (knowledgeBase) => ({
          knowledgeBase,
          retriever: new DocumentRetriever({ knowledgeBase, ...documentParsing() }),
        }),
      );
      this.#open.set(name, opening);
      opening.catch(() => this.#open.delete(name));
    }
    return opening;
  }

  async addDocuments(name: string, paths: string[], options: { signal: AbortSignal }) {
    const { retriever } = await this.get(name);
    const report = await retriever.index(
      paths.map((path) => (/^https?:\/\//i.test(path) ? path : resolve(path))),
      { signal: options.signal },
    );
    return {
      indexed: report.indexed,
      skipped: report.unchanged,
      failed: report.failed.map((failure) => ({ path: failure.file, reason: failure.error })),
    };
  }

  async search(
    name: string,
    query: string,
    options: { topK: number; signal: AbortSignal },
  ): Promise<RetrievedChunk[]> {
    const { retriever } = await this.get(name);
    const result = await retriever.retrieve({ query, topK: options.topK, signal: options.signal });
    return result.chunks;
  }

  /** Close every open knowledge base (releases the write locks). */
  async close(): Promise<void> {
    const open = [...this.#open.values()];
    this.#open.clear();
    await Promise.all(
      open.map(async (opening) => {
        const { knowledgeBase } = await opening.catch(() => ({ knowledgeBase: undefined }));
        await knowledgeBase?.close();
      }),
    );
  }
}
