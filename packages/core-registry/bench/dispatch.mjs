// Dispatch overhead of a trivial zod tool through `toolkit.call` (the async iterable consumed),
// with 0 and with 3 pass-through middlewares, beside the floor: JSON.parse + schema.parse + the
// function. Run with `pnpm bench` after `pnpm build`; writes bench/results/dispatch.json.
import { writeFileSync, mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { Toolkit, defineTool } from '../dist/index.mjs';

const BATCH = 200; // calls per timed sample: a sample is long enough for hrtime, short enough to show jitter
const WARMUP_BATCHES = 300;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 500);

const parameters = z.object({ a: z.number(), b: z.number() });
const add = ({ a, b }) => a + b;
const argumentStrings = ['{"a":1,"b":2}', '{"a":3,"b":4}', '{"a":-5,"b":0.5}', '{"a":1e3,"b":7}'];
const calls = argumentStrings.map((args, index) => ({
  id: `c${index}`,
  name: 'add',
  arguments: args,
}));

function makeToolkit(middlewareCount) {
  const toolkit = new Toolkit();
  toolkit.register(
    defineTool({ name: 'add', description: 'Add two numbers', parameters, execute: add }),
  );
  for (let index = 0; index < middlewareCount; index++) {
    toolkit.use(async function* passThrough(invocation, next) {
      yield* next(invocation);
    });
  }
  return toolkit;
}

let sink = 0; // keeps the optimiser from dropping the work

/** The floor: what any dispatcher must do at least. */
async function floorBatch(offset) {
  for (let index = 0; index < BATCH; index++) {
    const call = calls[(offset + index) % calls.length];
    const args = parameters.parse(JSON.parse(call.arguments));
    sink += add(args);
  }
}

function toolkitBatch(toolkit) {
  return async (offset) => {
    for (let index = 0; index < BATCH; index++) {
      const call = calls[(offset + index) % calls.length];
      for await (const chunk of toolkit.call(call)) {
        if (chunk.isError) throw new Error(`unexpected error response: ${JSON.stringify(chunk)}`);
        sink += chunk.content.length;
      }
    }
  };
}

/**
 * Not a target, a reference: the floor behind the smallest AsyncIterable (one async generator,
 * consumed with for-await). `toolkit.call` returns an AsyncIterable, so this much it always pays.
 */
async function* oneChunk(call) {
  const args = parameters.parse(JSON.parse(call.arguments));
  yield add(args);
}
async function asyncFloorBatch(offset) {
  for (let index = 0; index < BATCH; index++) {
    for await (const value of oneChunk(calls[(offset + index) % calls.length])) sink += value;
  }
}

const cases = [
  { name: 'floor (JSON.parse + schema.parse + fn)', run: floorBatch },
  { name: 'reference: floor in one async generator', run: asyncFloorBatch },
  { name: 'toolkit.call, 0 middlewares', run: toolkitBatch(makeToolkit(0)) },
  { name: 'toolkit.call, 3 middlewares', run: toolkitBatch(makeToolkit(3)) },
];

for (const benchCase of cases) {
  for (let batch = 0; batch < WARMUP_BATCHES; batch++) await benchCase.run(batch);
  benchCase.samples = [];
}
// Interleave the cases sample by sample so drift on a shared machine hits them all alike.
for (let sample = 0; sample < SAMPLES; sample++) {
  for (const benchCase of cases) {
    const start = process.hrtime.bigint();
    await benchCase.run(sample);
    benchCase.samples.push(Number(process.hrtime.bigint() - start) / BATCH);
  }
}

const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const floor = cases[0];
const rows = cases.map((benchCase) => {
  const sorted = [...benchCase.samples].sort((x, y) => x - y);
  const mean = sorted.reduce((total, value) => total + value, 0) / sorted.length;
  return {
    case: benchCase.name,
    p50NsPerCall: Math.round(percentile(sorted, 50)),
    p99NsPerCall: Math.round(percentile(sorted, 99)),
    // Median throughput (one core, undisturbed) and mean throughput (what this run got, pauses
    // of a shared machine included).
    callsPerSecondAtP50: Math.round(1e9 / percentile(sorted, 50)),
    callsPerSecondMean: Math.round(1e9 / mean),
  };
});
const floorP50 = rows[0].p50NsPerCall;
for (const row of rows) row.vsFloorP50 = Number((row.p50NsPerCall / floorP50).toFixed(2));

console.log(
  `dispatch benchmark: ${SAMPLES} samples × ${BATCH} calls per case, Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'}, load average ${loadavg()[0].toFixed(1)}`,
);
console.table(
  rows.map((row) => ({
    case: row.case,
    'p50 ns/call': row.p50NsPerCall,
    'p99 ns/call': row.p99NsPerCall,
    'calls/s (p50)': row.callsPerSecondAtP50.toLocaleString('en-US'),
    'calls/s (mean)': row.callsPerSecondMean.toLocaleString('en-US'),
    '× floor (p50)': row.vsFloorP50,
  })),
);
const targets = rows
  .filter((row) => row.case.startsWith('toolkit'))
  .map((row) => ({
    case: row.case,
    withinThreeTimesFloor: row.vsFloorP50 <= 3,
    atLeast100kCallsPerSecond: row.callsPerSecondAtP50 >= 100_000,
  }));
for (const target of targets) {
  console.log(
    `${target.case}: ≤ 3× floor ${target.withinThreeTimesFloor ? 'yes' : 'NO'}, ≥ 100,000 calls/s (p50) ${target.atLeast100kCallsPerSecond ? 'yes' : 'NO'}`,
  );
}

const here = dirname(fileURLToPath(import.meta.url));
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(
  join(here, 'results', 'dispatch.json'),
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      node: process.version,
      cpu: cpus()[0]?.model,
      loadAverage1m: loadavg()[0],
      batch: BATCH,
      samples: SAMPLES,
      floorName: floor.name,
      rows,
      targets,
      sink: sink > 0,
    },
    null,
    2,
  )}\n`,
);
