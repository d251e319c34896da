#!/usr/bin/env node
// Tool search quality: top-1 / top-5 hit rate of ToolSearchIndex on 248 real MCP tool definitions
// (14 public MCP servers, see test/fixtures/tool-search/README.md) with 138 natural-language tasks.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LsaEmbedder, ToolSearchIndex } from '../dist/index.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here, '..', 'test', 'fixtures', 'tool-search');
const servers = JSON.parse(readFileSync(join(fixtures, 'mcp-tools.json'), 'utf8')).servers;
const { tasks } = JSON.parse(readFileSync(join(fixtures, 'tasks.json'), 'utf8'));
const tools = servers.flatMap((server) =>
  server.tools.map((tool) => ({
    name: `${server.prefix}__${tool.name}`,
    description: tool.description,
    parameters: tool.inputSchema,
    group: server.prefix,
  })),
);

const configurations = [
  ['keyword (BM25)', { mode: 'keyword' }],
  ['vector (offline n-gram, default)', { mode: 'vector' }],
  ['hybrid (n-gram, default: RRF 1/0.3)', { mode: 'hybrid' }],
  ['vector (offline LSA)', { mode: 'vector', embedder: new LsaEmbedder() }],
  ['hybrid (LSA, convex 0.7/0.3)', { mode: 'hybrid', embedder: new LsaEmbedder() }],
];
const rows = [];
for (const [label, options] of configurations) {
  const index = new ToolSearchIndex(options);
  let top1 = 0;
  let top5 = 0;
  const misses = [];
  const started = performance.now();
  for (const [task, expected] of tasks) {
    const hits = await index.search(tools, task, 5);
    const names = hits.map((hit) => hit.name);
    if (expected.includes(names[0])) top1++;
    if (names.some((name) => expected.includes(name))) top5++;
    else misses.push({ task, expected, got: names });
  }
  const ms = (performance.now() - started) / tasks.length;
  rows.push({
    label,
    top1: top1 / tasks.length,
    top5: top5 / tasks.length,
    msPerQuery: ms,
    misses,
  });
}
console.log(`${tools.length} tools from ${servers.length} MCP servers, ${tasks.length} tasks`);
console.log('| ranking | top-1 hit rate | top-5 hit rate | ms/query (incl. first index build) |');
console.log('|---|---|---|---|');
for (const row of rows)
  console.log(
    `| ${row.label} | ${row.top1.toFixed(3)} | ${row.top5.toFixed(3)} | ${row.msPerQuery.toFixed(2)} |`,
  );
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(
  join(here, 'results', 'tool-search.json'),
  JSON.stringify({ tools: tools.length, tasks: tasks.length, rows }, null, 2),
);
if (process.argv.includes('--misses'))
  for (const miss of rows[2].misses) console.log(JSON.stringify(miss));
