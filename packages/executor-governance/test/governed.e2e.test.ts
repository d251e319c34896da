import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import type { ToolResponse } from '@quiver/core';
import { ToolExecutionError } from '@quiver/core';
import { Toolkit, defineTool } from '@quiver/core-registry';
import { z } from 'zod';
import { GOVERNANCE_ORDER, formatForModel, governanceOf, governed } from '../src/index.js';
import { FakeClock, textOf } from './helpers.js';

const page = readFileSync(join(__dirname, 'fixtures', 'wikipedia-mozilla.html'), 'utf8');

const corpus = [
  {
    title: 'Mozilla - Wikipedia',
    url: 'https://en.wikipedia.org/wiki/Mozilla',
    snippet: 'Mozilla is a free-software community, created in 1998 by members of Netscape.',
  },
  {
    title: 'History of Firefox',
    url: 'https://en.wikipedia.org/wiki/History_of_Firefox',
    snippet: 'The Firefox project went through many names before 1.0.',
  },
  {
    title: 'Netscape',
    url: 'https://en.wikipedia.org/wiki/Netscape',
    snippet: 'Netscape Communications Corporation was an American computer services company.',
  },
  {
    title: 'Gecko (software)',
    url: 'https://en.wikipedia.org/wiki/Gecko_(software)',
    snippet: 'Gecko is a browser engine developed by Mozilla.',
  },
];

/** The tools of a small research agent, with realistic failure modes. */
function researchToolkit() {
  const runs: string[] = [];
  let rateCalls = 0;
  const toolkit = new Toolkit();
  toolkit.register(
    defineTool({
      name: 'web_search',
      description: { en: 'Search the web', zh: '网页搜索' },
      parameters: z.object({ query: z.string(), max_results: z.number().int().default(5) }),
      flags: { networkAccess: true },
      execute: ({ query, max_results }) => {
        runs.push(`web_search:${query}`);
        const words = query.toLowerCase().split(/\s+/);
        const hits = corpus.filter((doc) =>
          words.every((word) => `${doc.title} ${doc.snippet}`.toLowerCase().includes(word)),
        );
        return { type: 'json', value: { query, results: hits.slice(0, max_results) } };
      },
    }),
  );
  toolkit.register(
    defineTool({
      name: 'web_fetch',
      description: { en: 'Fetch a web page', zh: '获取网页' },
      parameters: z.object({ url: z.string().url() }),
      flags: { networkAccess: true },
      execute: ({ url }) => {
        runs.push(`web_fetch:${url}`);
        return page;
      },
    }),
  );
  toolkit.register(
    defineTool({
      name: 'exchange_rate',
      description: { en: 'Currency exchange rate', zh: '汇率' },
      parameters: z.object({
        base: z.enum(['USD', 'EUR', 'CNY']),
        quote: z.enum(['USD', 'EUR', 'CNY']),
      }),
      flags: { networkAccess: true },
      execute: ({ base, quote }) => {
        rateCalls++;
        runs.push(`exchange_rate:${base}/${quote}`);
        if (rateCalls === 1)
          throw new ToolExecutionError('exchange_rate', 'HTTP 503 Service Unavailable', {
            isRetryable: true,
          });
        if (rateCalls === 2)
          throw new ToolExecutionError('exchange_rate', 'HTTP 429 Too Many Requests', {
            isRetryable: true,
            retryAfterMs: 1_000,
          });
        return `1 ${base} = 0.92 ${quote}`;
      },
    }),
  );
  toolkit.register(
    defineTool({
      name: 'stock_quote',
      description: { en: 'Stock quote', zh: '股票报价' },
      parameters: z.object({ symbol: z.string() }),
      flags: { networkAccess: true },
      execute: ({ symbol }) => {
        runs.push(`stock_quote:${symbol}`);
        throw new ToolExecutionError('stock_quote', 'connect ECONNREFUSED 10.0.0.7:443');
      },
    }),
  );
  return { toolkit, runs };
}

describe('governed(toolkit): a multi-turn research trace', () => {
  it('repairs, deduplicates, rolls back, truncates, retries and breaks the circuit, and logs every call', async () => {
    const clock = new FakeClock();
    const { toolkit, runs } = researchToolkit();
    const governance = governed(toolkit, {
      clock,
      retry: { random: () => 0.5, baseDelayMs: 200 },
      circuitBreaker: { failureThreshold: 3, cooldownMs: 30_000 },
    });
    let id = 0;
    const turn = (name: string, args: string, namespace = 'main'): Promise<ToolResponse> =>
      toolkit.callToCompletion({ id: `call_${++id}`, name, arguments: args }, { namespace });

    // 1. Misnamed and mistyped arguments.
    const search = await turn('web_search', '{"q": "mozilla", "maxResults": "2"}');
    expect(search.isError).toBeUndefined();
    expect(search.content[0]).toEqual({
      type: 'json',
      value: {
        query: 'mozilla',
        results: corpus.filter((doc) => /mozilla/i.test(doc.title + doc.snippet)).slice(0, 2),
      },
    });
    expect(governanceOf(search).repairedArguments).toEqual({ query: 'mozilla', max_results: 2 });

    // 2. The same query again, now spelled correctly: a duplicate; the model is told.
    const repeat = await turn('web_search', '{"query": "mozilla", "max_results": 2}');
    expect(textOf(repeat)).toContain(
      'you already called "web_search" with these same arguments once before',
    );
    expect(runs.filter((run) => run === 'web_search:mozilla')).toHaveLength(2);

    // 3. A search that finds nothing: rolled back.
    const empty = await turn('web_search', '{"query": "mozilla flux capacitor"}');
    expect(empty.metadata?.rollback).toEqual({ reason: 'the search returned no results' });
    expect(formatForModel(empty)).toContain(
      '[This result looks unusable: the search returned no results.',
    );

    // 4. A misnamed tool.
    const unknown = await turn('websearch', '{"query": "mozilla"}');
    expect(unknown.metadata?.error?.code).toBe('tool_not_found');
    expect(unknown.metadata?.rollback?.reason).toBe('the tool "websearch" does not exist');

    // 5. A 244 KB page (argument "link" repaired to "url") cut to the default 20 000 characters.
    const fetched = await turn('web_fetch', '{"link": "https://en.wikipedia.org/wiki/Mozilla"}');
    const text = textOf(fetched);
    expect(page.length).toBeGreaterThan(200_000);
    expect(text.length).toBeLessThanOrEqual(20_000);
    expect(text.startsWith(page.slice(0, 1_000))).toBe(true);
    expect(text.endsWith(page.slice(-1_000))).toBe(true);
    expect(text).toContain(`characters removed of ${page.length.toLocaleString('en-US')} …]`);
    expect(governanceOf(fetched).truncated).toEqual({
      unit: 'chars',
      before: page.length,
      after: text.length,
    });

    // 6. A flaky tool: 503, then 429 with Retry-After 1 s, then success. Its enum argument is repaired too.
    const rate = await turn('exchange_rate', '{"base": "usd", "quote": "EUR"}');
    expect(textOf(rate)).toBe('1 USD = 0.92 EUR');
    expect(governanceOf(rate).retries).toBe(2);
    expect(clock.sleeps).toEqual([100, 1_000]); // 0.5 × 200, then the Retry-After hint (> 0.5 × 400)

    // 7. A tool that keeps failing: the breaker opens after 3 failures and the 4th call fails fast.
    for (const symbol of ['AAPL', 'MSFT', 'GOOG'])
      expect((await turn('stock_quote', JSON.stringify({ symbol }))).isError).toBe(true);
    expect(governance.stages.circuitBreaker?.state('stock_quote')).toBe('open');
    const fastFail = await turn('stock_quote', '{"symbol": "AMZN"}');
    expect(fastFail.metadata?.error?.code).toBe('circuit_open');
    expect(runs.filter((run) => run.startsWith('stock_quote'))).toEqual([
      'stock_quote:AAPL',
      'stock_quote:MSFT',
      'stock_quote:GOOG',
    ]);
    expect(formatForModel(fastFail)).toMatch(/Do not call this tool again for now/);

    // 8. A sub-agent asking the main agent's question is not a duplicate (its own namespace).
    const subAgent = await turn(
      'web_search',
      '{"query": "mozilla", "max_results": 2}',
      'researcher',
    );
    expect(governanceOf(subAgent).duplicate).toBeUndefined();

    // The call log: one record per call, in order, with the flags of each stage.
    const log = governance.records.map((record) => ({
      tool: record.tool,
      namespace: record.namespace,
      outcome: record.outcome,
      ...(record.errorCode ? { errorCode: record.errorCode } : {}),
      ...(record.repairs ? { repairs: record.repairs.map((repair) => repair.kind) } : {}),
      ...(record.duplicate ? { duplicate: record.duplicate.action } : {}),
      ...(record.rollback ? { rollback: record.rollback } : {}),
      ...(record.truncated ? { truncated: true } : {}),
      ...(record.retries ? { retries: record.retries } : {}),
      ...(record.circuit ? { circuit: record.circuit } : {}),
    }));
    expect(log).toEqual([
      {
        tool: 'web_search',
        namespace: 'main',
        outcome: 'ok',
        repairs: ['rename', 'rename', 'coerce'],
      },
      { tool: 'web_search', namespace: 'main', outcome: 'ok', duplicate: 'warned' },
      {
        tool: 'web_search',
        namespace: 'main',
        outcome: 'rollback',
        rollback: 'the search returned no results',
      },
      {
        tool: 'websearch',
        namespace: 'main',
        outcome: 'error',
        errorCode: 'tool_not_found',
        rollback: 'the tool "websearch" does not exist',
      },
      { tool: 'web_fetch', namespace: 'main', outcome: 'ok', repairs: ['rename'], truncated: true },
      {
        tool: 'exchange_rate',
        namespace: 'main',
        outcome: 'ok',
        repairs: ['enum-case'],
        retries: 2,
      },
      {
        tool: 'stock_quote',
        namespace: 'main',
        outcome: 'error',
        errorCode: 'tool_execution_failed',
      },
      {
        tool: 'stock_quote',
        namespace: 'main',
        outcome: 'error',
        errorCode: 'tool_execution_failed',
      },
      {
        tool: 'stock_quote',
        namespace: 'main',
        outcome: 'error',
        errorCode: 'tool_execution_failed',
      },
      {
        tool: 'stock_quote',
        namespace: 'main',
        outcome: 'error',
        errorCode: 'circuit_open',
        circuit: 'open',
      },
      { tool: 'web_search', namespace: 'researcher', outcome: 'ok' },
    ]);
    expect(governance.records[0]!.arguments).toEqual({ q: 'mozilla', maxResults: '2' });
    expect(governance.records[4]!.bytes).toBeLessThan(25_000);
    expect(governance.records.every((record) => record.callId.startsWith('call_'))).toBe(true);
  });

  it('installs the stages in the documented order, and each can be left out', async () => {
    expect(GOVERNANCE_ORDER).toEqual([
      'log',
      'repair',
      'duplicates',
      'cache',
      'size',
      'quality',
      'retry',
      'circuitBreaker',
      'concurrency',
      'timeout',
    ]);
    const { toolkit } = researchToolkit();
    const governance = governed(toolkit, {
      duplicates: false,
      size: false,
      log: false,
      timeout: { timeoutMs: 1_000 },
    });
    expect(Object.keys(governance.stages)).toEqual([
      'repair',
      'cache',
      'quality',
      'retry',
      'circuitBreaker',
      'concurrency',
      'timeout',
    ]);
    const response = await toolkit.callToCompletion({
      id: '1',
      name: 'web_fetch',
      arguments: '{"url": "https://en.wikipedia.org/wiki/Mozilla"}',
    });
    expect(textOf(response)).toBe(page);
    expect(governance.records).toEqual([]);
  });

  it('keeps streaming tools working (chunks are gathered into one response)', async () => {
    const toolkit = new Toolkit();
    toolkit.register(
      defineTool({
        name: 'stream',
        description: 'streams',
        parameters: z.object({}),
        async *execute() {
          yield { content: [{ type: 'text', text: 'part 1, ' }] };
          yield { content: [{ type: 'text', text: 'part 2' }] };
        },
      }),
    );
    const governance = governed(toolkit);
    const chunks: ToolResponse[] = [];
    for await (const chunk of toolkit.call({ id: 's', name: 'stream', arguments: '{}' }))
      chunks.push(chunk);
    expect(chunks.filter((chunk) => chunk.isLast)).toHaveLength(1);
    expect(chunks.map(textOf).join('')).toBe('part 1, part 2');
    expect(governance.records).toHaveLength(1);
  });

  it('reset() starts a new conversation: duplicates are forgotten', async () => {
    const { toolkit, runs } = researchToolkit();
    const governance = governed(toolkit, { duplicates: { action: 'cache' } });
    await toolkit.callToCompletion({
      id: '1',
      name: 'web_search',
      arguments: '{"query": "netscape"}',
    });
    await toolkit.callToCompletion({
      id: '2',
      name: 'web_search',
      arguments: '{"query": "netscape"}',
    });
    expect(runs).toHaveLength(1);
    governance.reset();
    await toolkit.callToCompletion({
      id: '3',
      name: 'web_search',
      arguments: '{"query": "netscape"}',
    });
    expect(runs).toHaveLength(2);
  });

  it('merges partial stage options with the defaults', async () => {
    const { toolkit, runs } = researchToolkit();
    governed(toolkit, { duplicates: { action: 'cache' } });
    const responses: ToolResponse[] = [];
    for (let index = 0; index < 4; index++) {
      responses.push(
        await toolkit.callToCompletion({
          id: `${index}`,
          name: 'web_search',
          arguments: '{"query": "gecko"}',
        }),
      );
    }
    expect(runs).toEqual(['web_search:gecko']); // action: cache
    expect(responses.map((response) => governanceOf(response).duplicate?.action)).toEqual([
      undefined,
      'cached',
      'cached',
      'refused',
    ]); // default refuseAfter: 3
  });
});
