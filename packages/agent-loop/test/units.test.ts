import { describe, expect, it } from '@jest/globals';
import type { ChatMessage } from '@quiver/core';
import { FnCallAgent } from '../src/fn-call-agent.js';
import { detectLanguage } from '../src/language.js';
import { Message } from '../src/message.js';
import { parseRetryAfter, resolveRetryPolicy, retryDelay } from '../src/retry-policy.js';
import { mergeSystemMessage } from '../src/system-message.js';
import { ScriptedChatModel } from '../src/testing.js';
import { addTool } from './helpers.js';

describe('retry backoff', () => {
  const policy = resolveRetryPolicy({ initialDelayMs: 100, maxDelayMs: 1000 });

  it('grows exponentially with jitter between half and the whole step, capped', () => {
    expect(retryDelay(0, policy, undefined, () => 0)).toBe(50);
    expect(retryDelay(0, policy, undefined, () => 0.999)).toBe(100);
    expect(retryDelay(2, policy, undefined, () => 0)).toBe(200);
    expect(retryDelay(10, policy, undefined, () => 0.999)).toBe(1000);
  });

  it('follows Retry-After, capped at the maximum', () => {
    expect(retryDelay(0, policy, 300)).toBe(300);
    expect(retryDelay(0, policy, 60_000)).toBe(1000);
    const headers = (values: Record<string, string>) => ({
      get: (name: string) => values[name] ?? null,
    });
    expect(parseRetryAfter(headers({ 'retry-after-ms': '250' }))).toBe(250);
    expect(parseRetryAfter(headers({ 'retry-after': '2' }))).toBe(2000);
    expect(parseRetryAfter(headers({ 'retry-after': new Date(10_000).toUTCString() }), 4_000)).toBe(
      6000,
    );
    expect(parseRetryAfter(headers({}))).toBeUndefined();
  });
});

describe('messages and languages', () => {
  it('detects Chinese from user messages only', () => {
    expect(detectLanguage([{ role: 'user', content: 'hello' }])).toBe('en');
    expect(detectLanguage([{ role: 'user', content: [{ type: 'text', text: '你好' }] }])).toBe(
      'zh',
    );
    expect(
      detectLanguage([
        { role: 'system', content: '中文系统' },
        { role: 'user', content: 'hi' },
      ]),
    ).toBe('en');
  });

  it('round-trips a Message without sharing objects', () => {
    const plain: ChatMessage = {
      role: 'assistant',
      content: 'x',
      tool_calls: [{ id: '1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    };
    const message = new Message(plain);
    const copy = message.toJSON();
    expect(copy).toEqual(plain);
    (copy as { tool_calls: { id: string }[] }).tool_calls[0]!.id = 'changed';
    expect(message.tool_calls![0]!.id).toBe('1');
  });

  it('inserts a system message when there is none', () => {
    expect(mergeSystemMessage([{ role: 'user', content: 'q' }], 'S')).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'q' },
    ]);
    expect(mergeSystemMessage([{ role: 'user', content: 'q' }], '')).toEqual([
      { role: 'user', content: 'q' },
    ]);
  });
});

describe('ScriptedChatModel (in-process double)', () => {
  it('drives an agent like the HTTP server does, and records requests', async () => {
    const model = new ScriptedChatModel({
      script: [
        { toolCalls: [{ name: 'add', arguments: { a: 2, b: 2 } }], chunkSize: 3 },
        { text: 'four' },
      ],
    });
    const agent = new FnCallAgent({ model, tools: [addTool] });
    const result = await agent.run([{ role: 'user', content: '2+2?' }], { seed: 1 }).final();
    expect(result.messages.map((message) => message.content)).toEqual([null, '4', 'four']);
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0]!.seed).toBe(1);
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: 'tool', content: '4' });
  });

  it('raises scripted HTTP errors as ModelServiceError with the status', async () => {
    const model = new ScriptedChatModel({ script: [{ status: 503 }] });
    const agent = new FnCallAgent({ model });
    await expect(agent.run([{ role: 'user', content: 'x' }]).final()).rejects.toMatchObject({
      code: 'model_service_error',
      statusCode: 503,
    });
  });

  it('stops the model when the consumer stops iterating', async () => {
    const model = new ScriptedChatModel({
      script: [{ text: 'long '.repeat(100), chunkSize: 5, chunkDelayMs: 2 }],
    });
    const agent = new FnCallAgent({ model });
    let snapshots = 0;
    for await (const _response of agent.run([{ role: 'user', content: 'x' }]))
      if (++snapshots === 3) break;
    expect(model.requests[0]!.signal!.aborted).toBe(true);
  });

  it('exposes the UI events as a stream ending in run-end, and the result', async () => {
    const model = new ScriptedChatModel({
      script: [
        { toolCalls: [{ id: 'k1', name: 'add', arguments: { a: 1, b: 2 } }] },
        { text: 'three' },
      ],
    });
    const agent = new FnCallAgent({ model, tools: [addTool], name: 'calc' });
    const run = agent.run([{ role: 'user', content: '1+2' }]);
    const types: string[] = [];
    const events = run.events();
    let next = await events.next();
    while (!next.done) {
      types.push(next.value.type);
      next = await events.next();
    }
    expect(types[0]).toBe('run-start');
    expect(types.at(-1)).toBe('run-end');
    expect(types).toContain('tool-end');
    expect(next.value.status).toBe('completed');
    expect(run.result!.messages.at(-1)).toEqual({
      role: 'assistant',
      content: 'three',
      name: 'calc',
    });
  });

  it('allows one consumer per run', async () => {
    const agent = new FnCallAgent({ model: new ScriptedChatModel({ script: [{ text: 'a' }] }) });
    const run = agent.run([{ role: 'user', content: 'x' }]);
    await run.final();
    await expect(run.final()).rejects.toThrow(/already being consumed/);
  });
});
