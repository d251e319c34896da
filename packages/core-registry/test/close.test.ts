import { describe, expect, it } from '@jest/globals';
import type { ToolContext } from '@quiver/core';
import { ToolRegistrationError } from '@quiver/core';
import { z } from 'zod';
import { Toolkit, defineTool } from '../src/index.js';
import { collect, errorOf, finalChunk, sleep } from './helpers.js';

function makeToolkit(contexts: ToolContext[]): Toolkit {
  const toolkit = new Toolkit();
  toolkit.register(
    defineTool({
      name: 'hang',
      description: 'd',
      parameters: z.object({}),
      execute: (_args, context) => {
        contexts.push(context);
        return new Promise(() => {});
      },
    }),
  );
  return toolkit;
}

describe('close()', () => {
  it('aborts calls in flight, runs close hooks once, and refuses later calls and registrations', async () => {
    const contexts: ToolContext[] = [];
    const toolkit = makeToolkit(contexts);
    const order: string[] = [];
    toolkit.onClose(async () => {
      await sleep(1);
      order.push('first');
    });
    toolkit.onClose(() => {
      order.push('second');
    });
    const pending = collect(toolkit.call({ id: 'c', name: 'hang', arguments: '{}' }));
    await sleep(1);
    expect(contexts).toHaveLength(1);

    await toolkit.close();
    await toolkit.close();
    expect(order).toEqual(['first', 'second']);
    expect(contexts[0]!.signal.aborted).toBe(true);
    expect(errorOf(finalChunk(await pending)).code).toBe('tool_aborted');

    const after = finalChunk(
      await collect(toolkit.call({ id: 'c2', name: 'hang', arguments: '{}' })),
    );
    expect(String(errorOf(after).message)).toMatch(/closed/);
    expect(contexts).toHaveLength(1);
    expect(() =>
      toolkit.register(
        defineTool({ name: 'late', description: 'd', parameters: z.object({}), execute: () => 1 }),
      ),
    ).toThrow(ToolRegistrationError);
    expect(() => toolkit.use((invocation, next) => next(invocation))).toThrow(/closed/);
  });

  it('a close hook that fails is logged; the others still run', async () => {
    const warnings: string[] = [];
    const toolkit = new Toolkit({
      logger: { debug() {}, info() {}, error() {}, warn: (message) => warnings.push(message) },
    });
    let ran = false;
    toolkit.onClose(() => {
      throw new Error('cleanup failed');
    });
    toolkit.onClose(() => {
      ran = true;
    });
    await toolkit.close();
    expect(ran).toBe(true);
    expect(warnings).toHaveLength(1);
  });
});
