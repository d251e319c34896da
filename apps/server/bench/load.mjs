#!/usr/bin/env node
// Load test of the demo server on 127.0.0.1: many concurrent tool calls (a mix of instant tools
// and streamed ones), checking every answer, reporting throughput, p50/p99 latency and memory.
// Usage: node bench/load.mjs [--requests 4000] [--concurrency 200]
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Toolkit } from '@quiver/core-registry';
import { exampleTools } from '@quiver/core-registry/examples';
import { startServer } from '../dist/index.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? Number(args[index + 1]) : fallback;
};
const total = option('requests', 4000);
const concurrency = option('concurrency', 200);

const toolkit = new Toolkit();
for (const tool of exampleTools) toolkit.register(tool);
const server = await startServer({ toolkit }, { port: 0 });

async function one(index) {
  const streamed = index % 5 === 0;
  const started = performance.now();
  const response = await fetch(`${server.url}/v1/tools/${streamed ? 'countdown' : 'calculator'}/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(
      streamed ? { arguments: { from: 3, intervalMs: 0 }, stream: true } : { arguments: { expression: `${index} * 7` } },
    ),
  });
  const text = await response.text();
  const elapsed = performance.now() - started;
  const ok = streamed ? text.includes('liftoff') : JSON.parse(text).response.content[0].text === String(index * 7);
  return { elapsed, ok, streamed };
}

const rssBefore = process.memoryUsage().rss;
const latencies = { fast: [], streamed: [] };
let failures = 0;
let next = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < total) {
      const result = await one(next++);
      if (!result.ok) failures++;
      latencies[result.streamed ? 'streamed' : 'fast'].push(result.elapsed);
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
const rssAfter = process.memoryUsage().rss;
await server.close();

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const rows = Object.entries(latencies).map(([kind, values]) => ({
  kind,
  requests: values.length,
  p50_ms: Number(percentile(values, 50).toFixed(2)),
  p99_ms: Number(percentile(values, 99).toFixed(2)),
}));
const result = {
  date: new Date().toISOString(),
  node: process.version,
  requests: total,
  concurrency,
  failures,
  throughput_rps: Math.round(total / seconds),
  rss_mb_before: Math.round(rssBefore / 1e6),
  rss_mb_after: Math.round(rssAfter / 1e6),
  latency: rows,
};
console.log(`${total} requests, ${concurrency} concurrent, ${failures} wrong or lost answers`);
console.log(`throughput ${result.throughput_rps} req/s; RSS ${result.rss_mb_before} → ${result.rss_mb_after} MB (client and server in one process)`);
console.table(rows);
const out = join(dirname(fileURLToPath(import.meta.url)), 'results');
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'load.json'), `${JSON.stringify(result, null, 2)}\n`);
process.exitCode = failures > 0 ? 1 : 0;
