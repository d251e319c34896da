import { describe, expect, it } from '@jest/globals';
import { Toolkit, defineTool } from '@quiver/core-registry';
import { z } from 'zod';
import type { CallLogSink } from '../src/index.js';
import { builtinQualityRules, governanceOf, governed, memorySink } from '../src/index.js';
import { deferred, recordingLogger, textOf } from './helpers.js';

/** One tool whose output the test scripts. */
function toolkitWith(
  execute: (args: { q: string }) => unknown,
  flags: { deterministic?: boolean } = {},
) {
  let runs = 0;
  const toolkit = new Toolkit({ logger: recordingLogger() });
  toolkit.register(
    defineTool({
      name: 'lookup',
      description: 'lookup',
      parameters: z.object({ q: z.string() }),
      flags,
      execute: (args) => {
        runs++;
        return execute(args);
      },
    }),
  );
  return { toolkit, runs: () => runs };
}
const ask = (toolkit: Toolkit, q: string, id = q) =>
  toolkit.callToCompletion({ id, name: 'lookup', arguments: JSON.stringify({ q }) });

describe('bad input through governed(toolkit)', () => {
  it('a throwing repair rule, quality rule and sink are logged and ignored; the call succeeds', async () => {
    const logger = recordingLogger();
    const memory = memorySink();
    const broken: CallLogSink = {
      write: () => {
        throw new Error('sink down');
      },
    };
    const { toolkit } = toolkitWith(({ q }) => `answer to ${q}`);
    governed(toolkit, {
      log: { sinks: [broken, memory], logger },
      repair: {
        logger,
        rules: [
          {
            name: 'bad',
            repair: () => {
              throw new Error('repair bug');
            },
          },
        ],
      },
      quality: {
        logger,
        rules: [
          {
            name: 'bad',
            description: 'throws',
            check: () => {
              throw new Error('rule bug');
            },
          },
          ...builtinQualityRules(),
        ],
      },
    });
    const response = await ask(toolkit, 'x');
    expect(textOf(response)).toBe('answer to x');
    expect(memory.records).toHaveLength(1);
    expect(logger.entries.map((entry) => entry.fields?.error).sort()).toEqual([
      'repair bug',
      'rule bug',
      'sink down',
    ]);
  });

  it('a throwing user callback fails only that call, and the call log still records it', async () => {
    const { toolkit } = toolkitWith(() => 'fine');
    const governance = governed(toolkit, {
      retry: {
        isRetryable: () => {
          throw new Error('predicate bug');
        },
      },
    });
    const response = await ask(toolkit, 'x');
    expect(response.isError).toBe(true);
    expect(textOf(response)).toContain(
      'Governance stage "retry" failed while handling "lookup": predicate bug',
    );
    expect(governance.records.map((record) => record.outcome)).toEqual(['error']);
  });

  it('a result bigger than the whole cache is returned but not stored', async () => {
    const { toolkit, runs } = toolkitWith(() => 'y'.repeat(50_000), { deterministic: true });
    const governance = governed(toolkit, {
      cache: { deterministicTools: true, maxBytes: 10_000 },
      size: false,
      duplicates: false,
    });
    expect(textOf(await ask(toolkit, 'a'))).toHaveLength(50_000);
    expect(textOf(await ask(toolkit, 'a'))).toHaveLength(50_000);
    expect(runs()).toBe(2);
    expect(governance.stages.cache?.stats()).toMatchObject({ rejected: 2, entries: 0 });
  });

  it('binary and enormous results are made safe for the context', async () => {
    const binary = Buffer.from(
      Array.from({ length: 20_000 }, (_, index) => (index * 131) % 256),
    ).toString('latin1');
    const { toolkit } = toolkitWith(({ q }) => (q === 'binary' ? binary : 'z'.repeat(6_000_000)));
    const governance = governed(toolkit);
    expect(textOf(await ask(toolkit, 'binary'))).toMatch(/^\[binary content omitted/);
    const huge = await ask(toolkit, 'huge');
    expect(textOf(huge).length).toBeLessThanOrEqual(20_000);
    expect(governanceOf(huge).truncated?.before).toBe(6_000_000);
    expect(governance.records.map((record) => record.truncated !== undefined)).toEqual([
      true,
      true,
    ]);
  });

  it('concurrent identical calls run once (the second waits for the first)', async () => {
    const gate = deferred();
    const { toolkit, runs } = toolkitWith(
      async ({ q }) => {
        await gate.promise;
        return `slow answer ${q}`;
      },
      { deterministic: true },
    );
    const governance = governed(toolkit);
    const calls = [ask(toolkit, 'same', '1'), ask(toolkit, 'same', '2')];
    await new Promise((resolve) => setImmediate(resolve));
    gate.resolve();
    const [first, second] = await Promise.all(calls);
    expect(runs()).toBe(1);
    expect(textOf(first!)).toBe('slow answer same');
    expect(textOf(second!)).toContain('slow answer same');
    expect(governanceOf(second!).cache).toBe('coalesced');
    expect(governance.records).toHaveLength(2);
  });

  it('a tokenizer that cannot be loaded falls back to a character budget', async () => {
    const logger = recordingLogger();
    const { toolkit } = toolkitWith(() => 'w '.repeat(50_000));
    governed(toolkit, {
      size: {
        maxTokens: 1_000,
        logger,
        tokenizer: () => Promise.reject(new Error('no tokenizer here')),
      },
    });
    const response = await ask(toolkit, 'x');
    expect(textOf(response).length).toBeLessThanOrEqual(4_000);
    expect(logger.entries[0]).toMatchObject({
      level: 'warn',
      fields: { error: 'no tokenizer here' },
    });
  });

  it('a tool that hangs is stopped by the per-call timeout and logged', async () => {
    const { toolkit } = toolkitWith(() => new Promise(() => {}));
    const governance = governed(toolkit, { timeout: { timeoutMs: 30 }, retry: false });
    const response = await ask(toolkit, 'x');
    expect(response.metadata?.error?.code).toBe('tool_timeout');
    expect(governance.records[0]).toMatchObject({ outcome: 'error', errorCode: 'tool_timeout' });
  });
});
