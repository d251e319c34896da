import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DocumentChunk } from '@quiver/core';

/** A chunk as doc-parser would produce it. */
export function chunk(
  source: string,
  text: string,
  index = 0,
  page = 1,
  headingPath: string[] = [],
): DocumentChunk {
  return {
    id: `${source}#${index}`,
    index,
    text,
    source,
    page,
    headingPath,
    tokenCount: Math.ceil(text.length / 4),
  };
}

/** The first `count` Cranfield abstracts of the test fixture (title + text), one chunk per document. */
export function cranfieldDocuments(count = 300): { source: string; chunks: DocumentChunk[] }[] {
  const lines = readFileSync(join(__dirname, 'fixtures', 'cranfield-mini', 'corpus.jsonl'), 'utf8')
    .trim()
    .split('\n');
  return lines.slice(0, count).map((line) => {
    const row = JSON.parse(line) as { _id: string; title: string; text: string };
    const source = `cranfield/${row._id}`;
    return { source, chunks: [chunk(source, `${row.title}\n${row.text}`)] };
  });
}

/** A fresh temporary directory, removed by the returned cleanup. */
export function temporaryDirectory(): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'quiver-rag-'));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}
