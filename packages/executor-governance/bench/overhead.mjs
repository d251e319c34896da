// Overhead of the full `governed` stack per call over the bare Toolkit call, side by side in one
// run. Each iteration calls the same trivial tool once through a bare toolkit and once through a
// governed one (order alternating), with fresh arguments each time so that duplicate detection
// does not turn calls into refusals. Writes bench/results/overhead.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Toolkit, defineTool } from '@quiver/core-registry';
import { z } from 'zod';
import { governed } from '../dist/index.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const iterations = Number(process.env.BENCH_ITERATIONS ?? 20_000);
const warmup = Number(process.env.BENCH_WARMUP ?? 5_000);

const add = defineTool({
  name: 'add',
  description: { en: 'Add two numbers', zh: '两数相加' },
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});

const bare = new Toolkit();
bare.register(add);
const governedKit = new Toolkit();
governedKit.register(add);
const governance = governed(governedKit); // every default stage: log, repair, duplicates, cache, size, quality, retry, breaker, concurrency

async function timeCall(toolkit, index) {
  const call = { id: `c${index}`, name: 'add', arguments: `{"a":${index},"b":2}` };
  const started = process.hrtime.bigint();
  const response = await toolkit.callToCompletion(call);
  const elapsed = Number(process.hrtime.bigint() - started) / 1_000; // µs
  if (response.isError) throw new Error(`unexpected error: ${JSON.stringify(response)}`);
  return elapsed;
}

const samples = { bare: [], governed: [] };
for (let index = 0; index < warmup + iterations; index++) {
  const first = index % 2 === 0 ? 'bare' : 'governed';
  const second = first === 'bare' ? 'governed' : 'bare';
  for (const name of [first, second]) {
    const elapsed = await timeCall(name === 'bare' ? bare : governedKit, index);
    if (index >= warmup) samples[name].push(elapsed);
  }
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const round = (value) => Math.round(value * 100) / 100;
const stats = (values) => ({
  p50: round(percentile(values, 50)),
  p99: round(percentile(values, 99)),
  mean: round(values.reduce((sum, v) => sum + v, 0) / values.length),
});
const bareStats = stats(samples.bare);
const governedStats = stats(samples.governed);
const added = {
  p50: round(governedStats.p50 - bareStats.p50),
  p99: round(governedStats.p99 - bareStats.p99),
};

const result = {
  benchmark: 'governed stack overhead per call (trivial tool, callToCompletion)',
  node: process.version,
  iterations,
  warmup,
  unit: 'µs',
  bare: bareStats,
  governed: governedStats,
  added,
  target: { addedP50AtMost: 20 },
  meetsTarget: added.p50 <= 20,
  callRecords: governance.records.length,
};

console.log(`governed stack overhead, ${iterations} calls each (Node ${process.version})`);
console.log('| toolkit | p50 µs | p99 µs | mean µs |');
console.log('|---|---:|---:|---:|');
console.log(`| bare Toolkit | ${bareStats.p50} | ${bareStats.p99} | ${bareStats.mean} |`);
console.log(
  `| governed (all default stages) | ${governedStats.p50} | ${governedStats.p99} | ${governedStats.mean} |`,
);
console.log(`| added by governance | ${added.p50} | ${added.p99} | |`);
console.log(`target: ≤ 20 µs added at p50 → ${result.meetsTarget ? 'met' : 'NOT met'}`);

mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', 'overhead.json'), `${JSON.stringify(result, null, 2)}\n`);
