/**
 * Fuzz: thousands of random and mutated argument strings against several tools (zod and JSON
 * Schema, plain and streaming). `call()` must never throw or reject, and every stream must be
 * well-formed (each chunk a valid ToolResponse, exactly one `isLast`, on the final chunk).
 * Seeded, so a failure reproduces: the failing input is printed with its index.
 */
import { describe, expect, it } from '@jest/globals';
import type { ToolResponse } from '@quiver/core';
import { toolResponseSchema } from '@quiver/core';
import { z } from 'zod';
import { Toolkit, defineTool } from '../src/index.js';
import { mulberry32 } from './helpers.js';

const SEED = 0x5eed2;
const CASES = 5_000;

function makeToolkit(): Toolkit {
  const toolkit = new Toolkit({ defaultTimeoutMs: 1_000 });
  toolkit.register(
    defineTool({
      name: 'zod_flat',
      description: 'd',
      parameters: z.object({
        query: z.string().min(1),
        limit: z.number().int().min(1).max(100).optional(),
        mode: z.enum(['a', 'b']).optional(),
      }),
      execute: (args) => ({ echoed: args }),
    }),
  );
  const Item: z.ZodType<{ id: number; children?: unknown[] }> = z.object({
    id: z.number(),
    get children() {
      return z.array(Item).optional();
    },
  });
  toolkit.register(
    defineTool({
      name: 'zod_nested',
      description: 'd',
      parameters: z.object({
        items: z.array(Item).max(50),
        options: z
          .object({ flag: z.boolean().default(false), note: z.string().nullable().optional() })
          .optional(),
        tags: z.record(z.string(), z.string()).optional(),
      }),
      async *execute(args) {
        yield `count ${args.items.length}`;
        yield { content: [{ type: 'json', value: args.options ?? null }] };
        return 'done';
      },
    }),
  );
  toolkit.register(
    defineTool({
      name: 'json_ref',
      description: 'd',
      parameters: {
        type: 'object',
        properties: {
          point: { $ref: '#/$defs/point' },
          color: { enum: ['red', 'green'] },
          count: { type: 'integer', default: 1 },
          extra: { type: 'object', additionalProperties: { type: 'number' } },
        },
        required: ['point'],
        additionalProperties: false,
        $defs: {
          point: {
            type: 'object',
            properties: { x: { type: 'number' }, y: { type: 'number' } },
            required: ['x', 'y'],
          },
        },
      },
      execute: (args) => args,
    }),
  );
  toolkit.register(
    defineTool({
      name: 'json_open',
      description: 'd',
      parameters: { type: 'object', properties: { text: { type: 'string', maxLength: 20000 } } },
      execute: function* (args) {
        yield { content: [{ type: 'text', text: String(args.text ?? '') }] };
      },
    }),
  );
  return toolkit;
}

const TOOLS = ['zod_flat', 'zod_nested', 'json_ref', 'json_open', 'no_such_tool'];

const VALID: Record<string, unknown[]> = {
  zod_flat: [{ query: 'cats', limit: 5, mode: 'a' }, { query: 'x' }],
  zod_nested: [
    {
      items: [{ id: 1, children: [{ id: 2 }] }],
      options: { flag: true, note: null },
      tags: { a: 'b' },
    },
    { items: [] },
  ],
  json_ref: [
    { point: { x: 1, y: 2 }, color: 'red', extra: { a: 1 } },
    { point: { x: 0, y: -1.5 } },
  ],
  json_open: [{ text: 'hello' }, {}],
  no_such_tool: [{}],
};

const INSERTS = [
  '"',
  "'",
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  '\\',
  '\n',
  '```',
  'True',
  'None',
  'NaN',
  '//',
  '/*',
  '\u0000',
  '\ud800',
  '😀',
  '\u202e',
  '𝔘',
];
const NUMBERS = [
  '1e309',
  '-1e309',
  '123456789012345678901234567890',
  '-0',
  '0.0000000000000000000001',
  '9007199254740993',
  'Infinity',
  'NaN',
  '0x1F',
  '1_000',
];
const PROTO_KEYS = [
  '"__proto__": {"polluted": true}',
  '"constructor": {"prototype": {"polluted": true}}',
  '"prototype": {"polluted": true}',
  '"toString": 1',
  '"hasOwnProperty": "x"',
  '"__defineGetter__": null',
];

function mutate(valid: string, random: () => number): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const at = () => Math.floor(random() * (valid.length + 1));
  switch (Math.floor(random() * 12)) {
    case 0: // truncation
      return valid.slice(0, at());
    case 1: {
      // byte flips
      const chars = [...valid];
      for (let flips = 1 + Math.floor(random() * 3); flips > 0; flips--) {
        chars[Math.floor(random() * chars.length)] = String.fromCharCode(
          Math.floor(random() * 0x10000),
        );
      }
      return chars.join('');
    }
    case 2: {
      const position = at();
      return valid.slice(0, position) + pick(INSERTS) + valid.slice(position);
    }
    case 3:
      return valid.replace(/-?\d+(\.\d+)?/, pick(NUMBERS));
    case 4: {
      const depth = 1 + Math.floor(random() * 3000);
      return `{"items": ${'['.repeat(depth)}${']'.repeat(random() < 0.5 ? depth : Math.floor(depth / 2))}}`;
    }
    case 5:
      return valid.replace('{', `{${pick(PROTO_KEYS)},`);
    case 6:
      return `{${pick(PROTO_KEYS)}}`;
    case 7:
      return '```json\n' + valid.replace(/"/g, "'") + (random() < 0.5 ? '\n```' : '');
    case 8:
      return valid.replace(/true/g, 'True').replace(/null/g, 'None').replace(/}$/, ',}');
    case 9:
      return JSON.stringify(valid); // double-encoded
    case 10:
      return valid.replace(
        /"[^"]*"(?=\s*[,}])/,
        JSON.stringify('x'.repeat(Math.floor(random() * 30000))),
      );
    default:
      return valid + pick(['', ' trailing', '}', ']', valid]);
  }
}

function randomString(random: () => number): string {
  const alphabet = '{}[]":,\'\\ abc123-.eE\n\ttrue false null TrueNone😀中文\u0000';
  const length = Math.floor(random() * 80);
  let text = '';
  for (let index = 0; index < length; index++)
    text += alphabet[Math.floor(random() * alphabet.length)];
  return text;
}

function checkStream(chunks: readonly ToolResponse[]): string | undefined {
  if (chunks.length === 0) return 'empty stream';
  for (const [index, chunk] of chunks.entries()) {
    const parsed = toolResponseSchema.safeParse(chunk);
    if (!parsed.success) return `chunk ${index} is not a ToolResponse: ${parsed.error.message}`;
    if ((chunk.isLast === true) !== (index === chunks.length - 1))
      return `chunk ${index} has isLast=${String(chunk.isLast)}`;
  }
  return undefined;
}

describe('fuzz: call() never throws and always yields well-formed responses', () => {
  it(`${CASES} random and mutated argument strings (seed ${SEED})`, async () => {
    const random = mulberry32(SEED);
    const toolkit = makeToolkit();
    const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
    const failures: string[] = [];
    const outcomes = { ok: 0, error: 0 };
    for (let index = 0; index < CASES && failures.length < 5; index++) {
      const name = TOOLS[Math.floor(random() * TOOLS.length)]!;
      const valids = VALID[name]!;
      const valid = JSON.stringify(valids[Math.floor(random() * valids.length)]);
      const roll = random();
      const args = roll < 0.1 ? valid : roll < 0.3 ? randomString(random) : mutate(valid, random);
      try {
        const chunks: ToolResponse[] = [];
        for await (const chunk of toolkit.call({ id: `fuzz-${index}`, name, arguments: args }))
          chunks.push(chunk);
        const problem = checkStream(chunks);
        if (problem)
          failures.push(`#${index} ${name} ${JSON.stringify(args).slice(0, 200)}: ${problem}`);
        else if (chunks[chunks.length - 1]!.isError) outcomes.error++;
        else outcomes.ok++;
      } catch (error) {
        failures.push(
          `#${index} ${name} ${JSON.stringify(args).slice(0, 200)}: call threw ${String(error)}`,
        );
      }
    }
    expect(failures).toEqual([]);
    // Both outcomes occur: the fuzzer reaches the tools, not only the parser's error path.
    expect(outcomes.ok).toBeGreaterThan(CASES / 20);
    expect(outcomes.error).toBeGreaterThan(CASES / 4);
    // Nothing leaked onto Object.prototype.
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
