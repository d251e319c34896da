// The direct path of an asynchronous tool (no middleware): one iterator does the timeout,
// cancellation and last-chunk marking. These cases check what a reader can do to it that the
// other suites do not: read twice at once, leave while the tool is still pending, close the
// toolkit meanwhile, and a tool whose Promise resolves late after a stop.
import { describe, expect, it } from '@jest/globals';
import type { ToolContext, ToolResponse } from '@quiver/core';
import { z } from 'zod';
import { Toolkit, defineTool } from '../src/index.js';
import { collect, errorOf, finalChunk, sleep, textOf } from './helpers.js';

const call = (name: string) => ({ id: `call-${name}`, name, arguments: '{}' });

function pendingTool() {
  const contexts: ToolContext[] = [];
  let answer!: (value: string) => void;
  const toolkit = new Toolkit();
  toolkit.register(
    defineTool({
      name: 'slow',
      description: 'answers when told',
      parameters: z.object({}),
      execute: (_args, context) => {
        contexts.push(context);
        return new Promise<string>((resolve) => {
          answer = resolve;
        });
      },
    }),
  );
  return { toolkit, contexts, answer: (value: string) => answer(value) };
}

describe('direct path of an asynchronous tool', () => {
  it('two reads at once get the answer and then the end, in order', async () => {
    const { toolkit, answer } = pendingTool();
    const stream = toolkit.call(call('slow'))[Symbol.asyncIterator]();
    const first = stream.next();
    const second = stream.next();
    answer('done');
    const [a, b] = await Promise.all([first, second]);
    expect(a.done).toBe(false);
    expect(textOf(a.value as ToolResponse)).toBe('done');
    expect((a.value as ToolResponse).isLast).toBe(true);
    expect(b.done).toBe(true);
  });

  it('a reader that leaves while the tool is pending aborts the tool signal; the late answer goes nowhere', async () => {
    const { toolkit, contexts, answer } = pendingTool();
    const stream = toolkit.call(call('slow'))[Symbol.asyncIterator]();
    const reading = stream.next();
    await sleep(1);
    await stream.return?.();
    expect(contexts[0]!.signal.aborted).toBe(true);
    expect(errorOf((await reading).value as ToolResponse).code).toBe('tool_aborted');
    answer('too late');
    await sleep(1);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it('close() while the tool is pending ends the call with tool_aborted and aborts its signal', async () => {
    const { toolkit, contexts } = pendingTool();
    const pending = collect(toolkit.call(call('slow')));
    await sleep(1);
    await toolkit.close();
    const response = finalChunk(await pending);
    expect(errorOf(response).code).toBe('tool_aborted');
    expect(contexts[0]!.signal.aborted).toBe(true);
  });

  it('the caller aborts while the first read waits: that read gets the stop chunk, the tool its reason', async () => {
    const { toolkit, contexts } = pendingTool();
    const controller = new AbortController();
    const stream = toolkit
      .call(call('slow'), { signal: controller.signal })
      [Symbol.asyncIterator]();
    const reading = stream.next();
    controller.abort(new Error('stop'));
    const step = await reading;
    expect(errorOf(step.value as ToolResponse).code).toBe('tool_aborted');
    expect(contexts[0]!.signal.reason).toEqual(new Error('stop'));
    expect((await stream.next()).done).toBe(true);
  });

  it('a generator aborted between reads: the next read gets the stop chunk, and its finally runs', async () => {
    let closed = false;
    const toolkit = new Toolkit();
    toolkit.register(
      defineTool({
        name: 'ticks',
        description: 'yields forever',
        parameters: z.object({}),
        async *execute() {
          try {
            for (let index = 0; ; index++) {
              yield `tick ${index}`;
              await sleep(1);
            }
          } finally {
            closed = true;
          }
        },
      }),
    );
    const controller = new AbortController();
    const stream = toolkit
      .call(call('ticks'), { signal: controller.signal })
      [Symbol.asyncIterator]();
    expect(textOf((await stream.next()).value as ToolResponse)).toBe('tick 0');
    controller.abort();
    const stop = await stream.next();
    expect(errorOf(stop.value as ToolResponse).code).toBe('tool_aborted');
    expect((stop.value as ToolResponse).isLast).toBe(true);
    expect((await stream.next()).done).toBe(true);
    await sleep(5);
    expect(closed).toBe(true);
  });

  it('a Promise that rejects with a non-Error value becomes a tool_execution_error response', async () => {
    const toolkit = new Toolkit();
    toolkit.register(
      defineTool({
        name: 'bad',
        description: 'rejects',
        parameters: z.object({}),
        execute: () => Promise.reject('plain string'),
      }),
    );
    const response = finalChunk(await collect(toolkit.call(call('bad'))));
    expect(response.isError).toBe(true);
    expect(textOf(response)).toMatch(/plain string/);
  });
});
