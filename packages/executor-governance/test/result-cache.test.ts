import { describe, expect, it } from '@jest/globals';
import type { ToolResponse } from '@quiver/core';
import { Toolkit, defineTool } from '@quiver/core-registry';
import { z } from 'zod';
import { governanceOf, resultCache } from '../src/index.js';
import { FakeClock, call, deferred, textOf } from './helpers.js';

function makeToolkit(
  options: { size?: number; sideEffects?: boolean; deterministic?: boolean; fail?: boolean } = {},
) {
  const runs: string[] = [];
  const toolkit = new Toolkit();
  toolkit.register(
    defineTool({
      name: 'rates',
      description: 'Rates',
      parameters: z.object({ currency: z.string(), extra: z.number().optional() }),
      flags: {
        sideEffects: options.sideEffects ?? false,
        deterministic: options.deterministic ?? false,
      },
      execute: ({ currency }) => {
        runs.push(currency);
        if (options.fail) throw new Error('backend down');
        return `${currency}:${'x'.repeat(options.size ?? 10)}`;
      },
    }),
  );
  return { toolkit, runs };
}

describe('resultCache', () => {
  it('caches opted-in tools by canonical arguments, with hit and miss counters', async () => {
    const { toolkit, runs } = makeToolkit();
    const cache = resultCache({ tools: ['rates'] });
    toolkit.use(cache);
    const first = await call(toolkit, 'rates', { currency: 'EUR', extra: 1 });
    const second = await toolkit.callToCompletion({
      id: 'b',
      name: 'rates',
      arguments: '{"extra":1,  "currency":"EUR"}',
    });
    expect(runs).toEqual(['EUR']);
    expect(governanceOf(first).cache).toBe('miss');
    expect(governanceOf(second).cache).toBe('hit');
    expect(textOf(second)).toBe(textOf(first));
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1, entries: 1 });
  });

  it('does not cache tools that did not opt in, nor tools with side effects', async () => {
    const plain = makeToolkit();
    plain.toolkit.use(resultCache({ tools: [] }));
    await call(plain.toolkit, 'rates', { currency: 'A' });
    await call(plain.toolkit, 'rates', { currency: 'A' });
    expect(plain.runs).toHaveLength(2);
    const effects = makeToolkit({ sideEffects: true, deterministic: true });
    effects.toolkit.use(resultCache({ tools: ['rates'], deterministicTools: true }));
    await call(effects.toolkit, 'rates', { currency: 'A' });
    await call(effects.toolkit, 'rates', { currency: 'A' });
    expect(effects.runs).toHaveLength(2);
  });

  it('opts in tools flagged deterministic with deterministicTools', async () => {
    const { toolkit, runs } = makeToolkit({ deterministic: true });
    toolkit.use(resultCache({ deterministicTools: true }));
    await call(toolkit, 'rates', { currency: 'A' });
    await call(toolkit, 'rates', { currency: 'A' });
    expect(runs).toHaveLength(1);
  });

  it('expires entries after their TTL (per-tool TTL wins)', async () => {
    const clock = new FakeClock();
    const { toolkit, runs } = makeToolkit();
    toolkit.use(resultCache({ tools: { rates: { ttlMs: 1_000 } }, ttlMs: 60_000, clock }));
    await call(toolkit, 'rates', { currency: 'A' });
    clock.advance(999);
    await call(toolkit, 'rates', { currency: 'A' });
    expect(runs).toHaveLength(1);
    clock.advance(1);
    await call(toolkit, 'rates', { currency: 'A' });
    expect(runs).toHaveLength(2);
  });

  it('at capacity: evicts least recently used entries by bytes, rejects an entry bigger than the cache', async () => {
    const { toolkit, runs } = makeToolkit({ size: 400 });
    const cache = resultCache({ tools: ['rates'], maxBytes: 1_000 });
    toolkit.use(cache);
    await call(toolkit, 'rates', { currency: 'A' });
    await call(toolkit, 'rates', { currency: 'B' });
    await call(toolkit, 'rates', { currency: 'A' }); // hit: A is now the most recent
    await call(toolkit, 'rates', { currency: 'C' }); // evicts B
    expect(cache.stats()).toMatchObject({ entries: 2, evictions: 1 });
    expect(cache.stats().bytes).toBeLessThanOrEqual(1_000);
    await call(toolkit, 'rates', { currency: 'A' });
    await call(toolkit, 'rates', { currency: 'B' });
    expect(runs).toEqual(['A', 'B', 'C', 'B']);

    const big = makeToolkit({ size: 5_000 });
    const small = resultCache({ tools: ['rates'], maxBytes: 1_000 });
    big.toolkit.use(small);
    const response = await call(big.toolkit, 'rates', { currency: 'A' });
    expect(textOf(response)).toHaveLength(5_002);
    expect(small.stats()).toMatchObject({ rejected: 1, entries: 0, bytes: 0 });
  });

  it('respects maxEntries', async () => {
    const { toolkit } = makeToolkit();
    const cache = resultCache({ tools: ['rates'], maxEntries: 2 });
    toolkit.use(cache);
    for (const currency of ['A', 'B', 'C']) await call(toolkit, 'rates', { currency });
    expect(cache.stats()).toMatchObject({ entries: 2, evictions: 1 });
  });

  it('never stores errors', async () => {
    const { toolkit, runs } = makeToolkit({ fail: true });
    const cache = resultCache({ tools: ['rates'] });
    toolkit.use(cache);
    await call(toolkit, 'rates', { currency: 'A' });
    await call(toolkit, 'rates', { currency: 'A' });
    expect(runs).toHaveLength(2);
    expect(cache.stats().entries).toBe(0);
  });

  it('coalesces concurrent identical calls: the second waits for the first', async () => {
    const gate = deferred();
    let runs = 0;
    const toolkit = new Toolkit();
    toolkit.register(
      defineTool({
        name: 'slow',
        description: 'Slow',
        parameters: z.object({ q: z.string() }),
        execute: async ({ q }) => {
          runs++;
          await gate.promise;
          return `answer ${q}`;
        },
      }),
    );
    const cache = resultCache({ tools: ['slow'] });
    toolkit.use(cache);
    const calls = [
      call(toolkit, 'slow', { q: 'a' }),
      call(toolkit, 'slow', { q: 'a' }),
      call(toolkit, 'slow', { q: 'b' }),
    ];
    await new Promise((resolve) => setImmediate(resolve));
    gate.resolve();
    const [one, two, three] = (await Promise.all(calls)) as [
      ToolResponse,
      ToolResponse,
      ToolResponse,
    ];
    expect(runs).toBe(2);
    expect(textOf(two)).toBe(textOf(one));
    expect(textOf(three)).toBe('answer b');
    expect(governanceOf(two).cache).toBe('coalesced');
    expect(cache.stats()).toMatchObject({ misses: 2, coalesced: 1 });
  });

  it('clear() empties the cache', async () => {
    const { toolkit, runs } = makeToolkit();
    const cache = resultCache({ tools: ['rates'] });
    toolkit.use(cache);
    await call(toolkit, 'rates', { currency: 'A' });
    cache.clear();
    await call(toolkit, 'rates', { currency: 'A' });
    expect(runs).toHaveLength(2);
    expect(cache.stats().entries).toBe(1);
  });
});

describe('resultCache replays', () => {
  it('a hit does not carry the annotations of the call that filled the cache (except truncation)', async () => {
    const { toolkit } = makeToolkit({ size: 50 });
    toolkit.use(resultCache({ tools: ['rates'] }));
    // An inner middleware that annotates like a retry stage would.
    toolkit.use(async (invocation, next) => {
      let response: ToolResponse | undefined;
      for await (const chunk of next(invocation)) response = chunk;
      return {
        ...response!,
        metadata: {
          ...response!.metadata,
          governance: { retries: 2, truncated: { unit: 'chars', before: 99, after: 52 } },
        },
      };
    });
    expect(governanceOf(await call(toolkit, 'rates', { currency: 'A' }))).toMatchObject({
      retries: 2,
      cache: 'miss',
    });
    const hit = governanceOf(await call(toolkit, 'rates', { currency: 'A' }));
    expect(hit).toEqual({ truncated: { unit: 'chars', before: 99, after: 52 }, cache: 'hit' });
  });
});
