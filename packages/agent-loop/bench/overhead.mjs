// Framework overhead per agent run with no model latency: Quiver's FnCallAgent vs Vercel's AI SDK.
//
// Scenarios: (1) one tool call, then a final answer; (2) ten parallel tool calls, then a final
// answer. Like is compared with like: both frameworks run in-process against a scripted model
// that answers instantly (our ScriptedChatModel through the ChatModel interface; the AI SDK's
// MockLanguageModelV3), with the same zod-validated `add` tool. Quiver is also measured over
// HTTP (OpenAIChatModel + the real openai SDK against the local OpenAI-compatible test server),
// which adds JSON, SSE and sockets: that row is the cost of a real endpoint at zero latency.
//
// Run: pnpm build && pnpm bench   (writes bench/results/overhead.json)
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineTool } from '@quiver/core-registry';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { MockLanguageModelV3, convertArrayToReadableStream } from 'ai/test';
import { z } from 'zod';
import { FnCallAgent, OpenAIChatModel } from '../dist/index.mjs';
import { ScriptedChatModel, startOpenAITestServer } from '../dist/testing.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
const ITERATIONS = quick ? 200 : 2000;
const HTTP_ITERATIONS = quick ? 50 : 300;
const WARMUP = quick ? 30 : 200;

const scenarios = [
  { name: 'one tool call + answer', calls: 1 },
  { name: 'ten parallel tool calls + answer', calls: 10 },
];
const argsFor = (index) => ({ a: index, b: index + 1 });
const FINAL = 'The sums are ready.';
const addSchema = z.object({ a: z.number(), b: z.number() });

// ------------------------------------------------------------------ Quiver
const quiverAdd = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: addSchema,
  execute: ({ a, b }) => String(a + b),
});

function quiverScript(calls) {
  return (request) => {
    const last = request.body.messages.at(-1);
    if (last.role === 'tool')
      return { text: FINAL, chunkSize: Infinity, usage: { promptTokens: 10, completionTokens: 5 } };
    return {
      toolCalls: Array.from({ length: calls }, (_, index) => ({
        id: `call_${index}`,
        name: 'add',
        arguments: argsFor(index),
      })),
      chunkSize: Infinity,
      usage: { promptTokens: 10, completionTokens: 5 },
    };
  };
}

function quiverInProcess(calls) {
  const agent = new FnCallAgent({
    model: new ScriptedChatModel({ script: quiverScript(calls) }),
    tools: [quiverAdd],
    maxConcurrentTools: 10,
  });
  return async () => {
    const result = await agent.run([{ role: 'user', content: 'Add the numbers.' }]).final();
    if (result.messages.at(-1).content !== FINAL || result.messages.length !== calls + 2)
      throw new Error('quiver: wrong result');
  };
}

async function quiverHttp(calls) {
  const server = await startOpenAITestServer({ script: quiverScript(calls) });
  const model = new OpenAIChatModel({
    baseURL: server.baseURL,
    apiKey: 'bench',
    model: 'test-model',
  });
  const agent = new FnCallAgent({ model, tools: [quiverAdd], maxConcurrentTools: 10 });
  return {
    run: async () => {
      const result = await agent.run([{ role: 'user', content: 'Add the numbers.' }]).final();
      if (result.messages.at(-1).content !== FINAL) throw new Error('quiver http: wrong result');
      // The server keeps every request; drop them so memory stays flat.
      server.requests.length = 0;
    },
    close: () => server.close(),
  };
}

// ------------------------------------------------------------------ AI SDK
const usageV3 = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};
const aiTools = {
  add: tool({
    description: 'Add two numbers',
    inputSchema: addSchema,
    execute: async ({ a, b }) => String(a + b),
  }),
};

function aiContent(prompt, calls) {
  const last = prompt.at(-1);
  if (last.role === 'tool') return { final: true };
  return {
    final: false,
    calls: Array.from({ length: calls }, (_, index) => ({
      toolCallId: `call_${index}`,
      toolName: 'add',
      input: JSON.stringify(argsFor(index)),
    })),
  };
}

function aiGenerate(calls) {
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const next = aiContent(prompt, calls);
      return next.final
        ? {
            content: [{ type: 'text', text: FINAL }],
            finishReason: { unified: 'stop', raw: 'stop' },
            usage: usageV3,
            warnings: [],
          }
        : {
            content: next.calls.map((call) => ({ type: 'tool-call', ...call })),
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage: usageV3,
            warnings: [],
          };
    },
  });
  return async () => {
    const result = await generateText({
      model,
      tools: aiTools,
      stopWhen: stepCountIs(10),
      messages: [{ role: 'user', content: 'Add the numbers.' }],
    });
    if (result.text !== FINAL || result.steps.length !== 2)
      throw new Error('ai generateText: wrong result');
  };
}

function aiStream(calls) {
  const model = new MockLanguageModelV3({
    doStream: async ({ prompt }) => {
      const next = aiContent(prompt, calls);
      const parts = next.final
        ? [
            { type: 'stream-start', warnings: [] },
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: FINAL },
            { type: 'text-end', id: 't' },
            { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usageV3 },
          ]
        : [
            { type: 'stream-start', warnings: [] },
            ...next.calls.map((call) => ({ type: 'tool-call', ...call })),
            {
              type: 'finish',
              finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
              usage: usageV3,
            },
          ];
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
  return async () => {
    const result = streamText({
      model,
      tools: aiTools,
      stopWhen: stepCountIs(10),
      messages: [{ role: 'user', content: 'Add the numbers.' }],
    });
    const text = await result.text;
    if (text !== FINAL) throw new Error(`ai streamText: wrong result ${JSON.stringify(text)}`);
  };
}

// ------------------------------------------------------------------ measurement
// The frameworks are measured in interleaved rounds (A B C, A B C …) so that load from other
// processes on a shared machine hits all of them alike; p50 is the robust figure, mean the honest one.
const ROUNDS = 10;

function summarise(samples, totalMs) {
  const sorted = [...samples].sort((left, right) => left - right);
  const at = (quantile) =>
    sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))];
  return {
    iterations: sorted.length,
    meanUs: round(sorted.reduce((sum, value) => sum + value, 0) / sorted.length),
    p50Us: round(at(0.5)),
    p95Us: round(at(0.95)),
    runsPerSecond: round((sorted.length / totalMs) * 1000),
  };
}

async function measureInterleaved(entries, iterations) {
  for (const entry of entries) for (let index = 0; index < WARMUP; index++) await entry.run();
  const samples = entries.map(() => []);
  const totals = entries.map(() => 0);
  const perRound = Math.ceil(iterations / ROUNDS);
  for (let roundIndex = 0; roundIndex < ROUNDS; roundIndex++) {
    for (const [position, entry] of entries.entries()) {
      const roundStart = process.hrtime.bigint();
      for (let index = 0; index < perRound; index++) {
        const start = process.hrtime.bigint();
        await entry.run();
        samples[position].push(Number(process.hrtime.bigint() - start) / 1000);
      }
      totals[position] += Number(process.hrtime.bigint() - roundStart) / 1e6;
    }
  }
  return entries.map((entry, position) => ({
    ...entry.label,
    ...summarise(samples[position], totals[position]),
  }));
}
const round = (value) => Math.round(value * 10) / 10;

const rows = [];
for (const scenario of scenarios) {
  const entries = [
    {
      label: { framework: 'Quiver FnCallAgent (in-process ChatModel)', mode: 'in-process' },
      run: quiverInProcess(scenario.calls),
    },
    {
      label: { framework: 'AI SDK generateText (MockLanguageModelV3)', mode: 'in-process' },
      run: aiGenerate(scenario.calls),
    },
    {
      label: { framework: 'AI SDK streamText (MockLanguageModelV3)', mode: 'in-process' },
      run: aiStream(scenario.calls),
    },
  ];
  for (const row of await measureInterleaved(entries, ITERATIONS))
    rows.push({ scenario: scenario.name, ...row });
  const http = await quiverHttp(scenario.calls);
  const [httpRow] = await measureInterleaved(
    [
      {
        label: { framework: 'Quiver FnCallAgent (OpenAIChatModel over HTTP)', mode: 'http' },
        run: http.run,
      },
    ],
    HTTP_ITERATIONS,
  );
  rows.push({ scenario: scenario.name, ...httpRow });
  await http.close();
}

for (const scenario of scenarios) {
  const ours = rows.find(
    (row) =>
      row.scenario === scenario.name &&
      row.framework.startsWith('Quiver') &&
      row.mode === 'in-process',
  );
  const baseline = rows.find(
    (row) => row.scenario === scenario.name && row.framework.startsWith('AI SDK generateText'),
  );
  ours.generateTextOverQuiverP50 = round(baseline.p50Us / ours.p50Us);
  ours.generateTextOverQuiverMean = round(baseline.meanUs / ours.meanUs);
}

console.log(
  `\nFramework overhead per agent run (Node ${process.version}, ${quick ? 'quick' : 'full'} run; mean / p50 / p95 in µs)\n`,
);
console.log('| scenario | framework | mode | mean µs | p50 µs | p95 µs | runs/s |');
console.log('|---|---|---|---:|---:|---:|---:|');
for (const row of rows) {
  console.log(
    `| ${row.scenario} | ${row.framework} | ${row.mode} | ${row.meanUs} | ${row.p50Us} | ${row.p95Us} | ${row.runsPerSecond} |`,
  );
}
for (const scenario of scenarios) {
  const ours = rows.find(
    (row) => row.scenario === scenario.name && row.generateTextOverQuiverP50 !== undefined,
  );
  console.log(
    `\n${scenario.name}: AI SDK generateText / Quiver in-process = ${ours.generateTextOverQuiverP50}× at p50, ${ours.generateTextOverQuiverMean}× on the mean`,
  );
}

mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(
  join(here, 'results', 'overhead.json'),
  `${JSON.stringify(
    {
      benchmark: 'agent-loop overhead per run (no model latency)',
      node: process.version,
      date: new Date().toISOString(),
      iterations: { inProcess: ITERATIONS, http: HTTP_ITERATIONS, warmup: WARMUP },
      baseline: 'ai (Vercel AI SDK) generateText/streamText with MockLanguageModelV3',
      rows,
    },
    null,
    2,
  )}\n`,
);
