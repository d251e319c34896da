import { afterEach, describe, expect, it } from '@jest/globals';
import type { ChatMessage, ToolMessage } from '@quiver/core';
import { ModelServiceError } from '@quiver/core';
import { Toolkit, defineTool } from '@quiver/core-registry';
import type { AgentEvent } from '../src/agent-events.js';
import { InvalidMessagesError } from '../src/errors.js';
import { FnCallAgent } from '../src/fn-call-agent.js';
import { Message } from '../src/message.js';
import { OpenAIChatModel } from '../src/openai-chat-model.js';
import type { OpenAITestServer, ScriptedReply } from '../src/testing.js';
import { startOpenAITestServer } from '../src/testing.js';
import { addTool } from './helpers.js';

let server: OpenAITestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function agentWith(
  script: ScriptedReply[],
  options: Partial<ConstructorParameters<typeof FnCallAgent>[0]> = {},
) {
  await server?.close();
  server = await startOpenAITestServer({ script });
  const model = new OpenAIChatModel({
    baseURL: server.baseURL,
    apiKey: 'k',
    model: 'test-model',
    retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5 },
  });
  return new FnCallAgent({ model, tools: [addTool], ...options });
}

function sentMessages(index: number): ChatMessage[] {
  return server!.requests[index]!.body.messages as ChatMessage[];
}

describe('FnCallAgent over the OpenAI test server', () => {
  it('streams a plain answer as a growing list, stamps its name and injects its system message', async () => {
    const agent = await agentWith([{ text: 'Paris is the capital of France.', chunkSize: 6 }], {
      name: 'geo',
    });
    const input: ChatMessage[] = [{ role: 'user', content: 'Capital of France?' }];
    const frozen = structuredClone(input);
    const snapshots: ChatMessage[][] = [];
    const run = agent.run(input);
    for await (const response of run) snapshots.push(response);
    expect(snapshots.length).toBeGreaterThan(3);
    const contents = snapshots.map((response) => response.at(-1)!.content as string);
    for (let index = 1; index < contents.length; index++)
      expect(contents[index]!.startsWith(contents[index - 1]!)).toBe(true);
    expect(snapshots.at(-1)).toEqual([
      { role: 'assistant', content: 'Paris is the capital of France.', name: 'geo' },
    ]);
    expect(run.result).toMatchObject({ status: 'completed', llmCalls: 1 });
    expect(run.result!.usage.totalTokens).toBeGreaterThan(0);
    expect(input).toEqual(frozen);
    expect(sentMessages(0)[0]).toEqual({ role: 'system', content: 'You are a helpful assistant.' });
  });

  it('merges its system message with an existing string or multimodal one', async () => {
    const agent = await agentWith([{ text: 'a' }, { text: 'b' }], { systemMessage: 'Be brief.' });
    await agent
      .run([
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'Hi' },
      ])
      .final();
    expect(sentMessages(0)[0]).toEqual({
      role: 'system',
      content: 'Be brief.\n\nAnswer in French.',
    });
    await agent
      .run([
        { role: 'system', content: [{ type: 'text', text: 'Use metric units.' }] },
        { role: 'user', content: 'Hi' },
      ])
      .final();
    expect(sentMessages(1)[0]).toEqual({
      role: 'system',
      content: [
        { type: 'text', text: 'Be brief.\n\n' },
        { type: 'text', text: 'Use metric units.' },
      ],
    });
  });

  it('answers Message instances with Message instances, and detects Chinese', async () => {
    const agent = await agentWith([{ text: '巴黎。' }]);
    const result = await agent
      .run([new Message({ role: 'user', content: '法国的首都是哪里？' })])
      .final();
    expect(result.messages[0]).toBeInstanceOf(Message);
    expect(result.messages[0]!.text).toBe('巴黎。');
    expect(sentMessages(0)[0]!.content).toBe('你是一个乐于助人的助手。');
  });

  it('rejects messages that are not chat messages before calling the model', async () => {
    const agent = await agentWith([]);
    expect(() => agent.run([{ role: 'robot', content: 'x' } as unknown as ChatMessage])).toThrow(
      InvalidMessagesError,
    );
    expect(server!.requests).toHaveLength(0);
  });

  it('runs one tool call with fragmented arguments and feeds the result back', async () => {
    const agent = await agentWith([
      { toolCalls: [{ id: 'call_1', name: 'add', arguments: { a: 19, b: 23 } }], chunkSize: 2 },
      { text: '19 + 23 = 42' },
    ]);
    const events: AgentEvent[] = [];
    const result = await agent
      .run([{ role: 'user', content: 'What is 19 + 23?' }], {
        onEvent: (event) => events.push(event),
      })
      .final();
    expect(result.status).toBe('completed');
    expect(result.messages.map((message) => message.role)).toEqual([
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(result.messages[1]).toEqual({
      role: 'tool',
      tool_call_id: 'call_1',
      name: 'add',
      content: '42',
    });
    expect(sentMessages(1).slice(-2)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'add', arguments: '{"a":19,"b":23}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', name: 'add', content: '42' },
    ]);
    expect(server!.requests[0]!.body.tools).toEqual([
      expect.objectContaining({
        type: 'function',
        function: expect.objectContaining({ name: 'add', description: 'Add two numbers' }),
      }),
    ]);
    // Events tie together: the tool events carry the model's call id and the turn of the model call that asked.
    const firstTurn = events.find((event) => event.type === 'model-start')!;
    const toolStart = events.find((event) => event.type === 'tool-start')!;
    const toolEnd = events.find((event) => event.type === 'tool-end')!;
    expect(toolStart).toMatchObject({
      callId: 'call_1',
      name: 'add',
      turnId: (firstTurn as { turnId: string }).turnId,
    });
    expect(toolEnd).toMatchObject({
      callId: 'call_1',
      turnId: (firstTurn as { turnId: string }).turnId,
    });
    expect(events.map((event) => event.type).filter((type) => type !== 'model-delta')).toEqual([
      'run-start',
      'model-start',
      'model-end',
      'tool-start',
      'tool-chunk',
      'tool-end',
      'model-start',
      'model-end',
      'run-end',
    ]);
  });

  it('runs several calls concurrently up to the limit and returns results in the model’s order', async () => {
    let running = 0;
    let peak = 0;
    const slow = defineTool({
      name: 'slow_echo',
      description: 'Echo after a delay',
      parameters: {
        type: 'object',
        properties: { text: { type: 'string' }, ms: { type: 'number' } },
        required: ['text', 'ms'],
      },
      execute: async ({ text, ms }: { text: string; ms: number }) => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setTimeout(resolve, ms));
        running--;
        return text;
      },
    });
    const agent = await agentWith(
      [
        {
          toolCalls: [
            { id: 'c1', name: 'slow_echo', arguments: { text: 'one', ms: 60 } },
            { id: 'c2', name: 'slow_echo', arguments: { text: 'two', ms: 5 } },
            { id: 'c3', name: 'slow_echo', arguments: { text: 'three', ms: 30 } },
            { id: 'c4', name: 'slow_echo', arguments: { text: 'four', ms: 1 } },
          ],
          chunkSize: 7,
        },
        { text: 'done' },
      ],
      { tools: [slow], maxConcurrentTools: 2 },
    );
    const endOrder: string[] = [];
    const result = await agent
      .run([{ role: 'user', content: 'echo' }], {
        onEvent: (event) => event.type === 'tool-end' && endOrder.push(event.callId),
      })
      .final();
    expect(peak).toBe(2);
    expect(endOrder[0]).not.toBe('c1');
    const tools = result.messages.filter(
      (message): message is ToolMessage => message.role === 'tool',
    );
    expect(tools.map((message) => [message.tool_call_id, message.content])).toEqual([
      ['c1', 'one'],
      ['c2', 'two'],
      ['c3', 'three'],
      ['c4', 'four'],
    ]);
  });

  it('sends tool errors back to the model as tool messages it can act on', async () => {
    const failing = defineTool({
      name: 'fetch_page',
      description: 'Fetch a page',
      parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
      execute: () => {
        throw new Error('host not found: example.invalid');
      },
    });
    const agent = await agentWith(
      [
        {
          toolCalls: [
            { id: 'e1', name: 'fetch_page', arguments: { url: 'https://example.invalid' } },
            { id: 'e2', name: 'nope', arguments: {} },
          ],
        },
        { toolCalls: [{ id: 'e3', name: 'add', arguments: '{"a": "x"}' }] },
        { text: 'Sorry, I could not fetch it.' },
      ],
      { tools: [addTool, failing] },
    );
    const result = await agent.run([{ role: 'user', content: 'fetch' }]).final();
    const tools = result.messages.filter(
      (message): message is ToolMessage => message.role === 'tool',
    );
    expect(tools[0]!.content).toMatch(/^Error: .*host not found: example\.invalid/);
    expect(tools[1]!.content).toMatch(
      /Tool "nope" does not exist\. Available tools: add, fetch_page/,
    );
    expect(tools[2]!.content).toMatch(/Invalid arguments for tool "add"/);
    expect(sentMessages(1).at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'e2' });
    expect(result.status).toBe('completed');
  });

  it('stops at maxLlmCalls with a clear final message', async () => {
    const loop: ScriptedReply = { toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] };
    const agent = await agentWith([loop, loop, loop], { maxLlmCalls: 2 });
    const result = await agent.run([{ role: 'user', content: 'keep adding' }]).final();
    expect(result.status).toBe('max-llm-calls');
    expect(result.llmCalls).toBe(2);
    expect(server!.requests).toHaveLength(2);
    expect(result.messages.at(-1)).toMatchObject({ role: 'assistant' });
    expect(result.messages.at(-1)!.content).toMatch(/limit of 2 model calls/);
  });

  it('drops a turn whose result is marked rollback and re-asks, a bounded number of times', async () => {
    let calls = 0;
    const flaky = defineTool({
      name: 'search',
      description: 'Search',
      parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      execute: ({ q }: { q: string }) => {
        calls++;
        return q === 'bad'
          ? {
              content: [{ type: 'text', text: 'no results' }],
              metadata: { rollback: { reason: 'empty search result' } },
            }
          : `results for ${q}`;
      },
    });
    const agent = await agentWith(
      [
        { toolCalls: [{ id: 'r1', name: 'search', arguments: { q: 'bad' } }] },
        { toolCalls: [{ id: 'r2', name: 'search', arguments: { q: 'good' } }] },
        { text: 'Found it.' },
      ],
      { tools: [flaky] },
    );
    const events: AgentEvent[] = [];
    const result = await agent
      .run([{ role: 'user', content: 'find' }], { onEvent: (event) => events.push(event) })
      .final();
    expect(calls).toBe(2);
    expect(events.find((event) => event.type === 'turn-dropped')).toMatchObject({
      reason: 'empty search result',
    });
    // The dropped turn is gone from the response and from what the model saw next.
    expect(JSON.stringify(result.messages)).not.toContain('r1');
    expect(JSON.stringify(sentMessages(1))).not.toContain('r1');
    expect(sentMessages(1)[0]!.content).toContain('previous attempt was discarded');
    expect(result.messages.map((message) => message.role)).toEqual([
      'assistant',
      'tool',
      'assistant',
    ]);

    // Always rolled back: after maxRollbacks the results are kept.
    const stubborn: ScriptedReply = { toolCalls: [{ name: 'search', arguments: { q: 'bad' } }] };
    const bounded = await agentWith([stubborn, stubborn, { text: 'gave up' }], {
      tools: [flaky],
      maxRollbacks: 1,
    });
    const boundedResult = await bounded.run([{ role: 'user', content: 'find' }]).final();
    expect(boundedResult.status).toBe('completed');
    expect(boundedResult.messages.filter((message) => message.role === 'tool')).toHaveLength(1);
    expect(server!.requests).toHaveLength(3);
  });

  it('aborts mid-run: running tools see the signal and no further model call is made', async () => {
    let toolSawAbort = false;
    const wait = defineTool({
      name: 'wait_forever',
      description: 'Waits until cancelled',
      parameters: { type: 'object', properties: {} },
      execute: (_args: Record<string, unknown>, context) =>
        new Promise((resolve) => {
          context.signal.addEventListener('abort', () => {
            toolSawAbort = true;
            resolve('stopped');
          });
        }),
    });
    const agent = await agentWith(
      [{ toolCalls: [{ id: 'w1', name: 'wait_forever', arguments: {} }] }, { text: 'never' }],
      { tools: [wait] },
    );
    const controller = new AbortController();
    const result = await agent
      .run([{ role: 'user', content: 'wait' }], {
        signal: controller.signal,
        onEvent: (event) => event.type === 'tool-start' && setTimeout(() => controller.abort(), 20),
      })
      .final();
    expect(result.status).toBe('aborted');
    expect(toolSawAbort).toBe(true);
    expect(server!.requests).toHaveLength(1);
    expect(result.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'w1' });
  });

  it('aborts mid-stream and keeps the partial answer', async () => {
    const agent = await agentWith([{ text: 'word '.repeat(200), chunkSize: 5, chunkDelayMs: 3 }]);
    const controller = new AbortController();
    let deltas = 0;
    const events: AgentEvent[] = [];
    const result = await agent
      .run([{ role: 'user', content: 'talk' }], {
        signal: controller.signal,
        onEvent: (event) => {
          events.push(event);
          if (event.type === 'model-delta' && ++deltas === 5) controller.abort();
        },
      })
      .final();
    expect(result.status).toBe('aborted');
    expect(events.filter((event) => event.type === 'model-end')).toHaveLength(1);
    const partial = result.messages[0]!.content as string;
    expect(partial.startsWith('word word')).toBe(true);
    expect(partial.length).toBeLessThan(1000);
  });

  it('retries a 429 and surfaces a persistent 500 or a dropped stream as ModelServiceError', async () => {
    const agent = await agentWith([
      { status: 429, headers: { 'retry-after': '0' } },
      { text: 'fine' },
    ]);
    expect((await agent.run([{ role: 'user', content: 'x' }]).final()).messages[0]!.content).toBe(
      'fine',
    );

    const failing = await agentWith([{ status: 500 }, { status: 500 }, { status: 500 }]);
    const error = await failing
      .run([{ role: 'user', content: 'x' }])
      .final()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ModelServiceError);
    expect((error as ModelServiceError).statusCode).toBe(500);

    const dropped = await agentWith([
      { text: 'partial answer that stops', chunkSize: 3, dropAfterChunks: 3, chunkDelayMs: 30 },
    ]);
    const dropError = await dropped
      .run([{ role: 'user', content: 'x' }])
      .final()
      .catch((caught: unknown) => caught);
    expect(dropError).toBeInstanceOf(ModelServiceError);
    expect((dropError as ModelServiceError).isRetryable).toBe(true);
  });

  it('trims a long history to the context window, keeping tool calls with their results', async () => {
    const agent = await agentWith([{ text: 'short answer' }], {
      contextWindow: 600,
      reserveTokens: 100,
    });
    const filler = 'lorem ipsum dolor sit amet '.repeat(40);
    const history: ChatMessage[] = [
      { role: 'user', content: `old question ${filler}` },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 't1', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } },
        ],
      },
      { role: 'tool', tool_call_id: 't1', content: `3 ${filler}` },
      { role: 'assistant', content: `old answer ${filler}` },
      { role: 'user', content: 'newest question' },
    ];
    const events: AgentEvent[] = [];
    await agent.run(history, { onEvent: (event) => events.push(event) }).final();
    const sent = sentMessages(0);
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'newest question' });
    expect(sent[0]!.role).toBe('system');
    expect(sent[0]!.content).toMatch(/earlier messages? (was|were) left out/);
    const sentIds = sent.flatMap((message) =>
      message.role === 'tool' ? [message.tool_call_id] : [],
    );
    const sentCalls = sent.flatMap((message) =>
      message.role === 'assistant' ? (message.tool_calls ?? []).map((call) => call.id) : [],
    );
    expect(sentIds).toEqual(sentCalls);
    const trimmed = events.find((event) => event.type === 'context-trimmed');
    expect(trimmed).toBeDefined();
    expect((trimmed as { droppedMessages: number }).droppedMessages).toBe(
      history.length - (sent.length - 1),
    );
  });

  it('calls tools through the toolkit middleware', async () => {
    const toolkit = new Toolkit();
    toolkit.register(addTool);
    const seen: string[] = [];
    toolkit.use(async function* audit(invocation, next) {
      seen.push(`${invocation.name}:${JSON.stringify(invocation.arguments)}`);
      yield* next(invocation);
    });
    const agent = await agentWith(
      [{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: '5' }],
      { toolkit, tools: [] },
    );
    await agent.run([{ role: 'user', content: 'add' }]).final();
    expect(seen).toEqual(['add:{"a":2,"b":3}']);
  });
});
