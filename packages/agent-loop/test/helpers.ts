import { readFile } from 'node:fs/promises';
import type {
  Logger,
  RetrievalRequest,
  RetrievalResult,
  RetrievedChunk,
  Retriever,
} from '@quiver/core';
import { defineTool } from '@quiver/core-registry';

/** A logger that keeps what it is told. */
export function recordingLogger(): Logger & {
  records: { level: string; message: string; fields?: Record<string, unknown> }[];
} {
  const records: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    records.push({ level, message, ...(fields ? { fields } : {}) });
  };
  return {
    records,
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
  };
}

/** `add` tool: a + b. */
export const addTool = defineTool({
  name: 'add',
  description: { en: 'Add two numbers', zh: '两数相加' },
  parameters: {
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
    additionalProperties: false,
  },
  execute: ({ a, b }: { a: number; b: number }) => String(a + b),
});

/**
 * A small real retriever for tests: reads the files it is given, splits Markdown into sections
 * at headings (and long sections into paragraphs), and ranks sections by BM25 over lowercase
 * word tokens. Stands in for @quiver/rag-retrieval, which is built in parallel.
 */
export class KeywordRetriever implements Retriever {
  readonly calls: RetrievalRequest[] = [];

  async retrieve(request: RetrievalRequest): Promise<RetrievalResult> {
    this.calls.push(request);
    const warnings: string[] = [];
    const sections: Omit<RetrievedChunk, 'score'>[] = [];
    for (const file of request.files ?? []) {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        warnings.push(`could not read ${file}: ${(error as Error).message}`);
        continue;
      }
      let heading: string[] = [];
      let index = 0;
      for (const block of text.split(/\n(?=#{1,3} )/)) {
        const title = /^#{1,3} (.*)/.exec(block)?.[1]?.trim();
        if (title) heading = [title];
        const body = block.trim();
        if (body === '') continue;
        sections.push({
          chunkId: `${file}#${index++}`,
          text: body,
          source: file,
          headingPath: heading,
        });
      }
    }
    const documents = sections.map((section) => tokens(section.text));
    const averageLength =
      documents.reduce((sum, doc) => sum + doc.length, 0) / Math.max(1, documents.length);
    const queryTerms = [...new Set(tokens(request.query))];
    const documentFrequency = new Map<string, number>();
    for (const doc of documents)
      for (const term of new Set(doc))
        documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
    const scored = sections.map((section, position) => {
      const doc = documents[position]!;
      let score = 0;
      for (const term of queryTerms) {
        const frequency = doc.filter((token) => token === term).length;
        if (frequency === 0) continue;
        const df = documentFrequency.get(term) ?? 0;
        const idf = Math.log(1 + (documents.length - df + 0.5) / (df + 0.5));
        score +=
          (idf * frequency * 2.2) /
          (frequency + 1.2 * (0.25 + (0.75 * doc.length) / averageLength));
      }
      return { ...section, score };
    });
    const chunks = scored
      .filter((chunk) => chunk.score > 0)
      .sort((left, right) => right.score - left.score)
      .slice(0, request.topK ?? 5);
    return { chunks, warnings };
  }
}

const STOP = new Set([
  'the',
  'a',
  'an',
  'of',
  'and',
  'or',
  'to',
  'in',
  'is',
  'are',
  'be',
  'for',
  'what',
  'when',
  'must',
  'how',
  'does',
  'do',
  'it',
  'on',
  'by',
  'with',
]);

function tokens(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((token) => !STOP.has(token));
}
