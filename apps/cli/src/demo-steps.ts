import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { Assistant } from '@quiver/agent-loop';
import type { ToolCall, ToolResponse } from '@quiver/core';
import { responseText } from '@quiver/core';
import type { Toolkit } from '@quiver/core-registry';
import { Toolkit as ToolkitClass, defineTool } from '@quiver/core-registry';
import { parseDocument } from '@quiver/doc-parser';
import { governanceOf, governed } from '@quiver/executor-governance';
import { MCPManager } from '@quiver/mcp-bridge';
import type { KnowledgeBase } from '@quiver/rag-retrieval';
import { DocumentRetriever } from '@quiver/rag-retrieval';
import { createChatModel } from './commands/chat.js';
import type { QuiverConfig } from './config.js';
import { missingModelReason } from './config.js';
import type { CliIO } from './io.js';
import { indexDocuments, listDocuments } from './knowledge-base-indexing.js';
import { keepImage, outputDirectory } from './output-files.js';
import { progressBar } from './progress-bar.js';
import { describeDocument } from './commands/parse.js';
import { everythingServerPath, sampleDocumentsDirectory } from './bundled-assets.js';
import { printHits } from './commands/rag.js';
import { documentParsing } from '@quiver/server';

/** What a demo step gets. */
export interface DemoStepContext {
  toolkit: Toolkit;
  /** Print one line under the step's title. */
  log: (line: string) => void;
  /** Where the CLI writes (progress bars go to its stderr). */
  io: CliIO;
  config: QuiverConfig;
  /** Values steps pass on to later steps (the sample knowledge base…). */
  shared: Map<string, unknown>;
}

/** One step of `quiver demo`: returns whether it worked (it may also throw). */
export interface DemoStep {
  title: string;
  /** Why the step does not apply here (e.g. no model configured): it is shown as skipped. */
  skip?: (context: DemoStepContext) => string | undefined;
  run: (context: DemoStepContext) => Promise<boolean>;
}

const SAMPLE_QUESTION = 'How do I install Readability from npm?';

let callNumber = 0;
function call(name: string, args: string): ToolCall {
  callNumber += 1;
  return { id: `demo-${callNumber}`, name, arguments: args };
}

function firstLine(response: ToolResponse): string {
  return responseText(response).split('\n')[0] ?? '';
}

/** The steps of the demo, in order. */
export const defaultDemoSteps: DemoStep[] = [
  {
    title: 'Tool registry: the registered tools and their provider schemas',
    async run({ toolkit, log }) {
      const tools = toolkit.list();
      for (const tool of tools)
        log(
          `${tool.name} — ${typeof tool.description === 'string' ? tool.description : tool.description.en}`,
        );
      const counts = (['openai', 'openai-strict', 'anthropic', 'gemini'] as const).map(
        (target) => `${target}: ${toolkit.getJsonSchemas({ target }).length}`,
      );
      log(`schemas emitted per provider — ${counts.join(', ')}`);
      return tools.length > 0;
    },
  },
  {
    title: 'Call a tool through the registry: calculator "(2 + 3) * 4 ^ 2"',
    async run({ toolkit, log }) {
      const response = await toolkit.callToCompletion(
        call('calculator', '{"expression": "(2 + 3) * 4 ^ 2"}'),
      );
      log(`→ ${firstLine(response)}`);
      return !response.isError && Number(responseText(response)) === (2 + 3) * 4 ** 2;
    },
  },
  {
    title: 'Lenient arguments: single quotes and a trailing comma are read, not rejected',
    async run({ toolkit, log }) {
      const raw = "{'expression': 'sqrt(16) + 1',}";
      const response = await toolkit.callToCompletion(call('calculator', raw));
      log(`${raw} → ${firstLine(response)}`);
      return !response.isError && Number(responseText(response)) === Math.sqrt(16) + 1;
    },
  },
  {
    title: 'Validation error reported to the model (wrong field name and type)',
    async run({ toolkit, log }) {
      const response = await toolkit.callToCompletion(call('calculator', '{"expr": 42}'));
      for (const line of responseText(response).split('\n')) log(line);
      const error = response.metadata?.error;
      return response.isError === true && error?.code === 'tool_argument_invalid';
    },
  },
  {
    title: 'Unknown tool reported with the list of available tools',
    async run({ toolkit, log }) {
      const response = await toolkit.callToCompletion(
        call('weather_forecast', '{"city": "Paris"}'),
      );
      log(firstLine(response));
      return response.isError === true && response.metadata?.error?.code === 'tool_not_found';
    },
  },
  {
    title: 'Streaming: countdown yields its output chunk by chunk',
    async run({ toolkit, log }) {
      let chunks = 0;
      let last: ToolResponse | undefined;
      for await (const chunk of toolkit.call(call('countdown', '{"from": 3, "intervalMs": 50}'))) {
        chunks += 1;
        last = chunk;
        const text = responseText(chunk).trim();
        if (text) log(`chunk ${chunks}: ${text}`);
      }
      return chunks >= 4 && last?.isLast === true && !last.isError;
    },
  },
  {
    title: 'Timeout: a call that outlives its limit is stopped and reported',
    async run({ toolkit, log }) {
      const slow = toolkit.get('countdown');
      if (!slow) return false;
      const limited = toolkit.register(slow.tool, { name: 'countdown_limited', timeoutMs: 120 });
      const response = await toolkit.callToCompletion(
        call(limited!.name, '{"from": 50, "intervalMs": 100}'),
      );
      log(responseText(response).trim().split('\n').at(-1) ?? '');
      toolkit.unregister(limited!.name);
      return response.isError === true && response.metadata?.error?.code === 'tool_timeout';
    },
  },
  {
    title: 'Current time in Shanghai',
    async run({ toolkit, log }) {
      const response = await toolkit.callToCompletion(
        call('current_time', '{"timezone": "Asia/Shanghai"}'),
      );
      log(firstLine(response));
      return !response.isError;
    },
  },
  {
    title: 'Index the bundled sample documents (PDF, DOCX, Markdown) into a knowledge base',
    async run({ io, log, shared }) {
      const files = await listDocuments(sampleDocumentsDirectory());
      const { summary, knowledgeBase } = await indexDocuments({
        files,
        progress: progressBar(io, files.length),
      });
      shared.set('knowledgeBase', knowledgeBase);
      log(
        `${summary.indexed.length} of ${summary.files} files indexed: ${summary.documents} documents, ${summary.chunks} chunks (hybrid BM25 + vector, offline embedder)`,
      );
      for (const failure of summary.failed) log(`failed: ${failure.file}: ${failure.error}`);
      return summary.failed.length === 0 && summary.chunks > 0;
    },
  },
  {
    title: `Answer a retrieval query with sources: "${SAMPLE_QUESTION}"`,
    async run({ io, log, shared }) {
      const knowledgeBase = shared.get('knowledgeBase') as KnowledgeBase | undefined;
      if (!knowledgeBase) throw new Error('the indexing step did not run');
      try {
        const result = await knowledgeBase.search({ query: SAMPLE_QUESTION, topK: 3 });
        printHits(
          { io },
          result.hits.map((hit) => ({ ...hit.chunk, score: hit.score })),
          log,
        );
        return result.hits[0]?.chunk.source.endsWith('readability-README.md') === true;
      } finally {
        shared.delete('knowledgeBase');
        await knowledgeBase.close();
      }
    },
  },
  {
    title: 'Run Python in a real IPython kernel: pandas + a matplotlib chart',
    async run({ toolkit, log, config }) {
      const code = [
        'import pandas as pd, matplotlib.pyplot as plt',
        'df = pd.DataFrame({"month": ["Jan", "Feb", "Mar", "Apr"], "calls": [120, 340, 290, 510]})',
        'print(df.describe().loc[["mean", "max"]].to_string())',
        'plt.figure(figsize=(5, 3)); plt.bar(df.month, df.calls, color="#3b82f6"); plt.title("Tool calls per month")',
        'plt.show()',
      ].join('\n');
      const response = await toolkit.callToCompletion(
        call('code_interpreter', JSON.stringify({ code })),
      );
      for (const line of responseText(response).trim().split('\n').slice(0, 4)) log(line);
      const image = response.content.find((block) => block.type === 'image');
      const kept = image ? await keepImage(image, outputDirectory(config)) : undefined;
      if (kept) log(`chart saved: ${kept}`);
      const bytes = kept ? await readFile(kept) : undefined;
      const isPng = bytes?.subarray(1, 4).toString('latin1') === 'PNG';
      return !response.isError && isPng;
    },
  },
  {
    title: 'Parse a DOCX and a PDF into structure (headings, lists, tables)',
    async run({ log }) {
      const directory = sampleDocumentsDirectory();
      const docx = await parseDocument(join(directory, 'testWORD_various.docx'), {
        cacheDir: false,
      });
      const pdf = await parseDocument(join(directory, 'nics-background-checks-2015-11.pdf'), {
        cacheDir: false,
      });
      log(`DOCX: ${describeDocument(docx)}`);
      const list = docx.pages.flatMap((page) => page.blocks).find((block) => block.type === 'list');
      if (list && list.type === 'list') log(`  a list: ${list.items.slice(0, 3).join(' · ')}`);
      log(`PDF: ${describeDocument(pdf)}`);
      const table = pdf.pages
        .flatMap((page) => page.blocks)
        .find((block) => block.type === 'table');
      if (table && table.type === 'table')
        log(
          `  a table of ${table.rows.length} rows, e.g. ${table.rows[Math.min(3, table.rows.length - 1)]?.slice(0, 4).join(' | ')}`,
        );
      return (
        docx.text.includes('Number bullet 2') && pdf.text.includes('NICS Firearm Background Checks')
      );
    },
  },
  {
    title: 'Call tools on a real MCP server (@modelcontextprotocol/server-everything over stdio)',
    async run({ log }) {
      const manager = new MCPManager({
        servers: {
          mcpServers: {
            everything: { command: process.execPath, args: [everythingServerPath(), 'stdio'] },
          },
        },
        connectTimeoutMs: 20_000,
      });
      try {
        const report = await manager.connect();
        if (report.failed.length > 0) {
          for (const failure of report.failed) log(`failed: ${failure.error.message}`);
          return false;
        }
        const tools = manager.status()[0]?.tools ?? [];
        log(`connected: ${tools.length} tools (${tools.slice(0, 4).join(', ')}, …)`);
        const echo = await manager.toolkit.callToCompletion(
          call('everything__echo', '{"message": "hello from quiver"}'),
        );
        log(`everything__echo → ${responseText(echo)}`);
        const sum = await manager.toolkit.callToCompletion(
          call('everything__get-sum', '{"a": 19, "b": 23}'),
        );
        log(`everything__get-sum(19, 23) → ${responseText(sum)}`);
        return (
          !echo.isError &&
          responseText(echo).includes('hello from quiver') &&
          responseText(sum).includes(String(19 + 23))
        );
      } finally {
        await manager.close();
      }
    },
  },
  {
    title: 'Governance: a misnamed argument repaired, a repeated call caught',
    async run({ log }) {
      const toolkit = new ToolkitClass();
      let executions = 0;
      toolkit.register(
        defineTool({
          name: 'search_docs',
          description: { en: 'Search the documentation', zh: '搜索文档' },
          parameters: z.object({ query: z.string(), max_results: z.number().int().default(5) }),
          execute: ({ query, max_results }) => {
            executions += 1;
            return `${max_results} results for "${query}"`;
          },
        }),
      );
      const governance = governed(toolkit, { duplicates: { action: 'warn', refuseAfter: 2 } });
      try {
        const raw = '{"q": "install", "maxResults": "3"}';
        const repaired = await toolkit.callToCompletion(call('search_docs', raw));
        const repairs = governanceOf(repaired).repairs ?? [];
        log(`${raw} → ${responseText(repaired).split('\n')[0]}`);
        for (const repair of repairs) log(`  repaired: ${repair.detail}`);
        const outcomes: string[] = [];
        let refused = false;
        for (let attempt = 0; attempt < 3; attempt++) {
          const response = await toolkit.callToCompletion(
            call('search_docs', '{"query": "install", "max_results": 3}'),
          );
          const duplicate = governanceOf(response).duplicate;
          outcomes.push(duplicate ? `${duplicate.action} (#${duplicate.count})` : 'first');
          if (duplicate?.action === 'refused' && !refused) {
            refused = true;
            log(`  refused: ${responseText(response).split('\n')[0]}`);
          }
        }
        log(
          `the same call 3 more times → ${outcomes.join(', ')}; the tool ran ${executions} times`,
        );
        return repairs.length >= 2 && !repaired.isError && refused;
      } finally {
        await governance.close();
        await toolkit.close();
      }
    },
  },
  {
    title: `The Assistant answers from the sample documents: "${SAMPLE_QUESTION}"`,
    skip: ({ config }) => missingModelReason(config),
    async run({ toolkit, log, config }) {
      const directory = sampleDocumentsDirectory();
      const assistant = new Assistant({
        name: 'quiver',
        model: createChatModel(config),
        toolkit,
        retriever: new DocumentRetriever(documentParsing()),
        files: [join(directory, 'readability-README.md')],
        maxLlmCalls: 4,
      });
      const result = await assistant.run([{ role: 'user', content: SAMPLE_QUESTION }]).final();
      const answer = result.messages.at(-1);
      const content = answer?.content;
      const text =
        typeof content === 'string'
          ? content
          : Array.isArray(content)
            ? content.map((part) => ('text' in part ? part.text : '')).join('')
            : '';
      for (const line of text.trim().split('\n').slice(0, 8)) log(line);
      return result.status === 'completed' && text.trim().length > 0;
    },
  },
];
