#!/usr/bin/env node
// Load test of the demo server on 127.0.0.1: many concurrent tool calls (a mix of instant tools,
// streamed ones, and Python runs in IPython kernels across sessions), checking every answer
// (a kernel answer must come from its own session), reporting throughput, p50/p99 latency and memory.
// Usage: node bench/load.mjs [--requests 4000] [--concurrency 200] [--sessions 4] [--kernel-every 10]
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Toolkit } from '@quiver/core-registry';
import { exampleTools } from '@quiver/core-registry/examples';
import { CodeInterpreter, createCodeInterpreterTool } from '@quiver/code-interpreter';
import { startServer } from '../dist/index.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? Number(args[index + 1]) : fallback;
};
const total = option('requests', 4000);
const concurrency = option('concurrency', 200);
const sessions = option('sessions', 4);
// Every n-th request runs Python in a kernel (0: none).
const kernelEvery = option('kernel-every', 10);

const toolkit = new Toolkit();
for (const tool of exampleTools) toolkit.register(tool);
const interpreter = new CodeInterpreter({ poolSize: 0, maxKernels: sessions });
toolkit.register(createCodeInterpreterTool({ interpreter }));
toolkit.onClose(() => interpreter.close());
const server = await startServer({ toolkit }, { port: 0 });

async function post(path, body) {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return response.text();
}

async function one(index) {
  const kind =
    kernelEvery > 0 && index % kernelEvery === 0 ? 'kernel' : index % 5 === 0 ? 'streamed' : 'fast';
  const started = performance.now();
  let ok;
  if (kind === 'kernel') {
    // Each session counts its own runs: a run landing in another session's kernel shows.
    const session = index % sessions;
    const text = await post('/v1/tools/code_interpreter/call', {
      arguments: {
        code: `seen = globals().get("seen", []) + [${index}]\nprint(all(i % ${sessions} == ${session} for i in seen), ${index} * 7)`,
      },
      sessionId: `bench-${session}`,
    });
    ok =
      JSON.parse(text)
        .response.content.map((block) => block.text ?? '')
        .join('')
        .trim() === `True ${index * 7}`;
  } else if (kind === 'streamed') {
    const text = await post('/v1/tools/countdown/call', {
      arguments: { from: 3, intervalMs: 0 },
      stream: true,
    });
    ok = text.includes('liftoff');
  } else {
    const text = await post('/v1/tools/calculator/call', {
      arguments: { expression: `${index} * 7` },
    });
    ok = JSON.parse(text).response.content[0].text === String(index * 7);
  }
  return { elapsed: performance.now() - started, ok, kind };
}

// Start the session kernels before measuring: start-up is not what this measures.
await Promise.all(
  Array.from({ length: sessions }, (_, session) =>
    post('/v1/tools/code_interpreter/call', {
      arguments: { code: 'seen = []' },
      sessionId: `bench-${session}`,
    }),
  ),
);

const rssBefore = process.memoryUsage().rss;
const latencies = { fast: [], streamed: [], kernel: [] };
let failures = 0;
let next = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < total) {
      const result = await one(next++);
      if (!result.ok) failures++;
      latencies[result.kind].push(result.elapsed);
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
const rows = Object.entries(latencies)
  .filter(([, values]) => values.length > 0)
  .map(([kind, values]) => ({
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
  kernelSessions: sessions,
  failures,
  throughput_rps: Math.round(total / seconds),
  rss_mb_before: Math.round(rssBefore / 1e6),
  rss_mb_after: Math.round(rssAfter / 1e6),
  latency: rows,
};
console.log(
  `${total} requests (${latencies.kernel.length} kernel runs in ${sessions} sessions), ${concurrency} concurrent, ${failures} wrong, lost or crossed answers`,
);
console.log(
  `throughput ${result.throughput_rps} req/s; RSS ${result.rss_mb_before} → ${result.rss_mb_after} MB (client and server in one process)`,
);
console.table(rows);
const out = join(dirname(fileURLToPath(import.meta.url)), 'results');
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'load.json'), `${JSON.stringify(result, null, 2)}\n`);
process.exitCode = failures > 0 ? 1 : 0;
