import { afterEach, describe, expect, it } from '@jest/globals';
import type { ChatRequest, ChatStreamEvent } from '@quiver/core';
import { ConfigurationError, ModelServiceError } from '@quiver/core';
import { OpenAIChatModel } from '../src/openai-chat-model.js';
import type { OpenAITestServer } from '../src/testing.js';
import { startOpenAITestServer } from '../src/testing.js';

let server: OpenAITestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function modelFor(
  target: OpenAITestServer,
  options: Partial<ConstructorParameters<typeof OpenAIChatModel>[0]> = {},
) {
  return new OpenAIChatModel({
    baseURL: target.baseURL,
    apiKey: 'test-key',
    model: 'test-model',
    retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5 },
    ...options,
  });
}

async function collect(model: OpenAIChatModel, request: ChatRequest): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = [];
  for await (const event of model.stream(request)) events.push(event);
  return events;
}

const question: ChatRequest = { messages: [{ role: 'user', content: 'Hello?' }] };

describe('OpenAIChatModel over a real HTTP server and the openai SDK', () => {
  it('streams a plain answer with usage, and sends seed, temperature and max tokens', async () => {
    server = await startOpenAITestServer({
      script: [
        {
          text: 'Hello there, how can I help today?',
          chunkSize: 5,
          usage: { promptTokens: 12, completionTokens: 9 },
        },
      ],
    });
    const events = await collect(modelFor(server, { seed: 7 }), {
      ...question,
      temperature: 0.2,
      maxTokens: 64,
    });
    const text = events
      .flatMap((event) => (event.type === 'text-delta' ? [event.text] : []))
      .join('');
    expect(text).toBe('Hello there, how can I help today?');
    expect(events.filter((event) => event.type === 'text-delta').length).toBeGreaterThan(3);
    const finish = events.at(-1);
    expect(finish).toMatchObject({
      type: 'finish',
      finishReason: 'stop',
      message: { role: 'assistant', content: 'Hello there, how can I help today?' },
      usage: { promptTokens: 12, completionTokens: 9, totalTokens: 21 },
    });
    const body = server.requests[0]!.body;
    expect(body).toMatchObject({
      model: 'test-model',
      stream: true,
      stream_options: { include_usage: true },
      seed: 7,
      temperature: 0.2,
      max_tokens: 64,
    });
    expect(server.requests[0]!.headers.authorization).toBe('Bearer test-key');
  });

  it('assembles one tool call from argument fragments', async () => {
    server = await startOpenAITestServer({
      script: [
        {
          toolCalls: [
            { id: 'call_w', name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } },
          ],
          chunkSize: 3,
        },
      ],
    });
    const events = await collect(modelFor(server), {
      ...question,
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'weather',
            parameters: { type: 'object', properties: {} },
          },
        },
      ],
      toolChoice: { name: 'get_weather' },
    });
    const deltas = events.filter((event) => event.type === 'tool-call-delta');
    expect(deltas.length).toBeGreaterThan(5);
    expect(events.filter((event) => event.type === 'tool-call')).toEqual([
      {
        type: 'tool-call',
        toolCall: {
          id: 'call_w',
          name: 'get_weather',
          arguments: '{"city":"Paris","unit":"celsius"}',
        },
      },
    ]);
    const finish = events.at(-1) as Extract<ChatStreamEvent, { type: 'finish' }>;
    expect(finish.finishReason).toBe('tool_calls');
    expect(finish.message.content).toBeNull();
    expect(finish.message.tool_calls).toEqual([
      {
        id: 'call_w',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
      },
    ]);
    expect(server.requests[0]!.body.tool_choice).toEqual({
      type: 'function',
      function: { name: 'get_weather' },
    });
  });

  it('keeps several tool calls of one turn apart, in order', async () => {
    server = await startOpenAITestServer({
      script: [
        {
          text: 'Checking both.',
          toolCalls: [
            { name: 'lookup', arguments: { q: 'first query with some length' } },
            { name: 'lookup', arguments: { q: 'second' } },
            { name: 'other', arguments: '{}' },
          ],
          chunkSize: 4,
        },
      ],
    });
    const events = await collect(modelFor(server), question);
    const calls = events.flatMap((event) => (event.type === 'tool-call' ? [event.toolCall] : []));
    expect(calls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([
      ['lookup', { q: 'first query with some length' }],
      ['lookup', { q: 'second' }],
      ['other', {}],
    ]);
    expect(new Set(calls.map((call) => call.id)).size).toBe(3);
    expect((events.at(-1) as Extract<ChatStreamEvent, { type: 'finish' }>).message.content).toBe(
      'Checking both.',
    );
  });

  it('retries a 429 (honouring Retry-After) and then succeeds', async () => {
    server = await startOpenAITestServer({
      script: [{ status: 429, headers: { 'retry-after-ms': '10' } }, { text: 'ok after retry' }],
    });
    const events = await collect(modelFor(server), question);
    expect(server.requests).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ type: 'finish', message: { content: 'ok after retry' } });
  });

  it('gives up on repeated 500s with a ModelServiceError carrying status and body', async () => {
    const body = { error: { message: 'upstream exploded', type: 'server_error', code: 'boom' } };
    server = await startOpenAITestServer({
      script: [
        { status: 500, body },
        { status: 500, body },
        { status: 500, body },
      ],
    });
    const failure = await collect(modelFor(server), question).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ModelServiceError);
    const error = failure as ModelServiceError;
    expect(error.statusCode).toBe(500);
    expect(error.body).toEqual(body.error);
    expect(error.isRetryable).toBe(true);
    expect(error.message).toContain('upstream exploded');
    expect(server.requests).toHaveLength(3);
  });

  it('does not retry a 400', async () => {
    server = await startOpenAITestServer({ script: [{ status: 400 }, { text: 'never' }] });
    const error = (await collect(modelFor(server), question).catch(
      (caught: unknown) => caught,
    )) as ModelServiceError;
    expect(error).toBeInstanceOf(ModelServiceError);
    expect(error.statusCode).toBe(400);
    expect(error.isRetryable).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a connection dropped before the answer', async () => {
    server = await startOpenAITestServer({
      script: [{ drop: true }, { text: 'second time lucky' }],
    });
    const events = await collect(modelFor(server), question);
    expect(events.at(-1)).toMatchObject({
      type: 'finish',
      message: { content: 'second time lucky' },
    });
    expect(server.requests).toHaveLength(2);
  });

  it('fails with a retryable ModelServiceError when the connection drops mid-stream, without replaying output', async () => {
    // The delay makes the first chunks reach the caller before the cut.
    server = await startOpenAITestServer({
      script: [
        {
          text: 'a long answer that will be cut off',
          chunkSize: 4,
          dropAfterChunks: 3,
          chunkDelayMs: 30,
        },
        { text: 'unused' },
      ],
    });
    const seen: ChatStreamEvent[] = [];
    const failure = await (async () => {
      for await (const event of modelFor(server!).stream(question)) seen.push(event);
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ModelServiceError);
    expect((failure as ModelServiceError).isRetryable).toBe(true);
    const received = seen.map((event) => (event.type === 'text-delta' ? event.text : '')).join('');
    expect(received.length).toBeGreaterThan(0);
    expect('a long answer that will be cut off'.startsWith(received)).toBe(true);
    expect(received.length).toBeLessThan('a long answer that will be cut off'.length);
    expect(seen.some((event) => event.type === 'finish')).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('retries transparently when the connection drops before any output reached the caller', async () => {
    // Without a delay the cut arrives with the first chunks, before the SDK yields any of them.
    server = await startOpenAITestServer({
      script: [{ text: 'cut', dropAfterChunks: 1 }, { text: 'complete answer' }],
    });
    const events = await collect(modelFor(server), question);
    expect(events.at(-1)).toMatchObject({
      type: 'finish',
      message: { content: 'complete answer' },
    });
    expect(
      events
        .filter((event) => event.type === 'text-delta')
        .map((event) => (event as { text: string }).text)
        .join(''),
    ).toBe('complete answer');
  });

  it('stops when the signal aborts mid-stream', async () => {
    server = await startOpenAITestServer({
      script: [{ text: 'x'.repeat(400), chunkSize: 1, chunkDelayMs: 5 }],
    });
    const controller = new AbortController();
    let deltas = 0;
    const failure = await (async () => {
      for await (const event of modelFor(server!).stream({
        ...question,
        signal: controller.signal,
      })) {
        if (event.type === 'text-delta' && ++deltas === 3)
          controller.abort(new Error('user cancelled'));
      }
    })().catch((error: unknown) => error);
    expect((failure as Error).message).toBe('user cancelled');
    expect(deltas).toBeLessThan(50);
  });

  it('turns a request that gets no answer into a timeout error', async () => {
    server = await startOpenAITestServer({ script: [{ hang: true }] });
    const failure = await collect(
      modelFor(server, { timeoutMs: 150, retry: { maxRetries: 0 } }),
      question,
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ModelServiceError);
    expect((failure as ModelServiceError).message).toMatch(/did not answer within 150 ms/);
  });

  it('retries a request that timed out, then succeeds', async () => {
    server = await startOpenAITestServer({ script: [{ hang: true }, { text: 'late but fine' }] });
    const events = await collect(modelFor(server, { timeoutMs: 150 }), question);
    expect(events.at(-1)).toMatchObject({ type: 'finish', message: { content: 'late but fine' } });
    expect(server.requests).toHaveLength(2);
  });

  it('streams reasoning separately from the answer', async () => {
    server = await startOpenAITestServer({
      script: [{ reasoning: 'The user greets me; greet back.', text: 'Hello!', chunkSize: 6 }],
    });
    const events = await collect(modelFor(server), question);
    const reasoning = events
      .flatMap((event) => (event.type === 'reasoning-delta' ? [event.text] : []))
      .join('');
    expect(reasoning).toBe('The user greets me; greet back.');
    expect(events.at(-1)).toMatchObject({
      type: 'finish',
      message: { content: 'Hello!', reasoning_content: 'The user greets me; greet back.' },
    });
  });

  it('sends a local file part as a line of text naming it', async () => {
    server = await startOpenAITestServer({ script: [{ text: 'ok' }] });
    await collect(modelFor(server), {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Summarise' },
            { type: 'file', file: { path: '/data/report.pdf' } },
          ],
        },
      ],
    });
    const sent = (server.requests[0]!.body.messages as { content: unknown }[])[0]!.content;
    expect(sent).toEqual([
      { type: 'text', text: 'Summarise' },
      { type: 'text', text: '[file: /data/report.pdf]' },
    ]);
  });
});

describe('OpenAIChatModel configuration', () => {
  it('names QUIVER_MODEL when no model is configured', () => {
    expect(() => new OpenAIChatModel({ env: { OPENAI_API_KEY: 'k' } })).toThrow(ConfigurationError);
    expect(() => new OpenAIChatModel({ env: { OPENAI_API_KEY: 'k' } })).toThrow(/QUIVER_MODEL/);
  });

  it('names OPENAI_API_KEY and OPENAI_BASE_URL when no endpoint is configured', () => {
    expect(() => new OpenAIChatModel({ env: { QUIVER_MODEL: 'm' } })).toThrow(
      /OPENAI_API_KEY.*OPENAI_BASE_URL/s,
    );
  });

  it('reads the environment, and a base URL alone is enough for local servers', () => {
    const model = new OpenAIChatModel({
      env: { QUIVER_MODEL: 'qwen2.5', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' },
    });
    expect(model.modelId).toBe('qwen2.5');
    expect(model.baseURL).toBe('http://127.0.0.1:1/v1');
  });
});
