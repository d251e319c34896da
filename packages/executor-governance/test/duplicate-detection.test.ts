import { describe, expect, it } from '@jest/globals';
import { ToolExecutionError } from '@quiver/core';
import { Toolkit, defineTool } from '@quiver/core-registry';
import { z } from 'zod';
import { duplicateDetection, governanceOf } from '../src/index.js';
import { call, deferred, textOf } from './helpers.js';

function searchToolkit() {
  const runs: string[] = [];
  const toolkit = new Toolkit();
  toolkit.register(
    defineTool({
      name: 'web_search',
      description: 'Search',
      parameters: z.object({ query: z.string(), limit: z.number().default(10) }),
      execute: ({ query, limit }) => {
        runs.push(query);
        return `${runs.length}: ${limit} results about ${query}`;
      },
    }),
  );
  return { toolkit, runs };
}

describe('duplicateDetection', () => {
  it('warn: runs the repeat and tells the model it already made this call and what came back', async () => {
    const { toolkit, runs } = searchToolkit();
    toolkit.use(duplicateDetection({ action: 'warn' }));
    const first = await call(toolkit, 'web_search', { query: 'rust' });
    expect(textOf(first)).toBe('1: 10 results about rust');
    expect(governanceOf(first).duplicate).toBeUndefined();
    // Defaults are applied before the key is made: limit 10 is the default.
    const second = await call(toolkit, 'web_search', { limit: 10, query: 'rust' });
    expect(runs).toEqual(['rust', 'rust']);
    expect(textOf(second)).toContain('2: 10 results about rust');
    expect(textOf(second)).toContain(
      'you already called "web_search" with these same arguments once before',
    );
    expect(textOf(second)).toContain('the earlier result began: 1: 10 results about rust');
    expect(governanceOf(second).duplicate).toEqual({ count: 2, action: 'warned' });
  });

  it('cache: returns the earlier result without running the tool', async () => {
    const { toolkit, runs } = searchToolkit();
    toolkit.use(duplicateDetection({ action: 'cache' }));
    await call(toolkit, 'web_search', { query: 'go' });
    const again = await call(toolkit, 'web_search', { query: 'go' });
    expect(runs).toEqual(['go']);
    expect(textOf(again)).toContain('1: 10 results about go');
    expect(textOf(again)).toContain('this is the same result as before');
    expect(governanceOf(again).duplicate).toEqual({ count: 2, action: 'cached' });
  });

  it('refuseAfter: refuses identical calls beyond N with a typed error', async () => {
    const { toolkit, runs } = searchToolkit();
    toolkit.use(duplicateDetection({ action: 'allow', refuseAfter: 2 }));
    await call(toolkit, 'web_search', { query: 'x' });
    const second = await call(toolkit, 'web_search', { query: 'x' });
    expect(governanceOf(second).duplicate).toEqual({ count: 2, action: 'allowed' });
    const third = await call(toolkit, 'web_search', { query: 'x' });
    expect(runs).toHaveLength(2);
    expect(third.isError).toBe(true);
    expect(third.metadata?.error).toMatchObject({ code: 'duplicate_call_refused', count: 3 });
    expect(textOf(third)).toContain(
      'already called "web_search" with these same arguments 2 times',
    );
  });

  it('counts per namespace and can be reset', async () => {
    const { toolkit, runs } = searchToolkit();
    const detector = duplicateDetection({ refuseAfter: 1 });
    toolkit.use(detector);
    await call(toolkit, 'web_search', { query: 'x' }, { namespace: 'main' });
    await call(toolkit, 'web_search', { query: 'x' }, { namespace: 'researcher' });
    expect(runs).toHaveLength(2);
    expect((await call(toolkit, 'web_search', { query: 'x' }, { namespace: 'main' })).isError).toBe(
      true,
    );
    detector.reset('main');
    expect(
      (await call(toolkit, 'web_search', { query: 'x' }, { namespace: 'main' })).isError,
    ).toBeUndefined();
  });

  it('keyFields: compares only those fields, ignoring case and spacing', async () => {
    const { toolkit, runs } = searchToolkit();
    toolkit.use(
      duplicateDetection({ action: 'cache', tools: { web_search: { keyFields: ['query'] } } }),
    );
    await call(toolkit, 'web_search', { query: 'Rust  Language', limit: 3 });
    const again = await call(toolkit, 'web_search', { query: ' rust language', limit: 5 });
    expect(runs).toHaveLength(1);
    expect(governanceOf(again).duplicate?.action).toBe('cached');
  });

  it('covers tools registered after the middleware', async () => {
    const { toolkit } = searchToolkit();
    toolkit.use(duplicateDetection({ refuseAfter: 1 }));
    toolkit.register(
      defineTool({
        name: 'late',
        description: 'Late',
        parameters: z.object({}),
        execute: () => 'ok',
      }),
    );
    await call(toolkit, 'late', {});
    expect((await call(toolkit, 'late', {})).metadata?.error?.code).toBe('duplicate_call_refused');
  });

  it('cache: concurrent identical calls run once; the second waits for the first', async () => {
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
    toolkit.use(duplicateDetection({ action: 'cache' }));
    const first = call(toolkit, 'slow', { q: 'a' });
    const second = call(toolkit, 'slow', { q: 'a' });
    await new Promise((resolve) => setImmediate(resolve));
    gate.resolve();
    const [one, two] = await Promise.all([first, second]);
    expect(runs).toBe(1);
    expect(textOf(one)).toBe('answer a');
    expect(textOf(two)).toContain('answer a');
  });

  it('cache: an earlier error is not replayed; the repeat runs', async () => {
    let attempt = 0;
    const toolkit = new Toolkit();
    toolkit.register(
      defineTool({
        name: 'flaky',
        description: 'Flaky',
        parameters: z.object({}),
        execute: () => {
          attempt++;
          if (attempt === 1) throw new ToolExecutionError('flaky', 'down');
          return 'up';
        },
      }),
    );
    toolkit.use(duplicateDetection({ action: 'cache' }));
    expect((await call(toolkit, 'flaky', {})).isError).toBe(true);
    const second = await call(toolkit, 'flaky', {});
    expect(textOf(second)).toContain('up');
    expect(attempt).toBe(2);
  });

  it('forgets the oldest keys beyond maxEntries', async () => {
    const { toolkit, runs } = searchToolkit();
    toolkit.use(duplicateDetection({ action: 'cache', maxEntries: 2 }));
    for (const query of ['a', 'b', 'c', 'a']) await call(toolkit, 'web_search', { query });
    expect(runs).toEqual(['a', 'b', 'c', 'a']);
  });
});
