import { describe, expect, it } from '@jest/globals';
import { ToolRegistrationError } from '@quiver/core';
import type { ArgumentIssue } from '@quiver/core';
import { z } from 'zod';
import { Toolkit, defineTool } from '../src/index.js';
import { collect, errorOf, finalChunk } from './helpers.js';

const echo = (args: unknown) => ({ received: args });

/** Tools with the same shape in zod and in JSON Schema: messages must be as precise for both. */
function makeToolkit(): Toolkit {
  const toolkit = new Toolkit();
  toolkit.register(
    defineTool({
      name: 'zod_tool',
      description: 'd',
      parameters: z.object({
        query: z.string().describe('Search terms'),
        mode: z.enum(['fast', 'deep']).optional(),
        limit: z.number().int().min(1).optional(),
        options: z.object({ lang: z.string() }).optional(),
      }),
      execute: echo,
    }),
  );
  toolkit.register(
    defineTool({
      name: 'json_tool',
      description: 'd',
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'Search terms' },
          mode: { enum: ['fast', 'deep'] },
          limit: { type: 'integer', minimum: 1 },
          options: {
            type: 'object',
            properties: { lang: { type: 'string' } },
            required: ['lang'],
            additionalProperties: false,
          },
        },
        required: ['query'],
        additionalProperties: false,
      },
      execute: echo,
    }),
  );
  return toolkit;
}

async function issuesFor(
  toolkit: Toolkit,
  name: string,
  args: string,
): Promise<{ issues: ArgumentIssue[]; text: string }> {
  const response = finalChunk(await collect(toolkit.call({ id: 'c', name, arguments: args })));
  const error = errorOf(response);
  expect(error.code).toBe('tool_argument_invalid');
  const text = response.content[0]?.type === 'text' ? response.content[0].text : '';
  return { issues: error.issues as ArgumentIssue[], text };
}

describe.each(['zod_tool', 'json_tool'])('validation messages of %s', (name) => {
  const toolkit = makeToolkit();

  it('names a missing required field, its type and its description', async () => {
    const { issues, text } = await issuesFor(toolkit, name, '{}');
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toEqual(['query']);
    expect(issues[0]!.message).toMatch(/required/);
    expect(issues[0]!.message).toMatch(/string/);
    expect(issues[0]!.message).toMatch(/Search terms/);
    expect(text).toContain('"query"');
    expect(text).toMatch(/Fix these fields/);
  });

  it('names a field of the wrong type and the type expected', async () => {
    const { issues } = await issuesFor(toolkit, name, '{"query": 42}');
    expect(issues.map((issue) => issue.path)).toEqual([['query']]);
    expect(issues[0]!.message).toMatch(/string/);
  });

  it('lists the allowed values when an enum value is outside them', async () => {
    const { issues } = await issuesFor(toolkit, name, '{"query": "x", "mode": "slow"}');
    expect(issues.map((issue) => issue.path)).toEqual([['mode']]);
    expect(issues[0]!.message).toContain('"fast"');
    expect(issues[0]!.message).toContain('"deep"');
  });

  it('reports an extra key once, with the list of real parameters', async () => {
    const { issues } = await issuesFor(toolkit, name, '{"query": "x", "qurey": "y"}');
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toEqual(['qurey']);
    expect(issues[0]!.message).toMatch(/not a parameter/);
    for (const parameter of ['query', 'mode', 'limit', 'options'])
      expect(issues[0]!.message).toContain(parameter);
  });

  it('gives the full path of a nested problem', async () => {
    const { issues } = await issuesFor(toolkit, name, '{"query": "x", "options": {"lang": 1}}');
    expect(issues.map((issue) => issue.path)).toEqual([['options', 'lang']]);
    expect(issues[0]!.message).toMatch(/string/);
  });

  it('reports every problem at once', async () => {
    const { issues } = await issuesFor(toolkit, name, '{"mode": "slow", "limit": 0}');
    const paths = issues.map((issue) => issue.path.join('.')).sort();
    expect(paths).toEqual(['limit', 'mode', 'query']);
  });

  it('passes valid arguments through to the tool', async () => {
    const response = finalChunk(
      await collect(toolkit.call({ id: 'c', name, arguments: '{"query":"x","limit":3}' })),
    );
    expect(response.isError).toBeUndefined();
    expect(response.content).toEqual([
      { type: 'json', value: { received: { query: 'x', limit: 3 } } },
    ]);
  });
});

describe('schemas that are themselves invalid fail at registration', () => {
  const cases: [string, unknown, RegExp][] = [
    [
      'a misspelt type',
      { type: 'object', properties: { a: { type: 'strng' } } },
      /properties\/a\/type/,
    ],
    [
      'required that is not an array',
      { type: 'object', properties: { a: { type: 'string' } }, required: 'a' },
      /required must be array/,
    ],
    ['a string root', { type: 'string' }, /root .* must have type "object"/],
    ['an array root', { type: 'array', items: { type: 'string' } }, /must have type "object"/],
    ['no root type at all', {}, /must have type "object"/],
    ['an array instead of a schema', [{ type: 'object' }], /JSON Schema object/],
    ['null', null, /JSON Schema object/],
    [
      'an unresolvable $ref',
      { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } },
      /resolve reference/,
    ],
    [
      'a negative minLength',
      { type: 'object', properties: { a: { type: 'string', minLength: -1 } } },
      /minLength/,
    ],
    ['a zod schema that is not an object', z.string(), /zod object schema/],
    ['a zod array', z.array(z.string()), /zod object schema/],
  ];
  it.each(cases)('%s', (_label, parameters, message) => {
    let thrown: unknown;
    try {
      defineTool({
        name: 'broken',
        description: 'd',
        parameters: parameters as never,
        execute: () => 1,
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ToolRegistrationError);
    const error = thrown as ToolRegistrationError;
    expect(error.code).toBe('tool_registration_invalid');
    expect(error.toolName).toBe('broken');
    expect(error.message).toMatch(/Tool "broken" has an invalid parameter schema/);
    expect(error.message).toMatch(message);
  });

  it('also fails through toolkit.register with a spec, and registers nothing', () => {
    const toolkit = new Toolkit();
    expect(() =>
      toolkit.register({
        name: 'broken',
        description: 'd',
        parameters: { type: 'object', required: 'x' } as never,
        execute: () => 1,
      }),
    ).toThrow(ToolRegistrationError);
    expect(toolkit.has('broken')).toBe(false);
  });
});

describe('null means absent for optional fields (strict provider schemas)', () => {
  const Node: z.ZodType<{ name: string; children?: { name: string }[] }> = z.object({
    name: z.string(),
    get children() {
      return z.array(Node).optional();
    },
  });
  const toolkit = new Toolkit();
  toolkit.register(
    defineTool({
      name: 'nulls',
      description: 'd',
      parameters: z.object({
        required: z.string(),
        optional: z.number().optional(),
        nullable: z.string().nullable(),
        nested: z.object({ inner: z.string().optional() }).optional(),
        list: z.array(z.object({ a: z.string(), b: z.string().optional() })).optional(),
        tree: Node.optional(),
      }),
      execute: echo,
    }),
  );

  async function received(args: unknown): Promise<unknown> {
    const response = finalChunk(
      await collect(toolkit.call({ id: 'c', name: 'nulls', arguments: JSON.stringify(args) })),
    );
    expect(response.isError).toBeUndefined();
    return (response.content[0] as { value: { received: unknown } }).value.received;
  }

  it('drops null where the field is optional, keeps it where null is a real value', async () => {
    expect(await received({ required: 'r', optional: null, nullable: null, nested: null })).toEqual(
      { required: 'r', nullable: null },
    );
  });

  it('drops nulls inside nested objects, array items and recursive ($ref) types', async () => {
    const args = {
      required: 'r',
      nullable: 'n',
      nested: { inner: null },
      list: [
        { a: 'x', b: null },
        { a: 'y', b: 'z' },
      ],
      tree: { name: 'root', children: [{ name: 'leaf', children: null }] },
    };
    expect(await received(args)).toEqual({
      required: 'r',
      nullable: 'n',
      nested: {},
      list: [{ a: 'x' }, { a: 'y', b: 'z' }],
      tree: { name: 'root', children: [{ name: 'leaf' }] },
    });
  });

  it('still rejects null for a required non-nullable field', async () => {
    const response = finalChunk(
      await collect(
        toolkit.call({ id: 'c', name: 'nulls', arguments: '{"required": null, "nullable": null}' }),
      ),
    );
    expect((errorOf(response).issues as ArgumentIssue[]).map((issue) => issue.path)).toEqual([
      ['required'],
    ]);
  });
});
