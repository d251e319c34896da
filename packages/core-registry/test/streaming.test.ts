import { describe, expect, it } from '@jest/globals';
import type { ToolResponse } from '@quiver/core';
import { z } from 'zod';
import { Toolkit, defineTool, mergeResponses } from '../src/index.js';
import { collect, expectWellFormed, textOf } from './helpers.js';

function toolkitWith(execute: (args: Record<string, unknown>) => unknown): Toolkit {
  const toolkit = new Toolkit();
  toolkit.register(
    defineTool({
      name: 'subject',
      description: 'd',
      parameters: z.object({}).passthrough(),
      execute,
    }),
  );
  return toolkit;
}

const call = { id: 'c1', name: 'subject', arguments: '{}' };

describe('what execute may return', () => {
  it.each<[string, unknown, ToolResponse['content']]>([
    ['a string', 'hello', [{ type: 'text', text: 'hello' }]],
    ['a number', 42, [{ type: 'json', value: 42 }]],
    ['an object', { a: 1 }, [{ type: 'json', value: { a: 1 } }]],
    ['undefined', undefined, []],
    ['null', null, []],
    [
      'a content block',
      { type: 'image', url: 'https://x/y.png', mimeType: 'image/png' },
      [{ type: 'image', url: 'https://x/y.png', mimeType: 'image/png' }],
    ],
    [
      'an array of blocks',
      [
        { type: 'text', text: 'a' },
        { type: 'json', value: 1 },
      ],
      [
        { type: 'text', text: 'a' },
        { type: 'json', value: 1 },
      ],
    ],
    [
      'a ToolResponse',
      { content: [{ type: 'text', text: 'r' }], metadata: { source: 's' } },
      [{ type: 'text', text: 'r' }],
    ],
  ])('a plain value: %s becomes one last chunk', async (_label, returned, content) => {
    const chunks = await collect(toolkitWith(() => returned).call(call));
    expectWellFormed(chunks);
    expect(chunks).toHaveLength(1);
    expect(chunks[0]!.content).toEqual(content);
  });

  it('keeps the metadata of a returned ToolResponse', async () => {
    const chunks = await collect(
      toolkitWith(() => ({ content: [], metadata: { source: 's' } })).call(call),
    );
    expect(chunks[0]!.metadata).toEqual({ source: 's' });
  });

  it('a Promise of a value', async () => {
    const chunks = await collect(toolkitWith(async () => 'later').call(call));
    expectWellFormed(chunks);
    expect(textOf(chunks)).toBe('later');
  });

  it('a sync generator: each yield is a chunk, the return value the last one', async () => {
    const chunks = await collect(
      toolkitWith(function* () {
        yield 'a';
        yield { content: [{ type: 'json', value: 1 }] };
        return 'end';
      }).call(call),
    );
    expectWellFormed(chunks);
    expect(chunks.map((chunk) => chunk.content)).toEqual([
      [{ type: 'text', text: 'a' }],
      [{ type: 'json', value: 1 }],
      [{ type: 'text', text: 'end' }],
    ]);
  });

  it('an async generator without a return value ends with an empty last chunk', async () => {
    const chunks = await collect(
      toolkitWith(async function* () {
        yield 'a';
        await Promise.resolve();
        yield 'b';
      }).call(call),
    );
    expectWellFormed(chunks);
    expect(textOf(chunks)).toBe('ab');
    expect(chunks[chunks.length - 1]!.content).toEqual([]);
  });

  it('a Promise of an async generator', async () => {
    const chunks = await collect(
      toolkitWith(async () =>
        (async function* () {
          yield 'x';
          return 'y';
        })(),
      ).call(call),
    );
    expectWellFormed(chunks);
    expect(textOf(chunks)).toBe('xy');
  });

  it('a Promise of a sync generator', async () => {
    const chunks = await collect(
      toolkitWith(async () =>
        (function* () {
          yield 'x';
          yield 'y';
        })(),
      ).call(call),
    );
    expectWellFormed(chunks);
    expect(textOf(chunks)).toBe('xy');
  });

  it('a chunk the tool marks isLast ends the stream; later chunks are not read', async () => {
    let resumedAfterLast = false;
    const chunks = await collect(
      toolkitWith(async function* () {
        yield 'a';
        yield { content: [{ type: 'text', text: 'b' }], isLast: true };
        resumedAfterLast = true;
        yield 'never';
      }).call(call),
    );
    expectWellFormed(chunks);
    expect(textOf(chunks)).toBe('ab');
    expect(resumedAfterLast).toBe(false);
  });

  it('a chunk the tool marks isLast: false in the middle does not confuse the marking', async () => {
    const chunks = await collect(
      toolkitWith(function* () {
        yield { content: [{ type: 'text', text: 'a' }], isLast: false };
        return { content: [{ type: 'text', text: 'b' }], isLast: false };
      }).call(call),
    );
    expectWellFormed(chunks);
    expect(textOf(chunks)).toBe('ab');
  });

  it('streams chunks as they are produced, not after the tool finishes', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const toolkit = toolkitWith(async function* () {
      yield 'first';
      await gate;
      yield 'second';
    });
    const iterator = toolkit.call(call)[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.done).toBe(false);
    expect(textOf(first.value as ToolResponse)).toBe('first');
    release();
    const rest: ToolResponse[] = [first.value as ToolResponse];
    for (let step = await iterator.next(); !step.done; step = await iterator.next())
      rest.push(step.value);
    expectWellFormed(rest);
    expect(textOf(rest)).toBe('firstsecond');
  });

  it('a consumer that stops early closes the tool generator (its finally runs)', async () => {
    let cleanedUp = false;
    let aborted = false;
    const toolkit = new Toolkit();
    toolkit.register(
      defineTool({
        name: 'subject',
        description: 'd',
        parameters: z.object({}),
        async *execute(_args, context) {
          context.signal.addEventListener('abort', () => (aborted = true));
          try {
            for (let index = 0; ; index++) yield String(index);
          } finally {
            cleanedUp = true;
          }
        },
      }),
    );
    for await (const chunk of toolkit.call(call)) {
      if (textOf(chunk) === '2') break;
    }
    expect(cleanedUp).toBe(true);
    expect(aborted).toBe(true);
  });
});

describe('callToCompletion and mergeResponses', () => {
  it('joins the chunks: adjacent text merged, other blocks kept in order, metadata merged', async () => {
    const toolkit = toolkitWith(function* () {
      yield { content: [{ type: 'text', text: 'Hel' }], metadata: { a: 1, b: 1 } };
      yield 'lo';
      yield { content: [{ type: 'json', value: { n: 1 } }] };
      yield ' wor';
      return { content: [{ type: 'text', text: 'ld' }], metadata: { b: 2 } };
    });
    const response = await toolkit.callToCompletion(call);
    expect(response.content).toEqual([
      { type: 'text', text: 'Hello' },
      { type: 'json', value: { n: 1 } },
      { type: 'text', text: ' world' },
    ]);
    expect(response.metadata).toEqual({ a: 1, b: 2 });
    expect(response.isLast).toBe(true);
    expect(response.isError).toBeUndefined();
  });

  it('marks the merged response as an error when any chunk is one', async () => {
    const toolkit = toolkitWith(function* () {
      yield 'partial ';
      throw new Error('broke');
    });
    const response = await toolkit.callToCompletion(call);
    expect(response.isError).toBe(true);
    expect(textOf(response)).toMatch(/^partial Error: .*broke/);
  });

  it('mergeResponses of nothing is an empty last response', () => {
    expect(mergeResponses([])).toEqual({ content: [], isLast: true });
  });

  it('does not mutate the chunks it merges', () => {
    const chunks: ToolResponse[] = [
      { content: [{ type: 'text', text: 'a' }] },
      { content: [{ type: 'text', text: 'b' }] },
    ];
    const copy = structuredClone(chunks);
    mergeResponses(chunks);
    expect(chunks).toEqual(copy);
  });
});
