import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConfigurationError } from '@quiver/core';
import { defineTool } from '@quiver/core-registry';
import { z } from 'zod';
import { readEvents, startTestServer } from './helpers.js';

let server: Awaited<ReturnType<typeof startTestServer>>;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('REST API', () => {
  it('answers /healthz and binds to 127.0.0.1 by default', async () => {
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { ok: boolean }).ok).toBe(true);
    expect(server.host).toBe('127.0.0.1');
  });

  it('lists tools with their schemas and groups', async () => {
    const body = (await (await fetch(`${server.url}/v1/tools`)).json()) as {
      tools: { name: string; parameters: { type: string } }[];
      groups: { name: string }[];
    };
    expect(body.tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['calculator', 'countdown']),
    );
    expect(body.groups.map((group) => group.name)).toContain('basic');
  });

  it('calls a tool and returns its response', async () => {
    const response = await post('/v1/tools/calculator/call', { arguments: { expression: '7*6' } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { response: { content: { text: string }[] } };
    expect(body.response.content[0]!.text).toBe(String(7 * 6));
  });

  it('answers 422 with the validation message for bad tool arguments', async () => {
    const response = await post('/v1/tools/calculator/call', { arguments: { expr: 1 } });
    expect(response.status).toBe(422);
    const body = (await response.json()) as {
      response: { isError: boolean; content: { text: string }[] };
    };
    expect(body.response.isError).toBe(true);
    expect(body.response.content[0]!.text).toMatch(/"expression": is required/);
  });

  it('streams a tool call as server-sent events', async () => {
    const response = await post('/v1/tools/countdown/call', {
      arguments: { from: 3, intervalMs: 1 },
      stream: true,
    });
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = await readEvents(response);
    const chunks = events.filter((event) => event.event === 'chunk');
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    const end = events.at(-1)!;
    expect(end.event).toBe('end');
    expect(end.data.response.content[0].text).toBe('3\n2\n1\nliftoff');
  });

  it('rejects malformed JSON with 400 and a clear message', async () => {
    const response = await post('/v1/tools/calculator/call', '{"arguments": ');
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'invalid_json',
    );
  });

  it('rejects a body of the wrong shape with 400 naming the field', async () => {
    const response = await post('/v1/tools/calculator/call', { arguments: 42 });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/arguments/);
  });

  it('rejects a body over the size limit with 413', async () => {
    // node:http rather than fetch: the server answers before reading the body and closes the
    // connection, which must not disturb the connection pool the other tests share.
    const small = await startTestServer({}, { maxJsonBytes: 10_000 });
    try {
      const body = JSON.stringify({ arguments: { expression: '1'.repeat(50_000) } });
      const { status, text } = await new Promise<{ status: number; text: string }>(
        (resolve, reject) => {
          const request = httpRequest(
            `${small.url}/v1/tools/calculator/call`,
            {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                'content-length': Buffer.byteLength(body),
              },
            },
            (response) => {
              let text = '';
              response.on('data', (chunk: Buffer) => (text += chunk.toString()));
              response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
            },
          );
          request.on('error', reject);
          request.end(body);
        },
      );
      expect(status).toBe(413);
      expect((JSON.parse(text) as { error: { code: string } }).error.code).toBe('body_too_large');
    } finally {
      await small.close();
    }
  });

  it('answers 404 with JSON for unknown routes', async () => {
    const response = await fetch(`${server.url}/v1/nothing`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('toggles tool groups', async () => {
    server.toolkit.createGroup({ name: 'extra', description: 'extra tools' });
    server.toolkit.register(
      defineTool({
        name: 'echo',
        description: 'echo',
        group: 'extra',
        parameters: z.object({ text: z.string() }),
        execute: ({ text }) => text,
      }),
    );
    const before = await post('/v1/tools/echo/call', { arguments: { text: 'hi' } });
    expect(before.status).toBe(422);
    const toggle = await fetch(`${server.url}/v1/groups/extra`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ active: true }),
    });
    expect(toggle.status).toBe(200);
    const after = await post('/v1/tools/echo/call', { arguments: { text: 'hi' } });
    expect(after.status).toBe(200);
    const missing = await fetch(`${server.url}/v1/groups/nope`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ active: true }),
    });
    expect(missing.status).toBe(404);
  });

  it('stores uploads and refuses oversized ones', async () => {
    const form = new FormData();
    form.append('file', new Blob(['hello quiver']), 'notes.txt');
    const response = await fetch(`${server.url}/v1/files`, { method: 'POST', body: form });
    expect(response.status).toBe(201);
    const uploaded = (await response.json()) as { path: string; size: number };
    expect(await readFile(uploaded.path, 'utf8')).toBe('hello quiver');

    const small = await startTestServer({}, { maxUploadBytes: 1000 });
    try {
      const big = new FormData();
      big.append('file', new Blob([Buffer.alloc(5000)]), 'big.bin');
      const refused = await fetch(`${small.url}/v1/files`, { method: 'POST', body: big });
      expect(refused.status).toBe(413);
      const none = await fetch(`${small.url}/v1/files`, { method: 'POST', body: new FormData() });
      expect(none.status).toBe(400);
    } finally {
      await small.close();
    }
  });

  it('says chat is unavailable, and why, when no model is configured', async () => {
    const response = await post('/v1/chat', { messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(503);
    const info = (await (await fetch(`${server.url}/v1/info`)).json()) as {
      chat: { available: boolean };
    };
    expect(info.chat.available).toBe(false);
  });

  it('serves the web UI', async () => {
    const page = await fetch(`${server.url}/`);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toMatch(/<title>Quiver<\/title>/);
    const script = await fetch(`${server.url}/ui/app.js`);
    expect(script.status).toBe(200);
    const escape = await fetch(`${server.url}/ui/..%2Fpackage.json`);
    expect(escape.status).toBe(404);
  });
});

describe('security', () => {
  it('requires the bearer token when one is set', async () => {
    const guarded = await startTestServer({}, { token: 'secret-token' });
    try {
      const denied = await fetch(`${guarded.url}/v1/tools`);
      expect(denied.status).toBe(401);
      const wrong = await fetch(`${guarded.url}/v1/tools`, {
        headers: { authorization: 'Bearer nope' },
      });
      expect(wrong.status).toBe(401);
      const allowed = await fetch(`${guarded.url}/v1/tools`, {
        headers: { authorization: 'Bearer secret-token' },
      });
      expect(allowed.status).toBe(200);
    } finally {
      await guarded.close();
    }
  });

  it('refuses cross-origin browser requests and DNS-rebound host names', async () => {
    const simplePost = await fetch(`${server.url}/v1/tools/calculator/call`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', origin: 'http://evil.example' },
      body: JSON.stringify({ arguments: { expression: '1+1' } }),
    });
    expect(simplePost.status).toBe(403);
    expect(((await simplePost.json()) as { error: { code: string } }).error.code).toBe(
      'cross_origin',
    );
    const sameOrigin = await fetch(`${server.url}/v1/tools`, { headers: { origin: server.url } });
    expect(sameOrigin.status).toBe(200);
    const rebound = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(
        `${server.url}/v1/tools`,
        { headers: { host: `evil.example:${server.port}` } },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      request.on('error', reject);
      request.end();
    });
    expect(rebound).toBe(403);
  });

  it('refuses to bind a non-loopback address without a token', async () => {
    await expect(startTestServer({}, { host: '0.0.0.0' })).rejects.toBeInstanceOf(
      ConfigurationError,
    );
  });
});

describe('reliability', () => {
  it('frees a streamed call when the client disconnects', async () => {
    let aborted = false;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const local = await startTestServer();
    local.toolkit.register(
      defineTool({
        name: 'endless',
        description: 'streams until stopped',
        parameters: z.object({}),
        async *execute(_args, context) {
          context.signal.addEventListener('abort', () => (aborted = true));
          started();
          for (let index = 0; !context.signal.aborted; index++) {
            yield `${index}\n`;
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
        },
      }),
    );
    try {
      const controller = new AbortController();
      const response = await fetch(`${local.url}/v1/tools/endless/call`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: '{}',
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      await reader.read();
      await running;
      controller.abort();
      for (let attempt = 0; attempt < 200 && !aborted; attempt++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(aborted).toBe(true);
    } finally {
      await local.close();
    }
  });

  it('holds 200 concurrent tool calls with no lost or crossed results', async () => {
    const calls = Array.from({ length: 200 }, (_, index) => ({ index, stream: index % 4 === 0 }));
    const results = await Promise.all(
      calls.map(async ({ index, stream }) => {
        if (stream) {
          const response = await post('/v1/tools/countdown/call', {
            arguments: { from: 2, intervalMs: 1 },
            stream: true,
          });
          const events = await readEvents(response);
          return { index, text: events.at(-1)!.data.response.content[0].text as string };
        }
        const response = await post('/v1/tools/calculator/call', {
          arguments: { expression: `${index} * 3 + 1` },
        });
        const body = (await response.json()) as { response: { content: { text: string }[] } };
        return { index, text: body.response.content[0]!.text };
      }),
    );
    for (const { index, text } of results) {
      expect(text).toBe(index % 4 === 0 ? '2\n1\nliftoff' : String(index * 3 + 1));
    }
  });

  it('keeps per-session state, forgetting the least recently used session beyond the limit', async () => {
    const local = await startTestServer({}, { maxSessions: 2 });
    local.toolkit.register(
      defineTool({
        name: 'count_calls',
        description: 'counts the calls of this session',
        parameters: z.object({}),
        execute: (_args, context) => {
          const count = ((context.state.get('count') as number | undefined) ?? 0) + 1;
          context.state.set('count', count);
          return String(count);
        },
      }),
    );
    try {
      const counts: string[] = [];
      for (const sessionId of ['a', 'b', 'a', 'c', 'b', 'a']) {
        const response = await fetch(`${local.url}/v1/tools/count_calls/call`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ sessionId }),
        });
        counts.push(
          ((await response.json()) as { response: { content: { text: string }[] } }).response
            .content[0]!.text,
        );
      }
      // c evicts b (a was used more recently), then b evicts a.
      expect(counts).toEqual(['1', '1', '2', '1', '1', '1']);
    } finally {
      await local.close();
    }
  });

  it('closes the toolkit on shutdown', async () => {
    const local = await startTestServer();
    let closed = false;
    local.toolkit.onClose(() => {
      closed = true;
    });
    await local.close();
    expect(closed).toBe(true);
    await expect(fetch(`${local.url}/healthz`)).rejects.toThrow();
  });
});
