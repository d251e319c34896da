import { readdir } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import { DocumentRetriever, KnowledgeBase } from '@quiver/rag-retrieval';
import type { ProgressBar } from './progress-bar.js';
import { documentParsing } from '@quiver/server';

/** File extensions `quiver rag index` reads (what `@quiver/doc-parser` parses). */
export const INDEXABLE_EXTENSIONS = new Set([
  '.pdf',
  '.docx',
  '.pptx',
  '.xlsx',
  '.csv',
  '.md',
  '.markdown',
  '.txt',
  '.html',
  '.htm',
]);

/** Every indexable file under `directory` (hidden folders and node_modules skipped), sorted. */
export async function listDocuments(directory: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (folder: string) => {
    const entries = await readdir(folder, { withFileTypes: true });
    for (const entry of entries) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile() && INDEXABLE_EXTENSIONS.has(extname(entry.name).toLowerCase()))
        found.push(path);
    }
  };
  await walk(resolve(directory));
  return found.sort();
}

/** What {@link indexDocuments} did. */
export interface IndexSummary {
  files: number;
  indexed: string[];
  unchanged: string[];
  failed: { file: string; error: string }[];
  documents: number;
  chunks: number;
}

/**
 * Index `files` into the knowledge base at `directory` (created when missing; unchanged files are
 * skipped by content hash), reporting progress after each batch. Files are indexed in at most
 * ~40 batches because each batch ends with a crash-safe commit that rewrites the index.
 */
export async function indexDocuments(options: {
  files: string[];
  /** Knowledge-base directory; omit for an in-memory one (returned open, to query). */
  directory?: string;
  progress?: ProgressBar;
  signal?: AbortSignal;
}): Promise<{ summary: IndexSummary; knowledgeBase: KnowledgeBase }> {
  const knowledgeBase = await KnowledgeBase.open(
    options.directory !== undefined ? { directory: options.directory } : {},
  );
  const retriever = new DocumentRetriever({ knowledgeBase, ...documentParsing() });
  const summary: IndexSummary = {
    files: options.files.length,
    indexed: [],
    unchanged: [],
    failed: [],
    documents: 0,
    chunks: 0,
  };
  const batchSize = Math.max(1, Math.ceil(options.files.length / 40));
  options.progress?.update(0, 'starting');
  try {
    for (let start = 0; start < options.files.length; start += batchSize) {
      const batch = options.files.slice(start, start + batchSize);
      const report = await retriever.index(batch, options.signal ? { signal: options.signal } : {});
      summary.indexed.push(...report.indexed);
      summary.unchanged.push(...report.unchanged);
      summary.failed.push(...report.failed);
      options.progress?.update(start + batch.length, basename(batch.at(-1) ?? ''));
    }
  } catch (error) {
    await knowledgeBase.close();
    throw error;
  }
  const documents = knowledgeBase.documents();
  summary.documents = documents.length;
  summary.chunks = documents.reduce((total, document) => total + document.chunkCount, 0);
  return { summary, knowledgeBase };
}
