import { describe, expect, it } from '@jest/globals';
import type { ToolResponse } from '@quiver/core';
import { z } from 'zod';
import type { ToolMiddleware } from '../src/index.js';
import { Toolkit, defineTool } from '../src/index.js';
import { collect, errorOf, expectWellFormed, finalChunk, textOf } from './helpers.js';

function makeToolkit(log: string[] = []): Toolkit {
  const toolkit = new Toolkit();
  toolkit.register(
    defineTool({
      name: 'echo',
      description: 'd',
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => {
        log.push(`tool:${text}`);
        return text;
      },
    }),
  );
  toolkit.register(
    defineTool({
      name: 'stream',
      description: 'd',
      parameters: z.object({}),
      *execute() {
        yield 'a';
        yield 'b';
        return 'c';
      },
    }),
  );
  return toolkit;
}

const echo = (text: string) => ({ id: 'c1', name: 'echo', arguments: JSON.stringify({ text }) });

describe('middleware', () => {
  it('runs in onion order: the first registered is the outermost', async () => {
    const log: string[] = [];
    const toolkit = makeToolkit(log);
    const layer = (name: string): ToolMiddleware =>
      async function* (invocation, next) {
        log.push(`${name}:in`);
        yield* next(invocation);
        log.push(`${name}:out`);
      };
    toolkit.use(layer('outer')).use(layer('middle')).use(layer('inner'));
    const chunks = await collect(toolkit.call(echo('x')));
    expectWellFormed(chunks);
    expect(log).toEqual([
      'outer:in',
      'middle:in',
      'inner:in',
      'tool:x',
      'inner:out',
      'middle:out',
      'outer:out',
    ]);
  });

  it('sees the parsed arguments, the registered tool and the context', async () => {
    const toolkit = makeToolkit();
    let seen: unknown;
    toolkit.use((invocation, next) => {
      seen = {
        name: invocation.name,
        arguments: invocation.arguments,
        tool: invocation.tool?.name,
        callId: invocation.context.callId,
        raw: invocation.toolCall.arguments,
      };
      return next(invocation);
    });
    await collect(toolkit.call({ id: 'c7', name: 'echo', arguments: "{'text': 'hi',}" }));
    expect(seen).toEqual({
      name: 'echo',
      arguments: { text: 'hi' },
      tool: 'echo',
      callId: 'c7',
      raw: "{'text': 'hi',}",
    });
  });

  it('may rewrite the call: another tool, other arguments', async () => {
    const log: string[] = [];
    const toolkit = makeToolkit(log);
    toolkit.use((invocation, next) => {
      if (invocation.name === 'shout') {
        invocation.name = 'echo';
        invocation.arguments = { text: String(invocation.arguments?.text).toUpperCase() };
      }
      return next(invocation);
    });
    const response = await toolkit.callToCompletion({
      id: 'c',
      name: 'shout',
      arguments: '{"text":"hey"}',
    });
    expect(textOf(response)).toBe('HEY');
    expect(log).toEqual(['tool:HEY']);
  });

  it('may repair arguments the model sent unreadable', async () => {
    const toolkit = makeToolkit();
    toolkit.use((invocation, next) => {
      if (invocation.arguments === undefined && invocation.parseError)
        invocation.arguments = { text: 'fallback' };
      return next(invocation);
    });
    expect(
      textOf(
        await toolkit.callToCompletion({ id: 'c', name: 'echo', arguments: 'not json at all' }),
      ),
    ).toBe('fallback');
  });

  it('may short-circuit with its own response; the tool never runs', async () => {
    const log: string[] = [];
    const toolkit = makeToolkit(log);
    toolkit.use((invocation) => ({
      content: [{ type: 'text', text: `cached ${String(invocation.arguments?.text)}` }],
    }));
    const chunks = await collect(toolkit.call(echo('x')));
    expectWellFormed(chunks);
    expect(textOf(chunks)).toBe('cached x');
    expect(log).toEqual([]);
  });

  it('may short-circuit asynchronously (a Promise of a response)', async () => {
    const toolkit = makeToolkit();
    toolkit.use(async () => ({ content: [{ type: 'text', text: 'from a promise' }] }));
    expect(textOf(await toolkit.callToCompletion(echo('x')))).toBe('from a promise');
  });

  it('may be an async function that resolves to the inner stream', async () => {
    const log: string[] = [];
    const toolkit = makeToolkit(log);
    toolkit.use(async (invocation, next) => {
      await Promise.resolve();
      return next(invocation);
    });
    const chunks = await collect(toolkit.call({ id: 'c', name: 'stream', arguments: '{}' }));
    expectWellFormed(chunks);
    expect(textOf(chunks)).toBe('abc');
    expect(textOf(await toolkit.callToCompletion(echo('x')))).toBe('x');
    expect(log).toEqual(['tool:x']);
  });

  it('may transform every streamed chunk', async () => {
    const toolkit = makeToolkit();
    toolkit.use(async function* upper(invocation, next) {
      for await (const chunk of next(invocation)) {
        yield {
          ...chunk,
          content: chunk.content.map((block) =>
            block.type === 'text' ? { ...block, text: block.text.toUpperCase() } : block,
          ),
        };
      }
    });
    const chunks = await collect(toolkit.call({ id: 'c', name: 'stream', arguments: '{}' }));
    expectWellFormed(chunks);
    expect(chunks.map((chunk) => textOf(chunk))).toEqual(['A', 'B', 'C']);
  });

  it('may observe chunks and append one after the last: exactly one chunk stays marked last', async () => {
    const toolkit = makeToolkit();
    const observed: ToolResponse[] = [];
    toolkit.use(async function* audit(invocation, next) {
      for await (const chunk of next(invocation)) {
        observed.push(chunk);
        yield chunk;
      }
      yield { content: [{ type: 'text', text: '[audited]' }], isLast: true };
    });
    const chunks = await collect(toolkit.call({ id: 'c', name: 'stream', arguments: '{}' }));
    expectWellFormed(chunks);
    expect(textOf(chunks)).toBe('abc[audited]');
    expect(observed.map((chunk) => chunk.isLast === true)).toEqual([false, false, true]);
  });

  it('a middleware that yields nothing still gives the caller a last chunk', async () => {
    const toolkit = makeToolkit();
    toolkit.use(async function* silent() {});
    const chunks = await collect(toolkit.call(echo('x')));
    expectWellFormed(chunks);
    expect(chunks).toEqual([{ content: [], isLast: true }]);
  });

  describe('errors inside a middleware become error responses', () => {
    it('thrown synchronously', async () => {
      const toolkit = makeToolkit();
      toolkit.use(function syncThrower() {
        throw new Error('sync failure');
      });
      const response = finalChunk(await collect(toolkit.call(echo('x'))));
      expect(errorOf(response)).toMatchObject({ code: 'tool_execution_failed', toolName: 'echo' });
      expect(textOf(response)).toMatch(
        /Middleware "syncThrower" failed while handling "echo": sync failure/,
      );
    });

    it('thrown mid-stream, after chunks were passed on', async () => {
      const log: string[] = [];
      const toolkit = makeToolkit(log);
      toolkit.use(async function* midStream(invocation, next) {
        yield* next(invocation);
        throw new Error('after the tool');
      });
      const chunks = await collect(toolkit.call({ id: 'c', name: 'stream', arguments: '{}' }));
      expectWellFormed(chunks);
      expect(textOf(chunks.slice(0, 3))).toBe('abc');
      expect(textOf(finalChunk(chunks))).toMatch(/Middleware "midStream" failed.*after the tool/);
      expect(finalChunk(chunks).isError).toBe(true);
    });

    it('a returned promise that rejects', async () => {
      const toolkit = makeToolkit();
      toolkit.use(async function rejecting() {
        throw new Error('async failure');
      });
      const response = finalChunk(await collect(toolkit.call(echo('x'))));
      expect(textOf(response)).toMatch(/Middleware "rejecting" failed.*async failure/);
    });

    it('an outer middleware sees the inner one’s error as a response and keeps working', async () => {
      const toolkit = makeToolkit();
      const seen: ToolResponse[] = [];
      toolkit.use(async function* outer(invocation, next) {
        for await (const chunk of next(invocation)) {
          seen.push(chunk);
          yield chunk;
        }
      });
      toolkit.use(() => {
        throw new Error('inner broke');
      });
      const chunks = await collect(toolkit.call(echo('x')));
      expectWellFormed(chunks);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.isError).toBe(true);
    });

    it('a broken async iterable (next rejects) is still not a throw', async () => {
      const toolkit = makeToolkit();
      toolkit.use(() => ({
        [Symbol.asyncIterator]: () => ({
          next: () => Promise.reject(new Error('broken iterator')),
        }),
      }));
      const response = finalChunk(await collect(toolkit.call(echo('x'))));
      expect(response.isError).toBe(true);
      expect(textOf(response)).toMatch(/broken iterator/);
    });
  });

  it('wraps calls to unknown tools too (a middleware may route them)', async () => {
    const toolkit = makeToolkit();
    toolkit.use((invocation, next) => {
      if (invocation.tool === undefined) invocation.name = 'echo';
      return next(invocation);
    });
    expect(
      textOf(
        await toolkit.callToCompletion({ id: 'c', name: 'ehco', arguments: '{"text":"routed"}' }),
      ),
    ).toBe('routed');
  });
});
