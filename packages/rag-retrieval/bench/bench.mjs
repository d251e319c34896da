#!/usr/bin/env node
// Knowledge-base benchmark: indexing throughput (offline embedder), query latency p50/p99 per mode,
// memory, commit and reopen time, at 10k chunks (default) and 100k (`--sizes 10000,100000`).
// Baseline, side by side: an exact (brute-force) cosine scan over the same vectors, for vector
// latency and for HNSW's recall@10.
//   pnpm --filter @quiver/rag-retrieval bench [-- --sizes 10000,100000]
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { HashedNgramEmbedder, KnowledgeBase } from '../dist/index.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000' },
    queries: { type: 'string', default: '300' },
  },
});
const sizes = values.sizes.split(',').map(Number);

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

const results = [];
for (const size of sizes) {
  const directory = mkdtempSync(join(tmpdir(), 'quiver-rag-bench-'));
  const embedder = new HashedNgramEmbedder();
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const knowledgeBase = await KnowledgeBase.open({ directory, embedder });
  const chunks = Array.from({ length: size }, (_, i) => makeChunk(i));
  let started = performance.now();
  const cpuStarted = process.cpuUsage();
  for (let i = 0; i < size; i += 10) {
    const batch = chunks.slice(i, i + 10);
    await knowledgeBase.addDocument({ source: batch[0].source, chunks: batch });
  }
  const indexSeconds = (performance.now() - started) / 1000;
  const indexCpuSeconds = process.cpuUsage(cpuStarted).user / 1e6;
  started = performance.now();
  await knowledgeBase.commit();
  const commitSeconds = (performance.now() - started) / 1000;
  const rssAfter = process.memoryUsage().rss;
  const diskBytes = readdirSync(directory).reduce(
    (sum, name) => sum + statSync(join(directory, name)).size,
    0,
  );

  const queries = Array.from(
    { length: Number(values.queries) },
    (_, i) => queryTexts[i % queryTexts.length],
  );
  const latency = {};
  for (const mode of ['keyword', 'vector', 'hybrid']) {
    for (const query of queries.slice(0, 20)) await knowledgeBase.search({ query, mode, topK: 10 }); // warm-up
    const times = [];
    for (const query of queries) {
      const t = performance.now();
      await knowledgeBase.search({ query, mode, topK: 10 });
      times.push(performance.now() - t);
    }
    latency[mode] = { p50: percentile(times, 50), p99: percentile(times, 99) };
  }

  // Baseline: exact cosine over all vectors (what a vector store without an ANN index does).
  const vectors = chunks.map((chunk) => Float32Array.from(embedder.embedOne(chunk.text)));
  const exactTimes = [];
  let recallHits = 0;
  let recallTotal = 0;
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
    const { hits } = await knowledgeBase.search({ query, mode: 'vector', topK: 10, dedupe: false });
    const found = new Set(hits.map((hit) => hit.chunk.id));
    recallHits += exact.filter((i) => found.has(chunks[i].id)).length;
    recallTotal += exact.length;
  }
  await knowledgeBase.close();

  global.gc?.();
  started = performance.now();
  const reopened = await KnowledgeBase.open({ directory, embedder, readOnly: true });
  const reopenSeconds = (performance.now() - started) / 1000;
  await reopened.search({ query: queries[0], topK: 10 });
  await reopened.close();
  rmSync(directory, { recursive: true, force: true });

  const row = {
    chunks: size,
    indexChunksPerSecond: size / indexSeconds,
    indexChunksPerCpuSecond: size / indexCpuSeconds,
    loadAverage: loadavg()[0],
    commitSeconds,
    reopenSeconds,
    memoryMb: mb(rssAfter - rssBefore),
    diskMb: mb(diskBytes),
    latencyMs: latency,
    exactScanBaselineMs: { p50: percentile(exactTimes, 50), p99: percentile(exactTimes, 99) },
    hnswRecallAt10: recallHits / recallTotal,
  };
  results.push(row);
  console.error(`done ${size}`);
}

console.log(
  `embedder: offline HashedNgramEmbedder (1024 dims); HNSW M=16, efConstruction=200, ef=200; Node ${process.version}`,
);
console.log(
  `load average while running: ${results.map((row) => row.loadAverage.toFixed(1)).join(', ')} (2 cores; wall-clock figures are inflated by other processes)`,
);
console.log(
  '| chunks | index chunks/s (wall / per CPU s) | commit s | reopen s | RSS MB | disk MB | keyword p50/p99 ms | vector p50/p99 ms | hybrid p50/p99 ms | exact-scan baseline p50/p99 ms | HNSW recall@10 |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
const pair = (l) => `${l.p50.toFixed(2)} / ${l.p99.toFixed(2)}`;
for (const row of results) {
  console.log(
    `| ${row.chunks} | ${row.indexChunksPerSecond.toFixed(0)} / ${row.indexChunksPerCpuSecond.toFixed(0)} | ${row.commitSeconds.toFixed(2)} | ${row.reopenSeconds.toFixed(2)} | ${row.memoryMb.toFixed(0)} | ${row.diskMb.toFixed(0)} | ${pair(row.latencyMs.keyword)} | ${pair(row.latencyMs.vector)} | ${pair(row.latencyMs.hybrid)} | ${pair(row.exactScanBaselineMs)} | ${row.hnswRecallAt10.toFixed(3)} |`,
  );
}
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(
  join(here, 'results', `knowledge-base-${sizes.join('-')}.json`),
  JSON.stringify({ node: process.version, results }, null, 2),
);
