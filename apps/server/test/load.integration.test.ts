import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CodeInterpreter, createCodeInterpreterTool } from '@quiver/code-interpreter';
import { readEvents, exampleToolkit, startTestServer } from './helpers.js';

// Kernel processes of this test are recognisable by their work root.
const workRoot = mkdtempSync(join(tmpdir(), 'qload-'));
let server: Awaited<ReturnType<typeof startTestServer>>;

/** Live kernels of this test: distinct session directories named by live processes. */
function kernelProcesses(): string[] {
  const sessions = new Set<string>();
  const pattern = new RegExp(`${workRoot}/([^/\\s\\0]+)`);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const match = pattern.exec(readFileSync(`/proc/${entry}/cmdline`, 'utf8'));
      if (match) sessions.add(match[1]!);
    } catch {
      // The process ended while we looked.
    }
  }
  return [...sessions];
}

beforeAll(async () => {
  const toolkit = exampleToolkit();
  const interpreter = new CodeInterpreter({ workRoot, poolSize: 0, maxKernels: 4 });
  toolkit.register(createCodeInterpreterTool({ interpreter }));
  toolkit.onClose(() => interpreter.close());
  server = await startTestServer({ toolkit });
});
afterAll(async () => {
  await server?.close();
});

const post = (path: string, body: unknown) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('load: fast tools and kernels across sessions', () => {
  it('holds 200 concurrent calls (kernel runs in 4 sessions) with no lost or crossed result', async () => {
    const heapBefore = process.memoryUsage().heapUsed;
    const calls = Array.from({ length: 200 }, (_, index) => index);
    const kind = (index: number) =>
      index % 5 === 0 ? 'kernel' : index % 5 === 1 ? 'stream' : 'fast';
    const results = await Promise.all(
      calls.map(async (index) => {
        if (kind(index) === 'kernel') {
          const response = await post('/v1/tools/code_interpreter/call', {
            arguments: { code: `x_${index} = ${index} * 11\nprint(x_${index})` },
            sessionId: `session-${index % 4}`,
          });
          const body = (await response.json()) as { response: { content: { text: string }[] } };
          return body.response.content
            .map((block) => block.text)
            .join('')
            .trim();
        }
        if (kind(index) === 'stream') {
          const events = await readEvents(
            await post('/v1/tools/countdown/call', {
              arguments: { from: 2, intervalMs: 1 },
              stream: true,
            }),
          );
          return events.at(-1)!.data.response.content[0].text as string;
        }
        const response = await post('/v1/tools/calculator/call', {
          arguments: { expression: `${index} * 3 + 1` },
        });
        const body = (await response.json()) as { response: { content: { text: string }[] } };
        return body.response.content[0]!.text;
      }),
    );
    for (const index of calls) {
      const expected =
        kind(index) === 'kernel'
          ? String(index * 11)
          : kind(index) === 'stream'
            ? '2\n1\nliftoff'
            : String(index * 3 + 1);
      expect(results[index]).toBe(expected);
    }
    // Each session kept exactly its own variables: no run landed in another session's kernel.
    for (let session = 0; session < 4; session++) {
      const response = await post('/v1/tools/code_interpreter/call', {
        arguments: {
          code: 'print(sorted(int(k[2:]) for k in globals() if k.startswith("x_")))',
        },
        sessionId: `session-${session}`,
      });
      const body = (await response.json()) as { response: { content: { text: string }[] } };
      const own = calls.filter((index) => kind(index) === 'kernel' && index % 4 === session);
      expect(body.response.content[0]!.text.trim()).toBe(`[${own.join(', ')}]`);
    }
    expect(kernelProcesses().length).toBeLessThanOrEqual(4);
    // Generous bound: the 200 requests and their answers, not a leak per call.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(200 * 1024 * 1024);
  });

  it('answers malformed requests with 4xx and a message', async () => {
    const cases: [string, string, number][] = [
      ['/v1/tools/calculator/call', '{"arguments": ', 400],
      ['/v1/tools/calculator/call', '{"arguments": 5}', 400],
      ['/v1/tools/calculator/call', '{"arguments": {"expr": "1"}}', 422],
      ['/v1/tools/no_such_tool/call', '{}', 422],
      ['/v1/chat', '{"messages": [{"role": "wizard"}]}', 503],
      ['/v1/pages', '{"url": "not a url"}', 503],
    ];
    for (const [path, body, status] of cases) {
      const response = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect([path, response.status]).toEqual([path, status]);
      const answer = (await response.json()) as {
        error?: { message: string };
        response?: { content: { text: string }[] };
      };
      expect(
        (answer.error?.message ?? answer.response?.content[0]?.text ?? '').length,
      ).toBeGreaterThan(10);
    }
  });

  it('stops every kernel on shutdown', async () => {
    expect(kernelProcesses().length).toBeGreaterThan(0);
    await server.close();
    for (let attempt = 0; attempt < 100 && kernelProcesses().length > 0; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(kernelProcesses()).toEqual([]);
  });
});
