import { afterEach, describe, expect, it } from '@jest/globals';
import OpenAI from 'openai';
import type { OpenAITestServer } from '../src/testing.js';
import { startOpenAITestServer } from '../src/testing.js';

let server: OpenAITestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function frames(raw: string): string[] {
  return raw
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => {
      expect(frame.startsWith('data: ')).toBe(true);
      return frame.slice('data: '.length);
    });
}

describe('the OpenAI-compatible test server', () => {
  it('streams SSE in the OpenAI shape: role chunk, deltas, tool-call fragments, finish, usage, [DONE]', async () => {
    server = await startOpenAITestServer({
      script: [
        {
          text: 'Hi!',
          toolCalls: [{ id: 'call_a', name: 'f', arguments: '{"x":1}' }],
          chunkSize: 4,
        },
      ],
    });
    const response = await fetch(`${server.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'test-model',
        messages: [{ role: 'user', content: 'x' }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const data = frames(await response.text());
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((frame) => JSON.parse(frame));
    for (const chunk of chunks)
      expect(chunk).toMatchObject({
        object: 'chat.completion.chunk',
        model: 'test-model',
        id: chunks[0].id,
      });
    expect(chunks[0].choices[0]).toEqual({
      index: 0,
      delta: { role: 'assistant', content: '', refusal: null },
      logprobs: null,
      finish_reason: null,
    });
    expect(chunks[1].choices[0].delta).toEqual({ content: 'Hi!' });
    expect(chunks[2].choices[0].delta).toEqual({
      tool_calls: [
        { index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } },
      ],
    });
    expect(chunks[3].choices[0].delta).toEqual({
      tool_calls: [{ index: 0, function: { arguments: '{"x"' } }],
    });
    expect(chunks[4].choices[0].delta).toEqual({
      tool_calls: [{ index: 0, function: { arguments: ':1}' } }],
    });
    expect(chunks[5].choices[0]).toMatchObject({ delta: {}, finish_reason: 'tool_calls' });
    expect(chunks[5].usage).toBeNull();
    expect(chunks[6].choices).toEqual([]);
    expect(chunks[6].usage).toMatchObject({
      prompt_tokens: expect.any(Number),
      completion_tokens: expect.any(Number),
      total_tokens: expect.any(Number),
    });
  });

  it('answers non-streamed requests, lists its model, and records what it received', async () => {
    server = await startOpenAITestServer({
      script: [{ text: 'Whole answer.', usage: { promptTokens: 3, completionTokens: 2 } }],
      model: 'qwen-test',
    });
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'secret', maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'qwen-test',
      messages: [{ role: 'user', content: 'q' }],
      temperature: 0,
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]!.message.content).toBe('Whole answer.');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    expect((await client.models.list()).data.map((model) => model.id)).toEqual(['qwen-test']);
    expect(server.requests[0]!.body).toMatchObject({ model: 'qwen-test', temperature: 0 });
    expect(server.requests[0]!.headers.authorization).toBe('Bearer secret');
  });

  it('applies stop sequences, answers scripted errors with their headers, and says when its script is exhausted', async () => {
    server = await startOpenAITestServer({
      script: [{ text: 'one STOP two' }, { status: 429, headers: { 'retry-after': '7' } }],
    });
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
    const stopped = await client.chat.completions.create({
      model: 'm',
      messages: [],
      stop: ['STOP'],
    });
    expect(stopped.choices[0]!.message.content).toBe('one ');
    const limited = await client.chat.completions
      .create({ model: 'm', messages: [] })
      .catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe(
      '7',
    );
    const exhausted = await client.chat.completions
      .create({ model: 'm', messages: [] })
      .catch((error: unknown) => error);
    expect((exhausted as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
    expect((exhausted as Error).message).toMatch(/no reply for request 3/);
  });
});
