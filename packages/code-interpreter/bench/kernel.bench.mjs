// Side-by-side benchmark: this package's Node client vs Python's jupyter_client, both driving the
// same ipykernel with the same Python, in alternating rounds within one run (the machine's load
// drifts; alternating keeps the comparison fair). Writes bench/results/kernel.json.
//
//   pnpm build && pnpm bench            (ROUNDS=3 TRIPS=100 COLD=3 by default)
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CodeInterpreter, Kernel, detectSandbox, findPython } from '../dist/index.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const TRIPS = Number(process.env.TRIPS ?? 100);
const COLD = Number(process.env.COLD ?? 3);

const python = await findPython();
const sandbox = await detectSandbox();
const workRoot = mkdtempSync(join(tmpdir(), 'qci-bench-'));
let counter = 0;

const median = (values) => percentile(values, 0.5);
function percentile(values, fraction) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.round(fraction * (sorted.length - 1)))];
}

async function startKernel(mode) {
  const sessionRoot = join(workRoot, `k${++counter}`);
  const workDir = join(sessionRoot, 'work');
  mkdirSync(workDir, { recursive: true });
  return Kernel.start({
    python,
    sandbox: mode,
    bubblewrapPath: sandbox.bubblewrapPath,
    sessionRoot,
    workDir,
    memoryLimitMb: 4096,
  });
}

// Unsandboxed and sandboxed kernels are measured in interleaved blocks, so load drift does not
// favour either.
async function nodeRound(modes) {
  for (let i = 0; i < COLD; i++) {
    for (const [mode, samples] of modes) {
      const began = performance.now();
      const kernel = await startKernel(mode);
      samples.coldStartMs.push(performance.now() - began);
      await kernel.shutdown({ graceMs: 0 });
    }
  }
  const kernels = [];
  for (const [mode, samples] of modes) kernels.push([await startKernel(mode), samples]);
  for (const [kernel] of kernels) for (let i = 0; i < 20; i++) await kernel.execute('1+1');
  for (let block = 0; block < TRIPS / 10; block++) {
    for (const [kernel, samples] of kernels) {
      for (let i = 0; i < 10; i++) {
        const began = performance.now();
        const run = await kernel.execute('1+1');
        samples.roundTripMs.push(performance.now() - began);
        if (run.status !== 'ok') throw new Error(`1+1 failed: ${JSON.stringify(run)}`);
      }
    }
  }
  for (const [kernel] of kernels) await kernel.execute('import matplotlib.pyplot as plt');
  for (let i = 0; i < 5; i++) {
    for (const [kernel, samples] of kernels) {
      const began = performance.now();
      const run = await kernel.execute('plt.plot([1, 3, 2]); plt.show()');
      samples.plotRoundTripMs.push(performance.now() - began);
      if (!run.outputs.some((output) => output.type === 'display' && 'image/png' in output.data)) {
        throw new Error('no PNG');
      }
    }
  }
  for (let i = 0; i < 3; i++) {
    for (const [kernel, samples] of kernels) {
      const looping = kernel.execute('while True:\n    pass');
      await new Promise((resolve) => setTimeout(resolve, 100));
      const began = performance.now();
      await kernel.interrupt();
      await looping;
      await kernel.execute('1+1');
      samples.interruptToUsableMs.push(performance.now() - began);
    }
  }
  for (const [kernel] of kernels) await kernel.shutdown();
}

async function poolRound(samples) {
  const interpreter = new CodeInterpreter({ workRoot, poolSize: 1, sandbox: 'none' });
  await interpreter.start();
  for (let i = 0; i < 5; i++) {
    // Let the pool's kernel finish starting, as it would between an agent's conversations.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const began = performance.now();
    const id = await interpreter.openSession();
    samples.poolAcquireMs.push(performance.now() - began);
    await interpreter.closeSession(id);
  }
  await interpreter.close();
}

function pythonRound() {
  return new Promise((resolve, reject) => {
    execFile(
      python.executable,
      [join(here, 'jupyter_client_bench.py'), String(TRIPS), String(COLD)],
      { maxBuffer: 16 * 1024 * 1024, timeout: 600_000 },
      (error, stdout) =>
        error ? reject(error) : resolve(JSON.parse(stdout.trim().split('\n').pop())),
    );
  });
}

const empty = () => ({
  coldStartMs: [],
  roundTripMs: [],
  plotRoundTripMs: [],
  interruptToUsableMs: [],
  poolAcquireMs: [],
});
const node = empty();
const sandboxed = empty();
const baseline = empty();
let jupyterClientVersion = '';
const loadBefore = loadavg()[0];
for (let round = 0; round < ROUNDS; round++) {
  const py = await pythonRound();
  jupyterClientVersion = py.jupyterClient;
  for (const key of Object.keys(baseline)) baseline[key].push(...(py[key] ?? []));
  await nodeRound(
    sandbox.mode === 'bubblewrap'
      ? [
          ['none', node],
          ['bubblewrap', sandboxed],
        ]
      : [['none', node]],
  );
  await poolRound(node);
}

const summary = (samples) => ({
  coldStartMs: median(samples.coldStartMs),
  roundTripP50Ms: median(samples.roundTripMs),
  roundTripP95Ms: percentile(samples.roundTripMs, 0.95),
  plotRoundTripMs: median(samples.plotRoundTripMs),
  interruptToUsableMs: median(samples.interruptToUsableMs),
  poolAcquireMs: samples.poolAcquireMs.length ? median(samples.poolAcquireMs) : null,
  roundTrips: samples.roundTripMs.length,
});
const results = {
  date: new Date().toISOString(),
  machine: {
    cpus: (await import('node:os')).cpus().length,
    loadAverageAtStart: loadBefore,
    loadAverageAtEnd: loadavg()[0],
  },
  python: python.executable,
  ipykernel: python.ipykernelVersion,
  jupyterClient: jupyterClientVersion,
  rounds: ROUNDS,
  jupyter_client: summary(baseline),
  quiver: summary(node),
  quiverSandboxed: sandbox.mode === 'bubblewrap' ? summary(sandboxed) : null,
};

const fmt = (value) => (value === null || value === undefined ? '—' : value.toFixed(1));
const rows = [
  ['kernel cold start (median)', 'coldStartMs'],
  ['`1+1` round trip p50', 'roundTripP50Ms'],
  ['`1+1` round trip p95', 'roundTripP95Ms'],
  ['matplotlib PNG round trip (median)', 'plotRoundTripMs'],
  ['interrupt to usable (median)', 'interruptToUsableMs'],
  ['session from warm pool (median)', 'poolAcquireMs'],
];
const lines = [
  `| ms | jupyter_client ${jupyterClientVersion} | @quiver/code-interpreter | sandboxed (bubblewrap) |`,
  '|---|---:|---:|---:|',
  ...rows.map(
    ([label, key]) =>
      `| ${label} | ${fmt(results.jupyter_client[key])} | ${fmt(results.quiver[key])} | ${fmt(results.quiverSandboxed?.[key])} |`,
  ),
];
console.log(lines.join('\n'));
console.log(
  `\n${results.quiver.roundTrips} round trips per client; load average ${loadBefore.toFixed(1)} -> ${loadavg()[0].toFixed(1)} on ${results.machine.cpus} CPUs`,
);
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', 'kernel.json'), `${JSON.stringify(results, null, 2)}\n`);
rmSync(workRoot, { recursive: true, force: true });
