#!/usr/bin/env node
// Knowledge-base benchmark: indexing throughput (offline embedder), query latency p50/p99 per mode,
// memory, commit and reopen time, at 10k chunks (default) and 100k (`--sizes 10000,100000`).
// Baseline, side by side: an exact (brute-force) cosine scan over the same vectors, for vector
// latency and for HNSW's recall@10.
//   pnpm --filter @quiver/rag-retrieval bench [-- --sizes 10000,100000]
// Iterating on query speed (building 100k chunks takes ~10 minutes, reopening ~2 s):
//   --keep-dir DIR        build each size's knowledge base in DIR/<size> once, then reopen it and
//                         only measure queries (the indexing, commit and memory columns stay empty)
//   --baseline-dist DIR   also run another build of this package (a copy of dist/ taken before a
//                         change, kept under node_modules/ so its imports resolve) on the same
//                         knowledge base, queries interleaved, and print both side by side
//   --skip-exact          skip the exact-scan baseline and recall (embeds every chunk: slow at 100k)
//   --embedder NAME       lsa (default: the knowledge base's own default, LsaEmbedder fitted to the
//                         chunks, 128 dims) or ngram (HashedNgramEmbedder, 1024 dims, no fitting)
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { HashedNgramEmbedder, KnowledgeBase, LsaEmbedder } from '../dist/index.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000' },
    queries: { type: 'string', default: '300' },
    'keep-dir': { type: 'string' },
    'baseline-dist': { type: 'string' },
    'skip-exact': { type: 'boolean', default: false },
    embedder: { type: 'string', default: 'lsa' },
  },
});
const embedderNames = {
  lsa: 'offline LsaEmbedder fitted to the chunks (128 dims; the KnowledgeBase default)',
  ngram: 'offline HashedNgramEmbedder (1024 dims)',
};
if (!(values.embedder in embedderNames)) {
  console.error(`--embedder must be one of: ${Object.keys(embedderNames).join(', ')}`);
  process.exit(2);
}
/** A new embedder of the chosen kind from `module` (this build, or the baseline build). */
const makeEmbedder = (module) =>
  values.embedder === 'lsa' ? new module.LsaEmbedder() : new module.HashedNgramEmbedder();
const sizes = values.sizes.split(',').map(Number);
const keepDirectory = values['keep-dir'] && resolve(values['keep-dir']);
const baselineModule =
  values['baseline-dist'] &&
  (await import(pathToFileURL(join(resolve(values['baseline-dist']), 'index.mjs')).href));

// Realistic text: sentences of the 300 Cranfield abstracts in the test fixture, recombined with a
// seeded generator into chunks of 40–120 words.
const fixture = join(here, '..', 'test', 'fixtures', 'cranfield-mini');
const sentences = readFileSync(join(fixture, 'corpus.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .flatMap((line) => JSON.parse(line).text.split(/\s*\.\s+/))
  .map((sentence) => sentence.replace(/\s+/g, ' ').trim())
  .filter((sentence) => sentence.split(' ').length >= 5);
const queryTexts = readFileSync(join(fixture, 'queries.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line).text);
let seed = 42;
const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
function makeChunk(i) {
  const words = 40 + Math.floor(random() * 80);
  let text = '';
  while (text.split(' ').length < words)
    text += `${sentences[Math.floor(random() * sentences.length)]}. `;
  return {
    id: `c${i}`,
    index: i % 10,
    text: text.trim(),
    source: `doc-${Math.floor(i / 10)}`,
    page: 1 + (i % 10),
    headingPath: [],
    tokenCount: words,
  };
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const mb = (bytes) => bytes / 1024 / 1024;

/** p50/p99 of each search mode; with several knowledge bases, their queries interleave. */
async function measureLatency(knowledgeBases, queries) {
  const latency = knowledgeBases.map(() => ({}));
  for (const mode of ['keyword', 'vector', 'hybrid']) {
    for (const knowledgeBase of knowledgeBases) {
      for (const query of queries.slice(0, 20))
        await knowledgeBase.search({ query, mode, topK: 10 }); // warm-up
    }
    const times = knowledgeBases.map(() => []);
    for (const [i, query] of queries.entries()) {
      for (let j = 0; j < knowledgeBases.length; j++) {
        // Alternate which one goes first, so neither always runs with a warmer cache.
        const which = (i + j) % knowledgeBases.length;
        const t = performance.now();
        await knowledgeBases[which].search({ query, mode, topK: 10 });
        times[which].push(performance.now() - t);
      }
    }
    times.forEach((list, which) => {
      latency[which][mode] = { p50: percentile(list, 50), p99: percentile(list, 99) };
    });
  }
  return latency;
}

const results = [];
const baselineResults = [];
for (const size of sizes) {
  const directory = keepDirectory
    ? join(keepDirectory, String(size))
    : mkdtempSync(join(tmpdir(), 'quiver-rag-bench-'));
  const reuse = existsSync(join(directory, 'manifest.json'));
  const embedder = makeEmbedder({ HashedNgramEmbedder, LsaEmbedder });
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let started = performance.now();
  const knowledgeBase = await KnowledgeBase.open({ directory, embedder, readOnly: reuse });
  let reopenSeconds = reuse ? (performance.now() - started) / 1000 : undefined;
  const chunks = Array.from({ length: size }, (_, i) => makeChunk(i));
  let indexSeconds, indexCpuSeconds, commitSeconds, memoryMb;
  if (!reuse) {
    started = performance.now();
    const cpuStarted = process.cpuUsage();
    for (let i = 0; i < size; i += 10) {
      const batch = chunks.slice(i, i + 10);
      await knowledgeBase.addDocument({ source: batch[0].source, chunks: batch });
    }
    indexSeconds = (performance.now() - started) / 1000;
    indexCpuSeconds = process.cpuUsage(cpuStarted).user / 1e6;
    started = performance.now();
    await knowledgeBase.commit();
    commitSeconds = (performance.now() - started) / 1000;
    memoryMb = mb(process.memoryUsage().rss - rssBefore);
  }
  const diskBytes = readdirSync(directory).reduce(
    (sum, name) => sum + statSync(join(directory, name)).size,
    0,
  );

  const queries = Array.from(
    { length: Number(values.queries) },
    (_, i) => queryTexts[i % queryTexts.length],
  );
  const baselineKnowledgeBase =
    baselineModule &&
    (await baselineModule.KnowledgeBase.open({
      directory,
      embedder: makeEmbedder(baselineModule),
      readOnly: true,
    }));
  const [latency, baselineLatency] = await measureLatency(
    baselineKnowledgeBase ? [knowledgeBase, baselineKnowledgeBase] : [knowledgeBase],
    queries,
  );
  await baselineKnowledgeBase?.close();

  // Baseline: exact cosine over all vectors (what a vector store without an ANN index does).
  const exactTimes = [];
  let recallHits = 0;
  let recallTotal = 0;
  if (!values['skip-exact']) {
    const vectors = chunks.map((chunk) => Float32Array.from(embedder.embedOne(chunk.text)));
    for (const query of queries.slice(0, 100)) {
      const t = performance.now();
      const q = embedder.embedOne(query);
      const scores = new Float32Array(vectors.length);
      for (let i = 0; i < vectors.length; i++) {
        let dot = 0;
        const v = vectors[i];
        for (let d = 0; d < v.length; d++) dot += v[d] * q[d];
        scores[i] = dot;
      }
      const exact = [...scores.keys()].sort((a, b) => scores[b] - scores[a]).slice(0, 10);
      exactTimes.push(performance.now() - t);
      const { hits } = await knowledgeBase.search({
        query,
        mode: 'vector',
        topK: 10,
        dedupe: false,
      });
      const found = new Set(hits.map((hit) => hit.chunk.id));
      recallHits += exact.filter((i) => found.has(chunks[i].id)).length;
      recallTotal += exact.length;
    }
  }
  await knowledgeBase.close();

  if (!reuse) {
    global.gc?.();
    started = performance.now();
    // A fresh embedder, as a new process would have: a fitted one reads its model from disk.
    const reopened = await KnowledgeBase.open({
      directory,
      embedder: makeEmbedder({ HashedNgramEmbedder, LsaEmbedder }),
      readOnly: true,
    });
    reopenSeconds = (performance.now() - started) / 1000;
    await reopened.search({ query: queries[0], topK: 10 });
    await reopened.close();
  }
  if (!keepDirectory) rmSync(directory, { recursive: true, force: true });

  const row = {
    chunks: size,
    ...(reuse ? { reusedDirectory: true } : {}),
    indexChunksPerSecond: indexSeconds && size / indexSeconds,
    indexChunksPerCpuSecond: indexCpuSeconds && size / indexCpuSeconds,
    // A fitted embedder embeds at commit (it is fitted then): adding alone says little there.
    addAndCommitChunksPerSecond: indexSeconds && size / (indexSeconds + commitSeconds),
    loadAverage: loadavg()[0],
    commitSeconds,
    reopenSeconds,
    memoryMb,
    diskMb: mb(diskBytes),
    latencyMs: latency,
    exactScanBaselineMs: exactTimes.length
      ? { p50: percentile(exactTimes, 50), p99: percentile(exactTimes, 99) }
      : undefined,
    hnswRecallAt10: recallTotal ? recallHits / recallTotal : undefined,
  };
  results.push(row);
  if (baselineLatency) baselineResults.push({ chunks: size, latencyMs: baselineLatency });
  console.error(`done ${size}`);
}

console.log(
  `embedder: ${embedderNames[values.embedder]}; HNSW M=16, efConstruction=200, ef=200; Node ${process.version}`,
);
console.log(
  `load average while running: ${results.map((row) => row.loadAverage.toFixed(1)).join(', ')} (2 cores; wall-clock figures are inflated by other processes)`,
);
console.log(
  '| chunks | add chunks/s (wall / per CPU s) | commit s | add + commit chunks/s | reopen s | RSS MB | disk MB | keyword p50/p99 ms | vector p50/p99 ms | hybrid p50/p99 ms | exact-scan baseline p50/p99 ms | HNSW recall@10 |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
const fixed = (value, digits) => (value === undefined ? '—' : value.toFixed(digits));
const pair = (l) => (l ? `${l.p50.toFixed(2)} / ${l.p99.toFixed(2)}` : '—');
for (const row of results) {
  console.log(
    `| ${row.chunks} | ${fixed(row.indexChunksPerSecond, 0)} / ${fixed(row.indexChunksPerCpuSecond, 0)} | ${fixed(row.commitSeconds, 2)} | ${fixed(row.addAndCommitChunksPerSecond, 0)} | ${fixed(row.reopenSeconds, 2)} | ${fixed(row.memoryMb, 0)} | ${fixed(row.diskMb, 0)} | ${pair(row.latencyMs.keyword)} | ${pair(row.latencyMs.vector)} | ${pair(row.latencyMs.hybrid)} | ${pair(row.exactScanBaselineMs)} | ${fixed(row.hnswRecallAt10, 3)} |`,
  );
}
if (baselineResults.length > 0) {
  console.log(`\nSide by side with ${values['baseline-dist']} (queries interleaved):`);
  console.log('| chunks | build | keyword p50/p99 ms | vector p50/p99 ms | hybrid p50/p99 ms |');
  console.log('|---|---|---|---|---|');
  baselineResults.forEach((baselineRow, i) => {
    for (const [name, { latencyMs }] of [
      ['baseline', baselineRow],
      ['this build', results[i]],
    ]) {
      console.log(
        `| ${baselineRow.chunks} | ${name} | ${pair(latencyMs.keyword)} | ${pair(latencyMs.vector)} | ${pair(latencyMs.hybrid)} |`,
      );
    }
  });
}
// Query-only runs (a reused directory or a side-by-side comparison) do not overwrite the full results.
if (!keepDirectory && !baselineModule) {
  mkdirSync(join(here, 'results'), { recursive: true });
  writeFileSync(
    join(here, 'results', `knowledge-base-${values.embedder}-${sizes.join('-')}.json`),
    JSON.stringify({ node: process.version, embedder: values.embedder, results }, null, 2),
  );
}
