import { chunkDocument, parseDocument } from '@quiver/doc-parser';
import type { KnowledgeBase } from '@quiver/rag-retrieval';
import type { WebExtractor } from '@quiver/search-tools';
import type { PageBackend } from './page-cache.js';

/** Options of {@link createPageBackend}. */
export interface PageBackendOptions {
  /** Fetches pages (`@quiver/search-tools`' `createWebExtractor`, with its SSRF guard). */
  extractor: WebExtractor;
  /** Where page text is indexed. */
  knowledgeBase: KnowledgeBase | (() => Promise<KnowledgeBase>);
}

/** The knowledge-base source of a cached page: its id, so updates replace and removals find it. */
export function pageSource(page: { id: string; url: string }): string {
  return `${page.url}#quiver-page=${page.id}`;
}

/**
 * The page cache's backend: fetch a page's main text through the web extractor, parse it as
 * Markdown, chunk it by headings (`@quiver/doc-parser`) and index it in a knowledge base under
 * the page's source (replacing an earlier version).
 */
export function createPageBackend(options: PageBackendOptions): PageBackend {
  const knowledgeBase = async () =>
    typeof options.knowledgeBase === 'function' ? options.knowledgeBase() : options.knowledgeBase;
  const sources = new Map<string, string>();
  return {
    async fetch(url, signal) {
      const page = await options.extractor.extract(url, { signal });
      return { title: page.title || url, content: page.text };
    },
    async index(page, signal) {
      const document = await parseDocument(new TextEncoder().encode(page.content), {
        filename: 'page.md',
        format: 'markdown',
        cacheDir: false,
        signal,
      });
      const source = pageSource(page);
      const chunks = chunkDocument({ ...document, title: page.title }, { source });
      const target = await knowledgeBase();
      await target.addDocument({ source, title: page.title, chunks });
      if (target.directory && !target.readOnly) await target.commit({ signal });
      sources.set(page.id, source);
    },
    async remove(id) {
      const source = sources.get(id);
      if (source === undefined) return;
      const target = await knowledgeBase();
      await target.deleteDocument(source);
      sources.delete(id);
    },
  };
}
