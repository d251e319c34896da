import { describe, expect, it } from '@jest/globals';
import { onToolAbort } from '@quiver/core';
import type { ToolContext } from '@quiver/core';
import type { Toolkit } from '../src/index.js';
import { bareTool, call, collect, errorOf, finalChunk, sleep, toolkitWith } from './helpers.js';

/** A toolkit with `wait`: a tool that waits until told of its cancellation through onAbort. */
function waiting(timeoutMs?: number): {
  toolkit: Toolkit;
  heard: unknown[];
  contexts: ToolContext[];
} {
  const heard: unknown[] = [];
  const contexts: ToolContext[] = [];
  const toolkit = toolkitWith([
    bareTool(
      'wait',
      (_args, context) => {
        contexts.push(context);
        return new Promise<string>((resolve) => {
          context.onAbort!((reason) => {
            heard.push(reason);
            resolve('stopped');
          });
        });
      },
      timeoutMs !== undefined ? { timeoutMs } : {},
    ),
  ]);
  return { toolkit, heard, contexts };
}

describe('context.onAbort', () => {
  it('tells the tool of the timeout, with the ToolTimeoutError', async () => {
    const { toolkit, heard } = waiting(30);
    const response = await toolkit.callToCompletion(call('wait'));
    expect(errorOf(response)).toMatchObject({ code: 'tool_timeout', timeoutMs: 30 });
    expect(heard).toHaveLength(1);
    expect(heard[0]).toMatchObject({ name: 'ToolTimeoutError' });
  });

  it("tells the tool of the caller's abort, on the streamed and the gathered path", async () => {
    for (const gathered of [false, true]) {
      const { toolkit, heard } = waiting();
      const controller = new AbortController();
      const pending = gathered
        ? toolkit.callToCompletion(call('wait'), { signal: controller.signal })
        : collect(toolkit.call(call('wait'), { signal: controller.signal })).then(finalChunk);
      await sleep(1);
      controller.abort(new Error('stop pressed'));
      expect(errorOf(await pending)).toMatchObject({ code: 'tool_aborted' });
      expect(heard).toHaveLength(1);
      expect(heard[0]).toBeInstanceOf(Error);
    }
  });

  it('tells the tool when the toolkit closes, and when the reader stops early', async () => {
    const closing = waiting();
    const pending = closing.toolkit.callToCompletion(call('wait'));
    await sleep(1);
    await closing.toolkit.close();
    expect(errorOf(await pending)).toMatchObject({ code: 'tool_aborted' });
    expect(closing.heard).toHaveLength(1);

    const leaving = waiting();
    const iterator = leaving.toolkit.call(call('wait'))[Symbol.asyncIterator]();
    const first = iterator.next();
    await sleep(1);
    await iterator.return?.();
    await first;
    expect(leaving.heard).toHaveLength(1);
  });

  it('calls a listener added after the abort at once, and a removed one never', async () => {
    const heard: string[] = [];
    let context: ToolContext | undefined;
    const toolkit = toolkitWith([
      bareTool(
        'late',
        (_args, ctx) => {
          context = ctx;
          const remove = ctx.onAbort!(() => heard.push('removed'));
          remove();
          ctx.onAbort!(() => heard.push('kept'));
          return new Promise(() => {});
        },
        { timeoutMs: 20 },
      ),
    ]);
    await toolkit.callToCompletion(call('late'));
    expect(heard).toEqual(['kept']);
    context!.onAbort!((reason) => heard.push(`after: ${(reason as Error).name}`));
    expect(heard).toEqual(['kept', 'after: ToolTimeoutError']);
    expect(context!.signal.aborted).toBe(true);
  });

  it('a tool that finished is not told of a later abort', async () => {
    const heard: unknown[] = [];
    const toolkit = toolkitWith([
      bareTool('quick', async (_args, context) => {
        context.onAbort!((reason) => heard.push(reason));
        return 'done';
      }),
    ]);
    const response = await toolkit.callToCompletion(call('quick'));
    expect(response.isError).toBeUndefined();
    await toolkit.close();
    expect(heard).toEqual([]);
  });

  it('follows the signal a middleware put on the context, and a spread copy falls back to its signal', async () => {
    const heard: string[] = [];
    const middlewareController = new AbortController();
    const toolkit = toolkitWith([
      bareTool(
        'wait',
        (_args, context) =>
          new Promise<string>((resolve) => {
            // The spread copy has no onAbort of its own: the helper listens to its signal.
            expect(typeof context.onAbort).toBe('undefined');
            onToolAbort(context, () => {
              heard.push('middleware signal');
              resolve('stopped');
            });
          }),
      ),
    ]);
    toolkit.use(async function* replaceSignal(invocation, next) {
      yield* next({
        ...invocation,
        context: { ...invocation.context, signal: middlewareController.signal },
      });
    });
    const pending = collect(toolkit.call(call('wait')));
    await sleep(1);
    middlewareController.abort();
    await pending;
    expect(heard).toEqual(['middleware signal']);
  });

  it('keeps signal and state in a spread copy of the context', async () => {
    const seen: { signal: unknown; state: unknown; keys: string[] }[] = [];
    const state = new Map<string, unknown>([['session', 's1']]);
    const toolkit = toolkitWith([
      bareTool('copy', (_args, context) => {
        const copy = { ...context };
        seen.push({ signal: copy.signal, state: copy.state, keys: Object.keys(copy) });
        return 'ok';
      }),
    ]);
    await toolkit.callToCompletion(call('copy'), { state });
    expect(seen[0]!.signal).toBeInstanceOf(AbortSignal);
    expect(seen[0]!.state).toBe(state);
    expect(seen[0]!.keys).toEqual(
      expect.arrayContaining(['signal', 'callId', 'files', 'logger', 'state', 'language']),
    );
  });
});
