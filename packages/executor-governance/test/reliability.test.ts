import { describe, expect, it } from '@jest/globals';
import { ToolExecutionError } from '@quiver/core';
import { Toolkit, defineTool } from '@quiver/core-registry';
import { z } from 'zod';
import {
  callTimeout,
  circuitBreaker,
  concurrencyLimit,
  governanceOf,
  retry,
} from '../src/index.js';
import { FakeClock, call, deferred, textOf } from './helpers.js';

/** A tool that throws the scripted errors in order, then succeeds. */
function failing(errors: (Error | undefined)[], name = 'flaky') {
  let calls = 0;
  const toolkit = new Toolkit();
  toolkit.register(
    defineTool({
      name,
      description: name,
      parameters: z.object({}),
      execute: () => {
        const error = errors[calls++];
        if (error) throw error;
        return `ok after ${calls} calls`;
      },
    }),
  );
  return { toolkit, calls: () => calls };
}

const transient = (retryAfterMs?: number) =>
  new ToolExecutionError('flaky', 'HTTP 503 from upstream', {
    isRetryable: true,
    ...(retryAfterMs ? { retryAfterMs } : {}),
  });

describe('retry', () => {
  it('retries transient failures with exponential backoff and jitter', async () => {
    const clock = new FakeClock();
    const { toolkit, calls } = failing([transient(), transient(), transient()]);
    const jitter = [0.5, 1, 0.25];
    toolkit.use(
      retry({ maxAttempts: 4, baseDelayMs: 100, factor: 2, clock, random: () => jitter.shift()! }),
    );
    const response = await call(toolkit, 'flaky', {});
    expect(textOf(response)).toBe('ok after 4 calls');
    expect(calls()).toBe(4);
    expect(clock.sleeps).toEqual([50, 200, 100]); // random × 100·2^n
    expect(governanceOf(response).retries).toBe(3);
  });

  it('caps the delay at maxDelayMs and gives up after maxAttempts', async () => {
    const clock = new FakeClock();
    const { toolkit, calls } = failing([transient(), transient(), transient(), transient()]);
    toolkit.use(
      retry({ maxAttempts: 3, baseDelayMs: 1_000, maxDelayMs: 1_500, clock, random: () => 1 }),
    );
    const response = await call(toolkit, 'flaky', {});
    expect(response.isError).toBe(true);
    expect(calls()).toBe(3);
    expect(clock.sleeps).toEqual([1_000, 1_500]);
    expect(governanceOf(response).retries).toBe(2);
  });

  it('waits at least retryAfterMs, and returns at once when the hint is too long', async () => {
    const clock = new FakeClock();
    const { toolkit } = failing([transient(5_000)]);
    toolkit.use(retry({ baseDelayMs: 10, clock, random: () => 1 }));
    expect(textOf(await call(toolkit, 'flaky', {}))).toBe('ok after 2 calls');
    expect(clock.sleeps).toEqual([5_000]);

    const slow = failing([transient(120_000)]);
    const slowClock = new FakeClock();
    slow.toolkit.use(retry({ clock: slowClock, maxRetryAfterMs: 60_000 }));
    const response = await call(slow.toolkit, 'flaky', {});
    expect(response.metadata?.error).toMatchObject({ retryAfterMs: 120_000, isRetryable: true });
    expect(slowClock.sleeps).toEqual([]);
  });

  it('does not retry permanent failures or argument errors', async () => {
    const clock = new FakeClock();
    const { toolkit, calls } = failing([new ToolExecutionError('flaky', 'bad request'), undefined]);
    toolkit.use(retry({ clock }));
    expect((await call(toolkit, 'flaky', {})).isError).toBe(true);
    expect(calls()).toBe(1);
    const invalid = await call(toolkit, 'flaky', { unexpected: 1 });
    expect(invalid.metadata?.error?.code).toBe('tool_argument_invalid');
    expect(calls()).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });

  it('stops waiting when the call is cancelled', async () => {
    const { toolkit, calls } = failing([transient(), transient()]);
    toolkit.use(retry({ baseDelayMs: 60_000, random: () => 1 }));
    const controller = new AbortController();
    const pending = call(toolkit, 'flaky', {}, { signal: controller.signal });
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    const response = await pending;
    expect(response.isError).toBe(true);
    expect(calls()).toBe(1);
  });
});

describe('circuitBreaker', () => {
  it('opens after repeated failures, fails fast, half-opens after the cooldown and closes on success', async () => {
    const clock = new FakeClock();
    const errors = Array.from({ length: 4 }, () => new Error('connection refused'));
    const { toolkit, calls } = failing(errors);
    const breaker = circuitBreaker({ failureThreshold: 3, cooldownMs: 10_000, clock });
    toolkit.use(breaker);
    for (let index = 0; index < 3; index++) await call(toolkit, 'flaky', {});
    expect(breaker.state('flaky')).toBe('open');
    const refused = await call(toolkit, 'flaky', {});
    expect(calls()).toBe(3);
    expect(refused.metadata?.error).toMatchObject({ code: 'circuit_open', retryAfterMs: 10_000 });
    expect(textOf(refused)).toMatch(/failed 3 times in a row/);
    expect(governanceOf(refused).circuit).toBe('open');

    clock.advance(10_000);
    expect(breaker.state('flaky')).toBe('half-open');
    const trial = await call(toolkit, 'flaky', {}); // 4th error: opens again
    expect(trial.isError).toBe(true);
    expect(governanceOf(trial).circuit).toBe('half-open');
    expect(breaker.state('flaky')).toBe('open');

    clock.advance(10_000);
    const recovered = await call(toolkit, 'flaky', {});
    expect(textOf(recovered)).toBe('ok after 5 calls');
    expect(breaker.state('flaky')).toBe('closed');
  });

  it('lets only one trial through while half-open', async () => {
    const clock = new FakeClock();
    const gate = deferred();
    let runs = 0;
    let fail = true;
    const toolkit = new Toolkit();
    toolkit.register(
      defineTool({
        name: 'svc',
        description: 'svc',
        parameters: z.object({}),
        execute: async () => {
          runs++;
          if (fail) throw new Error('down');
          await gate.promise;
          return 'up';
        },
      }),
    );
    const breaker = circuitBreaker({ failureThreshold: 1, cooldownMs: 1_000, clock });
    toolkit.use(breaker);
    await call(toolkit, 'svc', {});
    clock.advance(1_000);
    fail = false;
    const trial = call(toolkit, 'svc', {});
    await new Promise((resolve) => setImmediate(resolve));
    const second = await call(toolkit, 'svc', {});
    expect(second.metadata?.error?.code).toBe('circuit_open');
    gate.resolve();
    expect(textOf(await trial)).toBe('up');
    expect(runs).toBe(2);
  });

  it("does not count the caller's mistakes (invalid arguments) as tool failures", async () => {
    const clock = new FakeClock();
    const toolkit = new Toolkit();
    toolkit.register(
      defineTool({
        name: 'strict',
        description: 'strict',
        parameters: z.object({ n: z.number() }),
        execute: () => 'ok',
      }),
    );
    const breaker = circuitBreaker({ failureThreshold: 2, clock });
    toolkit.use(breaker);
    for (let index = 0; index < 5; index++) await call(toolkit, 'strict', { n: 'not a number' });
    expect(breaker.state('strict')).toBe('closed');
  });
});

describe('concurrencyLimit', () => {
  function gatedToolkit() {
    const gates: { resolve: () => void }[] = [];
    let running = 0;
    let peak = 0;
    const toolkit = new Toolkit();
    toolkit.register(
      defineTool({
        name: 'job',
        description: 'job',
        parameters: z.object({ id: z.number() }),
        execute: async ({ id }) => {
          running++;
          peak = Math.max(peak, running);
          const gate = deferred();
          gates.push(gate);
          await gate.promise;
          running--;
          return `done ${id}`;
        },
      }),
    );
    return { toolkit, gates, peak: () => peak };
  }
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it('runs at most N calls of a tool at once; the rest wait in order', async () => {
    const { toolkit, gates, peak } = gatedToolkit();
    const limiter = concurrencyLimit({ tools: { job: 2 } });
    toolkit.use(limiter);
    const calls = [1, 2, 3, 4].map((id) => call(toolkit, 'job', { id }));
    await tick();
    expect(limiter.load('job')).toEqual({ running: 2, queued: 2 });
    // Release one running call at a time; the next waiter takes its slot.
    for (let released = 0; released < 4; released++) {
      while (gates.length === 0) await tick();
      gates.shift()!.resolve();
      await tick();
      expect(limiter.load('job').running).toBeLessThanOrEqual(2);
    }
    const results = await Promise.all(calls);
    expect(results.map(textOf)).toEqual(['done 1', 'done 2', 'done 3', 'done 4']);
    expect(peak()).toBe(2);
    expect(limiter.load('job')).toEqual({ running: 0, queued: 0 });
  });

  it('a cancelled waiter leaves the queue; a full queue refuses at once', async () => {
    const { toolkit, gates } = gatedToolkit();
    const limiter = concurrencyLimit({ maxConcurrent: 1, maxQueue: 1 });
    toolkit.use(limiter);
    const first = call(toolkit, 'job', { id: 1 });
    const controller = new AbortController();
    const waiting = call(toolkit, 'job', { id: 2 }, { signal: controller.signal });
    await tick();
    const refused = await call(toolkit, 'job', { id: 3 });
    expect(refused.metadata?.error).toMatchObject({
      code: 'concurrency_queue_full',
      isRetryable: true,
    });
    controller.abort();
    expect((await waiting).metadata?.error?.code).toBe('tool_aborted');
    expect(limiter.load('job')).toEqual({ running: 1, queued: 0 });
    gates[0]!.resolve();
    expect(textOf(await first)).toBe('done 1');
  });
});

describe('callTimeout', () => {
  it("answers with a timeout error and aborts the tool's signal, even if the tool ignores it", async () => {
    let aborted: unknown;
    const toolkit = new Toolkit();
    toolkit.register(
      defineTool({
        name: 'hang',
        description: 'hang',
        parameters: z.object({}),
        execute: (_args, context) => {
          context.signal.addEventListener('abort', () => (aborted = context.signal.reason));
          return new Promise(() => {});
        },
      }),
    );
    toolkit.use(callTimeout({ timeoutMs: 60_000, tools: { hang: 20 } }));
    const response = await call(toolkit, 'hang', {});
    expect(response.metadata?.error).toMatchObject({ code: 'tool_timeout', timeoutMs: 20 });
    expect(aborted).toBeInstanceOf(Error);
  });

  it('with retry inside, each attempt gets a fresh time limit', async () => {
    let attempts = 0;
    const toolkit = new Toolkit();
    toolkit.register(
      defineTool({
        name: 'slow_then_fast',
        description: 'x',
        parameters: z.object({}),
        execute: (_args, context) => {
          attempts++;
          if (attempts === 1) {
            return new Promise((_resolve, reject) =>
              context.signal.addEventListener('abort', () =>
                reject(new ToolExecutionError('slow_then_fast', 'aborted', { isRetryable: true })),
              ),
            );
          }
          return 'fast';
        },
      }),
    );
    const clock = new FakeClock();
    const timeout = callTimeout({ timeoutMs: 20 });
    toolkit.use(
      retry({
        clock,
        isRetryable: (response) => response.metadata?.error?.code === 'tool_timeout',
      }),
    );
    toolkit.use(timeout);
    const response = await call(toolkit, 'slow_then_fast', {});
    expect(textOf(response)).toBe('fast');
    expect(attempts).toBe(2);
  });
});
