import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import {
  HashedNgramEmbedder,
  KnowledgeBase,
  evaluateRun,
  formatTrecRun,
  parseQrels,
  readBeirCollection,
  type Run,
} from '../src/index.js';
import { temporaryDirectory } from './helpers.js';

const collectionDirectory = join(__dirname, 'fixtures', 'cranfield-mini');

describe('IR evaluation', () => {
  it('reads a BEIR collection', () => {
    const collection = readBeirCollection(collectionDirectory);
    expect(collection.corpus).toHaveLength(300);
    expect(collection.corpus[0]).toMatchObject({
      id: '1',
      title: expect.stringContaining('slipstream'),
    });
    expect(collection.queries.length).toBe(114);
    expect(collection.qrels.get('1')!.get('184')).toBe(3);
  });

  it('names the file when a collection is malformed', () => {
    const directory = temporaryDirectory();
    try {
      writeFileSync(join(directory.path, 'corpus.jsonl'), '{"_id": "1"}\nnot json\n');
      expect(() => readBeirCollection(directory.path)).toThrow(/corpus\.jsonl line 2/);
    } finally {
      directory.cleanup();
    }
  });

  it('parses BEIR and TREC qrels', () => {
    expect(parseQrels('query-id\tcorpus-id\tscore\nq1\td1\t2\n').get('q1')!.get('d1')).toBe(2);
    expect(parseQrels('q1 0 d1 1\nq1 0 d2 0\n').get('q1')!.get('d2')).toBe(0);
  });

  it('computes the same nDCG@10, Recall@100 and MRR@10 as the reference scorer (trec_eval conventions)', async () => {
    const collection = readBeirCollection(collectionDirectory);
    const knowledgeBase = await KnowledgeBase.open({
      embedder: new HashedNgramEmbedder({ dimensions: 64 }),
    });
    for (const document of collection.corpus) {
      const text = `${document.title}\n${document.text}`;
      await knowledgeBase.addDocument({
        source: document.id,
        chunks: [
          {
            id: document.id,
            index: 0,
            text,
            source: document.id,
            page: 1,
            headingPath: [],
            tokenCount: 0,
          },
        ],
      });
    }
    const run: Run = new Map();
    for (const query of collection.queries) {
      const { hits } = await knowledgeBase.search({ query: query.text, topK: 100, dedupe: false });
      run.set(
        query.id,
        hits.map((hit) => ({ id: hit.chunk.source, score: hit.score })),
      );
    }
    run.delete(collection.queries[0]!.id); // a query missing from the run scores 0 in both
    const ours = evaluateRun(run, collection.qrels);
    expect(ours.ndcgAt10).toBeGreaterThan(0.2);

    const directory = temporaryDirectory();
    try {
      const runFile = join(directory.path, 'run.trec');
      writeFileSync(runFile, formatTrecRun(run, 'test'));
      const reference = JSON.parse(
        execFileSync(process.execPath, [
          join(__dirname, 'fixtures', 'evaluate-reference.mjs'),
          runFile,
          join(collectionDirectory, 'qrels.tsv'),
          '--json',
        ]).toString(),
      );
      expect(reference.queries).toBe(ours.queries);
      expect(ours.ndcgAt10.toFixed(4)).toBe(reference['nDCG@10'].toFixed(4));
      expect(ours.recallAt100.toFixed(4)).toBe(reference['Recall@100'].toFixed(4));
      expect(ours.mrrAt10.toFixed(4)).toBe(reference['MRR@10'].toFixed(4));
    } finally {
      directory.cleanup();
    }
  });

  it('writes TREC run lines', () => {
    const run: Run = new Map([
      [
        'q1',
        [
          { id: 'd2', score: 1.5 },
          { id: 'd1', score: 0.5 },
        ],
      ],
    ]);
    expect(formatTrecRun(run, 'tag')).toBe('q1 Q0 d2 1 1.5 tag\nq1 Q0 d1 2 0.5 tag\n');
  });
});
