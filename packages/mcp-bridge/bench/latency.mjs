// Latency of one MCP tool call through Quiver (Toolkit → MCPManager → SDK client → server) against
// the bare MCP SDK client calling the same server program, side by side in one run, over stdio and
// Streamable HTTP. Each round calls every client once, in a shuffled order, so that machine noise
// hits them alike; each run starts fresh server processes, and the verdict is the median of the
// runs' ratios (RUNS, default 3), since where a run's processes land moves a ratio by up to ±6%.
//
//   pnpm build && pnpm bench            (ITERATIONS=5000 pnpm bench for a longer run)
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MCPManager } from '../dist/index.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const everything = join(
  here,
  '..',
  'node_modules',
  '@modelcontextprotocol',
  'server-everything',
  'dist',
  'index.js',
);
const iterations = Number(process.env.ITERATIONS ?? 2000);
const warmup = Number(process.env.WARMUP ?? 500);
const runs = Number(process.env.RUNS ?? 3);
const TARGET = 1.1;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = samples.reduce((sum, value) => sum + value, 0) / samples.length;
  return {
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    mean: round(mean),
  };
}

const round = (value) => Math.round(value * 1000) / 1000;

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startHttpServer() {
  const port = await freePort();
  const child = spawn(process.execPath, [everything, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise((resolve, reject) => {
    let output = '';
    child.stderr.on('data', (data) => {
      output += data;
      if (/listening on port/i.test(output)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${output}`)));
  });
  child.stderr.resume();
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => child.kill('SIGKILL') };
}

/** A small seeded PRNG (mulberry32): the same call order in every run. */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Time `bridged` (Quiver, gathered with callToCompletion), `streamed` (Quiver, read as a stream
 * with call(), which also asks the server for progress) and `bare`, plus `control`: a second bare
 * client on its own connection (and, for stdio, its own server process). bare-vs-control shows
 * how far two identical clients drift apart on this machine: the noise floor any ratio has to be
 * read against. Each round runs every client once in a shuffled order, so that no client always
 * runs right after the same other one (on this VM, what ran just before moves a call by ±30 µs).
 */
async function measure(label, bridged, streamed, bare, control) {
  const runners = [bridged, streamed, bare, control];
  for (let index = 0; index < warmup; index++) for (const run of runners) await run();
  const samples = runners.map(() => []);
  const next = random(42);
  const order = runners.map((_, index) => index);
  for (let index = 0; index < iterations; index++) {
    for (let slot = order.length - 1; slot > 0; slot--) {
      const other = Math.floor(next() * (slot + 1));
      [order[slot], order[other]] = [order[other], order[slot]];
    }
    for (const which of order) {
      const started = performance.now();
      await runners[which]();
      samples[which].push(performance.now() - started);
    }
  }
  const [quiver, quiverStreamed, sdk, twin] = samples.map(summary);
  return {
    transport: label,
    iterations,
    bareSdkMs: sdk,
    quiverBridgeMs: quiver,
    quiverStreamedMs: quiverStreamed,
    controlBareSdkMs: twin,
    ratioP50: round(quiver.p50 / sdk.p50),
    ratioP99: round(quiver.p99 / sdk.p99),
    streamedRatioP50: round(quiverStreamed.p50 / sdk.p50),
    controlRatioP50: round(twin.p50 / sdk.p50),
  };
}

const args = { message: 'ping' };

const call = { id: 'b', name: 'everything__echo', arguments: JSON.stringify(args) };

/**
 * The four clients of one transport, measured: Quiver gathered, Quiver streamed, bare, control.
 * `newManager` and `newClient` connect a fresh MCPManager or SDK Client to a server of their own.
 */
async function measureClients(label, newManager, newClient) {
  const gathered = await newManager();
  const streamed = await newManager();
  const bare = await newClient();
  const control = await newClient();
  try {
    return await measure(
      label,
      async () => {
        const response = await gathered.toolkit.callToCompletion(call);
        if (response.isError) throw new Error(JSON.stringify(response));
      },
      async () => {
        for await (const chunk of streamed.toolkit.call(call)) {
          if (chunk.isError) throw new Error(JSON.stringify(chunk));
        }
      },
      () => bare.callTool({ name: 'echo', arguments: args }),
      () => control.callTool({ name: 'echo', arguments: args }),
    );
  } finally {
    for (const each of [gathered, streamed, bare, control]) await each.close();
  }
}

// stdio: each client has its own server processes (the same server program).
function measureStdio() {
  return measureClients(
    'stdio',
    async () => {
      const manager = new MCPManager({
        servers: { everything: { command: process.execPath, args: [everything, 'stdio'] } },
      });
      await manager.connect();
      return manager;
    },
    async () => {
      const client = new Client({ name: 'bench', version: '1' });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [everything, 'stdio'],
          stderr: 'ignore',
        }),
      );
      return client;
    },
  );
}

// Streamable HTTP: one server process, sessions of their own for each client.
async function measureHttp() {
  const server = await startHttpServer();
  try {
    return await measureClients(
      'streamable-http',
      async () => {
        const manager = new MCPManager({ servers: { everything: { url: server.url } } });
        await manager.connect();
        return manager;
      },
      async () => {
        const client = new Client({ name: 'bench', version: '1' });
        await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
        return client;
      },
    );
  } finally {
    server.stop();
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const results = [];
for (const [transport, run] of [
  ['stdio', measureStdio],
  ['streamable-http', measureHttp],
]) {
  const perRun = [];
  for (let index = 0; index < runs; index++) {
    perRun.push(await run());
    console.error(`${transport}: run ${index + 1} of ${runs} done`);
  }
  results.push({
    transport,
    runs: perRun,
    medianRatioP50: round(median(perRun.map((row) => row.ratioP50))),
    medianStreamedRatioP50: round(median(perRun.map((row) => row.streamedRatioP50))),
    medianControlRatioP50: round(median(perRun.map((row) => row.controlRatioP50))),
  });
}

const rows = results.flatMap(({ transport, runs: perRun, medianRatioP50 }) => [
  ...perRun.map((row, index) => ({
    transport: `${transport} run ${index + 1}`,
    'bare SDK p50 (ms)': row.bareSdkMs.p50,
    'Quiver p50 (ms)': row.quiverBridgeMs.p50,
    'Quiver streamed p50 (ms)': row.quiverStreamedMs.p50,
    'bare SDK p99 (ms)': row.bareSdkMs.p99,
    'Quiver p99 (ms)': row.quiverBridgeMs.p99,
    'ratio p50': row.ratioP50,
    'streamed ratio p50': row.streamedRatioP50,
    'control ratio p50': row.controlRatioP50,
  })),
  {
    transport: `${transport} median of ${perRun.length}`,
    'ratio p50': medianRatioP50,
    [`within ${TARGET}x (p50)`]: medianRatioP50 <= TARGET ? 'yes' : 'NO',
  },
]);
console.table(rows);

const output = {
  benchmark:
    'mcp-bridge tool-call latency: Quiver Toolkit + MCPManager vs bare @modelcontextprotocol/sdk Client',
  server: '@modelcontextprotocol/server-everything "echo" tool',
  target: `Quiver p50 within ${TARGET}x of the bare client`,
  node: process.version,
  cpus: `${cpus().length} x ${cpus()[0]?.model ?? 'unknown'}`,
  date: new Date().toISOString(),
  warmup,
  runs,
  loadAverage: loadavg().map(round),
  note: `control = a second bare SDK client: control ratio = noise floor of this machine. Each run starts fresh server processes; each client has a connection of its own (stdio: its own server process). The verdict is the median of the runs' p50 ratios.`,
  results,
};
await mkdir(join(here, 'results'), { recursive: true });
await writeFile(join(here, 'results', 'latency.json'), `${JSON.stringify(output, null, 2)}\n`);
console.log(`wrote ${join('bench', 'results', 'latency.json')}`);
