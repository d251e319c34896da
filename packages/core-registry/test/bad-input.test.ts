/**
 * The "bad input" list of the registry's contract, one test each: nothing a model or a tool can do
 * makes `call()` throw; each failure is a well-formed error response the model can act on.
 */
import { describe, expect, it } from '@jest/globals';
import type { ArgumentIssue, ToolCall } from '@quiver/core';
import { ToolExecutionError, ToolRegistrationError } from '@quiver/core';
import { z } from 'zod';
import { Toolkit, defineTool } from '../src/index.js';
import { collect, errorOf, finalChunk, textOf } from './helpers.js';

function makeToolkit(): Toolkit {
  const toolkit = new Toolkit();
  toolkit.register(
    defineTool({
      name: 'weather',
      description: 'Weather for a city',
      parameters: z.object({ city: z.string().describe('City name'), unit: z.enum(['c', 'f']) }),
      execute: ({ city, unit }) => `${city}: 20°${unit}`,
    }),
  );
  return toolkit;
}

async function failed(toolkit: Toolkit, toolCall: ToolCall) {
  const chunks = await collect(toolkit.call(toolCall));
  const response = finalChunk(chunks);
  return { response, error: errorOf(response), text: textOf(response) };
}

const weather = (args: string): ToolCall => ({ id: 'c', name: 'weather', arguments: args });

describe('bad input', () => {
  it('an unknown tool: tool_not_found, naming the tools that exist', async () => {
    const { error, text } = await failed(makeToolkit(), {
      id: 'c',
      name: 'wether',
      arguments: '{}',
    });
    expect(error).toMatchObject({ code: 'tool_not_found', toolName: 'wether' });
    expect(text).toMatch(/"wether" does not exist.*Available tools: weather/);
  });

  it('arguments that are not JSON at all: tool_argument_invalid, asking for a JSON object', async () => {
    const { error, text } = await failed(makeToolkit(), weather('Berlin please, in celsius'));
    expect(error.code).toBe('tool_argument_invalid');
    expect(text).toMatch(/not JSON/);
    expect(text).toMatch(/JSON object/);
  });

  describe('schema violations name the field and what is expected', () => {
    const cases: [string, string, (string | number)[], RegExp][] = [
      ['missing required', '{"unit": "c"}', ['city'], /required.*string.*City name/],
      ['wrong type', '{"city": ["Berlin"], "unit": "c"}', ['city'], /expected string.*got array/],
      [
        'enum outside',
        '{"city": "Berlin", "unit": "kelvin"}',
        ['unit'],
        /"c".*"f".*got string "kelvin"/,
      ],
      [
        'extra keys',
        '{"city": "Berlin", "unit": "c", "country": "DE"}',
        ['country'],
        /not a parameter.*city, unit/,
      ],
    ];
    it.each(cases)('%s', async (_label, args, path, message) => {
      const { error, text } = await failed(makeToolkit(), weather(args));
      expect(error.code).toBe('tool_argument_invalid');
      const issues = error.issues as ArgumentIssue[];
      expect(issues).toHaveLength(1);
      expect(issues[0]!.path).toEqual(path);
      expect(issues[0]!.message).toMatch(message);
      expect(text).toContain(`"${path.join('.')}"`);
    });
  });

  describe('a tool that throws', () => {
    it.each<[string, unknown, RegExp]>([
      ['an Error', new Error('disk full'), /Tool "boom" failed: disk full/],
      ['a string', 'plain string', /plain string/],
      ['a plain object', { reason: 'weird' }, /weird/],
      ['undefined', undefined, /Tool "boom" failed/],
    ])('%s becomes an error response', async (_label, thrown, message) => {
      const toolkit = new Toolkit();
      toolkit.register(
        defineTool({
          name: 'boom',
          description: 'd',
          parameters: z.object({}),
          execute: () => {
            throw thrown;
          },
        }),
      );
      const { error, text } = await failed(toolkit, { id: 'c', name: 'boom', arguments: '{}' });
      expect(error).toMatchObject({
        code: 'tool_execution_failed',
        toolName: 'boom',
        isRetryable: false,
      });
      expect(text).toMatch(message);
    });

    it('a typed error keeps its code and isRetryable; a rejected promise is the same as a throw', async () => {
      const toolkit = new Toolkit();
      toolkit.register(
        defineTool({
          name: 'flaky',
          description: 'd',
          parameters: z.object({}),
          execute: async () => {
            throw new ToolExecutionError('flaky', 'Upstream answered 503; try again shortly.', {
              isRetryable: true,
              retryAfterMs: 2000,
              code: 'upstream_unavailable',
            });
          },
        }),
      );
      const { error, text } = await failed(toolkit, { id: 'c', name: 'flaky', arguments: '{}' });
      expect(error).toMatchObject({
        code: 'upstream_unavailable',
        isRetryable: true,
        retryAfterMs: 2000,
      });
      expect(text).toBe('Error: Upstream answered 503; try again shortly.');
    });
  });

  it('a tool that hangs: a timeout response, not a hang', async () => {
    const toolkit = new Toolkit({ defaultTimeoutMs: 20 });
    toolkit.register(
      defineTool({
        name: 'hang',
        description: 'd',
        parameters: z.object({}),
        execute: () => new Promise(() => {}),
      }),
    );
    const { error } = await failed(toolkit, { id: 'c', name: 'hang', arguments: '{}' });
    expect(error.code).toBe('tool_timeout');
  });

  it.each([
    [
      'sync',
      function* () {
        yield 'one ';
        throw new Error('generator broke');
      },
    ],
    [
      'async',
      async function* () {
        yield 'one ';
        await Promise.resolve();
        throw new Error('generator broke');
      },
    ],
  ])(
    'a %s generator that throws mid-stream: the chunks so far, then an error chunk',
    async (_label, execute) => {
      const toolkit = new Toolkit();
      toolkit.register(
        defineTool({ name: 'gen', description: 'd', parameters: z.object({}), execute }),
      );
      const chunks = await collect(toolkit.call({ id: 'c', name: 'gen', arguments: '{}' }));
      expect(chunks).toHaveLength(2);
      expect(textOf(chunks[0]!)).toBe('one ');
      expect(chunks[0]!.isError).toBeUndefined();
      expect(errorOf(finalChunk(chunks)).code).toBe('tool_execution_failed');
      expect(textOf(chunks[1]!)).toMatch(/generator broke/);
    },
  );

  it('a middleware that throws: an error response naming the middleware', async () => {
    const toolkit = makeToolkit();
    toolkit.use(function quota() {
      throw new Error('quota store unreachable');
    });
    const { error, text } = await failed(toolkit, weather('{"city":"Oslo","unit":"c"}'));
    expect(error.code).toBe('tool_execution_failed');
    expect(text).toMatch(/Middleware "quota" failed.*quota store unreachable/);
  });

  it('duplicate registration under each strategy', async () => {
    const other = defineTool({
      name: 'weather',
      description: 'other',
      parameters: z.object({}),
      execute: () => 'other',
    });
    const raise = makeToolkit();
    expect(() => raise.register(other)).toThrow(ToolRegistrationError);
    const skip = makeToolkit();
    expect(skip.register(other, { namesake: 'skip' })).toBeUndefined();
    expect(skip.get('weather')?.description).toBe('Weather for a city');
    const override = makeToolkit();
    override.register(other, { namesake: 'override' });
    expect(textOf(await override.callToCompletion(weather('{}')))).toBe('other');
    const rename = makeToolkit();
    expect(rename.register(other, { namesake: 'rename' })?.name).toBe('weather_2');
    expect(rename.list().map((tool) => tool.name)).toEqual(['weather', 'weather_2']);
  });

  it.each([
    ['type: "strng"', { type: 'object', properties: { city: { type: 'strng' } } }],
    ['required: "x"', { type: 'object', properties: { x: { type: 'string' } }, required: 'x' }],
    ['a non-object root', { type: 'array', items: { type: 'string' } }],
  ])('a JSON Schema that is itself invalid (%s) fails at registration', (_label, parameters) => {
    const toolkit = new Toolkit();
    expect(() =>
      toolkit.register({
        name: 'broken',
        description: 'd',
        parameters: parameters as never,
        execute: () => 1,
      }),
    ).toThrow(ToolRegistrationError);
    expect(toolkit.has('broken')).toBe(false);
  });

  it('malformed tool calls from a sloppy client are error responses too', async () => {
    const toolkit = makeToolkit();
    const calls = [
      { id: 'c', name: 'weather', arguments: 42 },
      { id: 'c', name: 'weather', arguments: ['Berlin'] },
      { id: 'c', name: 'weather' },
      { id: 7, name: 'weather', arguments: { city: 'Oslo', unit: 'c' } },
      { id: 'c', name: 42, arguments: '{}' },
      { id: 'c' },
      null,
    ] as unknown as ToolCall[];
    const outcomes = [];
    for (const toolCall of calls) outcomes.push(finalChunk(await collect(toolkit.call(toolCall))));
    // An object for arguments is accepted as already parsed; everything else is an error.
    expect(outcomes.map((response) => response.isError === true)).toEqual([
      true,
      true,
      true,
      false,
      true,
      true,
      true,
    ]);
    expect(textOf(outcomes[3]!)).toBe('Oslo: 20°c');
  });
});
