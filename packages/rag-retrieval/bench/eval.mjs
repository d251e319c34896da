#!/usr/bin/env node
// Retrieval quality over a BEIR-format collection (corpus.jsonl, queries.jsonl, qrels.tsv):
//   pnpm --filter @quiver/rag-retrieval eval <collection dir> [--out DIR] [--k1 0.9] [--b 0.4]
//        [--embedding-model NAME --embedding-base-url URL]   (a real model through the OpenAI-compatible client)
// Prints nDCG@10, Recall@100 and MRR@10 for keyword, vector and hybrid search and writes one TREC
// run file per mode (check them with shared/eval/ir/evaluate.mjs). Without a model it evaluates both
// offline embedders: LsaEmbedder (the default, fitted to the corpus, no judgements used) and
// HashedNgramEmbedder.
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  CachedEmbedder,
  HashedNgramEmbedder,
  KnowledgeBase,
  LsaEmbedder,
  OpenAIEmbedder,
  evaluateRun,
  formatTrecRun,
  readBeirCollection,
} from '../dist/index.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    out: { type: 'string' },
    k1: { type: 'string', default: '0.9' },
    b: { type: 'string', default: '0.4' },
    'embedding-model': { type: 'string' },
    'embedding-base-url': { type: 'string' },
  },
});
if (positionals.length !== 1) {
  console.error(
    'usage: pnpm --filter @quiver/rag-retrieval eval <collection dir> [--out DIR] [--k1 N] [--b N] [--embedding-model NAME --embedding-base-url URL]',
  );
  process.exit(2);
}
// pnpm runs scripts in the package directory; resolve paths against where the command was typed.
const cwd = process.env.INIT_CWD ?? process.cwd();
const collectionDir = resolve(cwd, positionals[0]);
const name = basename(collectionDir);
const outDir = resolve(
  cwd,
  values.out ??
    join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, 'results', `eval-${name}`),
);
mkdirSync(outDir, { recursive: true });

const collection = readBeirCollection(collectionDir);
const bm25 = { k1: Number(values.k1), b: Number(values.b) };
const embedder = values['embedding-model']
  ? new CachedEmbedder(
      new OpenAIEmbedder({
        model: values['embedding-model'],
        baseURL: values['embedding-base-url'],
      }),
    )
  : new LsaEmbedder();

async function build(analyzer, embedder) {
  const started = performance.now();
  const kb = await KnowledgeBase.open({ embedder, bm25, analyzer });
  for (const document of collection.corpus) {
    // BEIR's convention (and the reference BM25's): title and text, concatenated.
    const text = document.title ? `${document.title}\n${document.text}` : document.text;
    // One chunk per document: BEIR judges whole documents.
    await kb.addDocument({
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
  await kb.commit(); // in memory: embeds (and fits a corpus-fitted embedder)
  return { kb, seconds: (performance.now() - started) / 1000 };
}

async function runMode(kb, label, search) {
  const run = new Map();
  const started = performance.now();
  for (const query of collection.queries) {
    const { hits } = await kb.search({ query: query.text, topK: 100, dedupe: false, ...search });
    run.set(
      query.id,
      hits.map((hit) => ({ id: hit.chunk.source, score: hit.score })),
    );
  }
  const msPerQuery = (performance.now() - started) / collection.queries.length;
  const file = join(outDir, `run-${label}.trec`);
  writeFileSync(file, formatTrecRun(run, `quiver-${label}`));
  return { label, ...evaluateRun(run, collection.qrels), msPerQuery, file };
}

const { kb, seconds } = await build({ stopWords: 'natural' }, embedder);
const { kb: luceneKb } = await build({ stopWords: 'lucene' }, embedder);
const offline = embedder instanceof LsaEmbedder;
const { kb: ngramKb } = offline
  ? await build({ stopWords: 'natural' }, new HashedNgramEmbedder())
  : { kb: undefined };
const rows = [
  await runMode(kb, 'keyword', { mode: 'keyword' }),
  await runMode(kb, 'vector', { mode: 'vector' }),
  await runMode(kb, 'hybrid', { mode: 'hybrid' }),
  await runMode(kb, offline ? 'hybrid-rrf' : 'hybrid-convex', {
    mode: 'hybrid',
    fusion: offline ? { method: 'rrf', keywordWeight: 1, vectorWeight: 0.3 } : { method: 'convex' },
  }),
  await runMode(luceneKb, 'keyword-lucene-stopwords', { mode: 'keyword' }),
];
if (ngramKb) {
  rows.push(await runMode(ngramKb, 'vector-ngram', { mode: 'vector' }));
  rows.push(await runMode(ngramKb, 'hybrid-ngram', { mode: 'hybrid' }));
}

console.log(
  `collection ${name}: ${collection.corpus.length} documents, ${rows[0].queries} judged queries; embedder ${embedder.id}; BM25 k1=${bm25.k1} b=${bm25.b}; indexed in ${seconds.toFixed(1)} s`,
);
console.log('| mode | nDCG@10 | Recall@100 | MRR@10 | ms/query |');
console.log('|---|---|---|---|---|');
for (const row of rows) {
  console.log(
    `| ${row.label} | ${row.ndcgAt10.toFixed(4)} | ${row.recallAt100.toFixed(4)} | ${row.mrrAt10.toFixed(4)} | ${row.msPerQuery.toFixed(2)} |`,
  );
}
const keyword = rows[0].ndcgAt10;
for (const row of rows.filter((row) => row.label.startsWith('hybrid'))) {
  console.log(`${row.label} − keyword nDCG@10: ${(row.ndcgAt10 - keyword).toFixed(4)}`);
}
console.log(`TREC runs: ${outDir}`);
writeFileSync(
  join(outDir, 'summary.json'),
  JSON.stringify({ collection: name, embedder: embedder.id, bm25, rows }, null, 2),
);
await kb.close();
await luceneKb.close();
await ngramKb?.close();
