import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { ToolTimeoutError } from '@quiver/core';
import type { ToolContext } from '@quiver/core';
import { deadlineStats } from '../src/deadlines.js';
import { Toolkit } from '../src/index.js';
import {
  bareTool,
  call,
  collect,
  errorOf,
  finalChunk,
  sleep,
  textOf,
  toolkitWith,
} from './helpers.js';

const never = () => new Promise<never>(() => {});

describe('per-call timeout', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('a tool that hangs gets a ToolTimeoutError response, and its signal is aborted with that error', async () => {
    let seen: ToolContext | undefined;
    const toolkit = toolkitWith([
      bareTool(
        'hang',
        (_args, context) => {
          seen = context;
          return never();
        },
        { timeoutMs: 20 },
      ),
    ]);
    const response = finalChunk(await collect(toolkit.call(call('hang'))));
    const error = errorOf(response);
    expect(error).toMatchObject({ code: 'tool_timeout', toolName: 'hang', timeoutMs: 20 });
    expect(textOf(response)).toMatch(/did not finish within 20 ms/);
    expect(seen?.signal.aborted).toBe(true);
    expect(seen?.signal.reason).toBeInstanceOf(ToolTimeoutError);
  });

  it('a tool that ignores its signal still times out, and its later output is discarded', async () => {
    let producedLate = false;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const toolkit = toolkitWith([
      bareTool(
        'stubborn',
        async function* () {
          yield 'first';
          await released; // ignores context.signal entirely
          producedLate = true;
          yield 'late';
          return 'very late';
        },
        { timeoutMs: 20 },
      ),
    ]);
    const chunks = await collect(toolkit.call(call('stubborn')));
    expect(textOf(chunks[0]!)).toBe('first');
    expect(errorOf(finalChunk(chunks)).code).toBe('tool_timeout');
    expect(chunks).toHaveLength(2);
    // The tool now finishes; nothing it produces reaches anyone, and nothing throws.
    release();
    await sleep(5);
    expect(producedLate).toBe(true);
    expect(textOf(chunks)).not.toContain('late');
  });

  it('a generator that never awaits cannot starve its timeout', async () => {
    const toolkit = toolkitWith([
      bareTool(
        'endless',
        function* () {
          for (;;) yield 'x';
        },
        { timeoutMs: 20 },
      ),
    ]);
    const chunks = await collect(toolkit.call(call('endless')));
    expect(errorOf(finalChunk(chunks)).code).toBe('tool_timeout');
  });

  it('the registration timeout overrides the tool default, which overrides the toolkit default (fake timers)', async () => {
    jest.useFakeTimers();
    const hang = bareTool('hang', never, { timeoutMs: 50_000 });
    const plain = bareTool('plain', never);
    const toolkit = new Toolkit({ defaultTimeoutMs: 90_000 });
    toolkit.register(hang);
    toolkit.register(hang, { name: 'hang_short', timeoutMs: 10_000 });
    toolkit.register(plain);

    const results = new Map<string, number>();
    for (const name of ['hang', 'hang_short', 'plain']) {
      void collect(toolkit.call(call(name))).then((chunks) =>
        results.set(name, errorOf(finalChunk(chunks)).timeoutMs as number),
      );
    }
    await jest.advanceTimersByTimeAsync(9_999);
    expect(results.size).toBe(0);
    await jest.advanceTimersByTimeAsync(2);
    expect([...results.keys()]).toEqual(['hang_short']);
    await jest.advanceTimersByTimeAsync(40_000);
    expect([...results.keys()]).toEqual(['hang_short', 'hang']);
    await jest.advanceTimersByTimeAsync(40_000);
    expect(Object.fromEntries(results)).toEqual({
      hang_short: 10_000,
      hang: 50_000,
      plain: 90_000,
    });
  });

  it('a call that finishes in time leaves no live deadline, and its timeout never fires', async () => {
    jest.useFakeTimers();
    const contexts: ToolContext[] = [];
    const toolkit = toolkitWith([
      bareTool(
        'quick',
        async (_args, context) => {
          contexts.push(context);
          return 'done';
        },
        { timeoutMs: 1000 },
      ),
    ]);
    const response = await toolkit.callToCompletion(call('quick'));
    expect(textOf(response)).toBe('done');
    expect(deadlineStats().live).toBe(0);
    // The shared timer may still be set (unref'd) for the deadline it was armed for: when it
    // fires it finds nothing due and is not set again.
    await jest.advanceTimersByTimeAsync(5_000);
    expect(contexts[0]!.signal.aborted).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
    expect(deadlineStats()).toMatchObject({ live: 0, armed: false });
  });

  it('timeouts keep working when fake timers are installed and removed between calls', async () => {
    const toolkit = toolkitWith([
      bareTool('hang', never, { timeoutMs: 20 }),
      bareTool('hang_short', never, { timeoutMs: 30 }),
    ]);
    // A deadline armed under fake timers, left pending when they are removed (its fake timer
    // will never fire)...
    jest.useFakeTimers();
    const underFakes = toolkit.callToCompletion(call('hang'));
    await jest.advanceTimersByTimeAsync(5);
    jest.useRealTimers();
    // ...must not hold back the timeout of a call made with real timers, due after it.
    const response = await toolkit.callToCompletion(call('hang_short'));
    expect(errorOf(response)).toMatchObject({ code: 'tool_timeout', timeoutMs: 30 });
    // The real timer now stands for the earlier deadline too: that call timed out as well.
    expect(errorOf(await underFakes)).toMatchObject({ code: 'tool_timeout', timeoutMs: 20 });
  });

  it('many calls ending behind a long one do not pile up deadlines', async () => {
    let release: (() => void) | undefined;
    const toolkit = toolkitWith([
      bareTool('long', () => new Promise<string>((resolve) => (release = () => resolve('long'))), {
        timeoutMs: 60_000,
      }),
      bareTool('short', async () => 'short', { timeoutMs: 120_000 }),
    ]);
    const long = toolkit.callToCompletion(call('long'));
    await sleep(1);
    for (let index = 0; index < 1_000; index++) {
      expect(textOf(await toolkit.callToCompletion(call('short')))).toBe('short');
    }
    const stats = deadlineStats();
    expect(stats.live).toBe(1);
    expect(stats.kept).toBeLessThanOrEqual(64);
    release!();
    expect(textOf(await long)).toBe('long');
    expect(deadlineStats().live).toBe(0);
  });
});

describe('caller AbortSignal', () => {
  function cancellable(): { toolkit: Toolkit; contexts: ToolContext[] } {
    const contexts: ToolContext[] = [];
    const toolkit = toolkitWith([
      bareTool('wait', (_args, context) => {
        contexts.push(context);
        return new Promise((_resolve, reject) => {
          context.signal.addEventListener('abort', () => reject(context.signal.reason));
        });
      }),
    ]);
    return { toolkit, contexts };
  }

  it('aborting mid-call ends it with a ToolAbortedError response and aborts the tool signal', async () => {
    const { toolkit, contexts } = cancellable();
    const controller = new AbortController();
    const pending = collect(toolkit.call(call('wait'), { signal: controller.signal }));
    await sleep(1);
    expect(contexts).toHaveLength(1);
    const reason = new Error('user pressed stop');
    controller.abort(reason);
    const error = errorOf(finalChunk(await pending));
    expect(error).toMatchObject({ code: 'tool_aborted', name: 'ToolAbortedError' });
    expect(contexts[0]!.signal.aborted).toBe(true);
    expect(contexts[0]!.signal.reason).toBe(reason);
  });

  it('an already aborted signal stops the call before the tool runs', async () => {
    const { toolkit, contexts } = cancellable();
    const response = finalChunk(
      await collect(toolkit.call(call('wait'), { signal: AbortSignal.abort() })),
    );
    expect(errorOf(response).code).toBe('tool_aborted');
    expect(contexts).toHaveLength(0);
  });

  it('a finished call leaves no listener on the caller signal', async () => {
    const toolkit = toolkitWith([bareTool('ok', async () => 'ok')]);
    const controller = new AbortController();
    let added = 0;
    let removed = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      added++;
      add(...args);
    }) as typeof add;
    controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      removed++;
      remove(...args);
    }) as typeof remove;
    for (let index = 0; index < 5; index++)
      await toolkit.callToCompletion(call('ok'), { signal: controller.signal });
    expect(added).toBe(5);
    expect(removed).toBe(added);
  });

  it('passes the caller context through to the tool', async () => {
    let seen: ToolContext | undefined;
    const toolkit = toolkitWith(
      [
        bareTool('ctx', (_args, context) => {
          seen = context;
          return 'ok';
        }),
      ],
      { language: 'zh' },
    );
    const state = new Map<string, unknown>([['session', 's1']]);
    await toolkit.callToCompletion(call('ctx'), {
      files: ['/tmp/a.pdf'],
      state,
      workDir: '/tmp/work',
      namespace: 'sub',
    });
    expect(seen).toMatchObject({
      callId: 'call-ctx',
      files: ['/tmp/a.pdf'],
      workDir: '/tmp/work',
      namespace: 'sub',
      language: 'zh',
    });
    expect(seen?.state).toBe(state);
    expect(seen?.signal).toBeInstanceOf(AbortSignal);
  });
});

describe('a middleware that changes the signal', () => {
  function makeToolkit(seen: ToolContext[]): Toolkit {
    return toolkitWith([
      bareTool(
        'wait',
        (_args, context) => {
          seen.push(context);
          return new Promise((_resolve, reject) =>
            context.signal.addEventListener('abort', () => reject(context.signal.reason)),
          );
        },
        { timeoutMs: 30 },
      ),
    ]);
  }

  it.each([
    [
      'by assignment',
      (invocation: { context: ToolContext }, signal: AbortSignal) =>
        void (invocation.context.signal = signal),
    ],
    [
      'by building a new context',
      (invocation: { context: ToolContext }, signal: AbortSignal) =>
        void (invocation.context = { ...invocation.context, signal }),
    ],
  ])(
    '%s: the tool sees the new signal, and aborting it stops the call',
    async (_label, replace) => {
      const seen: ToolContext[] = [];
      const toolkit = makeToolkit(seen);
      const replacement = new AbortController();
      toolkit.use((invocation, next) => {
        replace(invocation, replacement.signal);
        return next(invocation);
      });
      const pending = collect(toolkit.call(call('wait')));
      await sleep(1);
      expect(seen[0]!.signal).toBe(replacement.signal);
      replacement.abort(new Error('middleware cancelled'));
      expect(errorOf(finalChunk(await pending)).code).toBe('tool_aborted');
    },
  );

  it('a middleware that spreads the context keeps the call’s own signal working (timeout, caller abort)', async () => {
    const seen: ToolContext[] = [];
    const toolkit = makeToolkit(seen);
    toolkit.use((invocation, next) =>
      next({ ...invocation, context: { ...invocation.context, callId: 'rewritten' } }),
    );
    const timedOut = finalChunk(await collect(toolkit.call(call('wait'))));
    expect(errorOf(timedOut).code).toBe('tool_timeout');
    expect(seen[0]!.callId).toBe('rewritten');
    expect(seen[0]!.signal.aborted).toBe(true);
    expect(seen[0]!.signal.reason).toBeInstanceOf(ToolTimeoutError);
  });

  it('a long-lived signal given to every call does not collect listeners', async () => {
    const toolkit = toolkitWith([
      bareTool('quick', async () => 'ok'),
      bareTool('plain', () => 'ok'),
    ]);
    const session = new AbortController();
    toolkit.use((invocation, next) => {
      invocation.context.signal = session.signal;
      return next(invocation);
    });
    for (let index = 0; index < 20; index++) {
      await toolkit.callToCompletion(call(index % 2 === 0 ? 'quick' : 'plain'));
    }
    expect(getEventListeners(session.signal, 'abort')).toHaveLength(0);
  });

  it('close() while a middleware holds the call before the tool: the tool never runs', async () => {
    const seen: ToolContext[] = [];
    const toolkit = makeToolkit(seen);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    toolkit.use(async function* approval(invocation, next) {
      await gate;
      yield* next(invocation);
    });
    const pending = collect(toolkit.call(call('wait')));
    await sleep(1);
    await toolkit.close();
    release();
    expect(errorOf(finalChunk(await pending)).code).toBe('tool_aborted');
    expect(seen).toHaveLength(0);
  });
});
