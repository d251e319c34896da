import { describe, expect, it } from '@jest/globals';
import type { JsonSchema } from '@quiver/core';
import { z } from 'zod';
import { Toolkit, convertSchema, defineTool } from '../src/index.js';
import { textOf } from './helpers.js';

const Category: z.ZodType<{ name: string; sub?: { name: string }[] }> = z.object({
  name: z.string(),
  get sub() {
    return z.array(Category).optional();
  },
});

function makeToolkit(): Toolkit {
  const toolkit = new Toolkit();
  toolkit.register(
    defineTool({
      name: 'book_trip',
      description: { en: 'Book a trip', zh: '预订行程' },
      parameters: z.object({
        city: z.string().min(2).max(80).describe('Destination city'),
        nights: z.number().int().min(1).default(1),
        traveller: z.object({ name: z.string(), email: z.string().optional() }),
        tags: z.array(z.string()).optional(),
        class: z.enum(['economy', 'business']).optional(),
        note: z.string().nullable(),
      }),
      execute: (args) => ({ args }),
    }),
  );
  toolkit.register(
    defineTool({
      name: 'addresses',
      description: 'uses $ref',
      parameters: {
        type: 'object',
        properties: {
          home: { $ref: '#/$defs/address' },
          work: { anyOf: [{ $ref: '#/$defs/address' }, { type: 'null' }] },
          kind: { const: 'postal' },
          priority: { enum: [1, 2, 3] },
        },
        required: ['home'],
        $defs: {
          address: {
            type: 'object',
            properties: { street: { type: 'string' }, zip: { type: 'string' } },
            required: ['street'],
          },
        },
      },
      execute: (args) => ({ args }),
    }),
  );
  toolkit.register(
    defineTool({
      name: 'tree',
      description: 'recursive',
      parameters: z.object({ root: Category }),
      execute: () => 'ok',
    }),
  );
  toolkit.register(
    defineTool({
      name: 'labels',
      description: 'free-form map',
      parameters: z.object({ labels: z.record(z.string(), z.string()) }),
      execute: () => 'ok',
    }),
  );
  toolkit.register(
    defineTool({
      name: 'ping',
      description: 'no parameters',
      parameters: z.object({}),
      execute: () => 'pong',
    }),
  );
  return toolkit;
}

function schemasFor<T extends 'openai' | 'openai-strict' | 'anthropic' | 'gemini'>(target: T) {
  const excluded: [string, string][] = [];
  const list = makeToolkit().getJsonSchemas({
    target,
    onExcluded: (name, reason) => excluded.push([name, reason]),
  });
  return { list, excluded };
}

/** Walk every sub-schema. */
function walk(schema: unknown, visit: (node: JsonSchema) => void): void {
  if (Array.isArray(schema)) return schema.forEach((item) => walk(item, visit));
  if (typeof schema !== 'object' || schema === null) return;
  visit(schema as JsonSchema);
  for (const value of Object.values(schema)) walk(value, visit);
}

describe('getJsonSchemas targets', () => {
  it('openai: every active tool in the tools format, no strict flag', () => {
    const { list, excluded } = schemasFor('openai');
    expect(excluded).toEqual([]);
    expect(list.map((tool) => tool.function.name)).toEqual([
      'book_trip',
      'addresses',
      'tree',
      'labels',
      'ping',
    ]);
    for (const tool of list) {
      expect(tool.type).toBe('function');
      expect(tool.function).not.toHaveProperty('strict');
      expect(tool.function.parameters.type).toBe('object');
    }
  });

  describe('openai-strict', () => {
    const { list, excluded } = schemasFor('openai-strict');
    const byName = new Map(list.map((tool) => [tool.function.name, tool.function]));

    it('marks strict, and makes every object closed with all properties required', () => {
      expect(list.length).toBeGreaterThan(0);
      for (const tool of list) {
        expect(tool.function.strict).toBe(true);
        walk(tool.function.parameters, (node) => {
          if (node.properties === undefined) return;
          expect(node.additionalProperties).toBe(false);
          expect([...(node.required ?? [])].sort()).toEqual(Object.keys(node.properties).sort());
        });
      }
    });

    it('makes optional properties nullable and leaves required ones alone', () => {
      const properties = byName.get('book_trip')!.parameters.properties as Record<
        string,
        JsonSchema
      >;
      expect(properties.city!.type).toBe('string');
      expect(properties.tags!.type).toEqual(['array', 'null']);
      expect(properties.class!.enum).toEqual(['economy', 'business', null]);
      expect(properties.note!.type).toEqual(['string', 'null']);
      const traveller = properties.traveller!;
      expect((traveller.properties as Record<string, JsonSchema>).email!.type).toEqual([
        'string',
        'null',
      ]);
      const home = (byName.get('addresses')!.parameters.properties as Record<string, JsonSchema>)
        .home!;
      expect(home.$ref).toBe('#/$defs/address');
    });

    it('drops keywords strict mode does not support, keeps descriptions', () => {
      const text = JSON.stringify(byName.get('book_trip')!.parameters);
      for (const keyword of ['minLength', 'maxLength', 'default'])
        expect(text).not.toContain(`"${keyword}"`);
      expect(text).toContain('Destination city');
    });

    it('leaves out a tool it cannot express (a free-form map), reports it, and returns the others', () => {
      expect(excluded).toHaveLength(1);
      expect(excluded[0]![0]).toBe('labels');
      expect(excluded[0]![1]).toMatch(/openai-strict cannot express.*free-form map.*labels/);
      expect([...byName.keys()]).toEqual(['book_trip', 'addresses', 'tree', 'ping']);
    });

    it('maps the model’s null for an optional field back to absent before validation', async () => {
      const toolkit = makeToolkit();
      const args = {
        city: 'Oslo',
        nights: 2,
        traveller: { name: 'Ada', email: null },
        tags: null,
        class: null,
        note: null,
      };
      const response = await toolkit.callToCompletion({
        id: 'c',
        name: 'book_trip',
        arguments: JSON.stringify(args),
      });
      expect(response.isError).toBeUndefined();
      expect(response.content).toEqual([
        {
          type: 'json',
          value: { args: { city: 'Oslo', nights: 2, traveller: { name: 'Ada' }, note: null } },
        },
      ]);
    });

    it('rejects allOf and a top-level anyOf', () => {
      expect(
        convertSchema(
          { type: 'object', properties: { a: { allOf: [{ type: 'string' }] } } },
          'openai-strict',
        ),
      ).toMatchObject({ ok: false });
      expect(
        convertSchema({ type: 'object', anyOf: [{ properties: {} }] }, 'openai-strict'),
      ).toMatchObject({ ok: false });
    });
  });

  it('anthropic: input_schema as is; a top-level union is left out and reported', () => {
    const { list, excluded } = schemasFor('anthropic');
    expect(excluded).toEqual([]);
    expect(list[0]).toMatchObject({ name: 'book_trip', description: 'Book a trip' });
    expect(list[0]!.input_schema.type).toBe('object');
    expect(
      convertSchema(
        { type: 'object', oneOf: [{ required: ['a'] }, { required: ['b'] }] },
        'anthropic',
      ),
    ).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/oneOf/),
    });
  });

  describe('gemini', () => {
    const { list, excluded } = schemasFor('gemini');
    const byName = new Map(list.map((declaration) => [declaration.name, declaration]));

    it('says nullable: true instead of null types, and uses only its subset of keywords', () => {
      const properties = byName.get('book_trip')!.parameters!.properties as Record<
        string,
        JsonSchema
      >;
      expect(properties.note).toMatchObject({ type: 'string', nullable: true });
      for (const declaration of list) {
        walk(declaration.parameters, (node) => {
          expect(Array.isArray(node.type)).toBe(false);
          for (const keyword of [
            '$ref',
            '$defs',
            'additionalProperties',
            'const',
            'oneOf',
            'propertyNames',
          ])
            expect(node).not.toHaveProperty(keyword);
        });
      }
    });

    it('inlines $ref definitions, and turns const and non-string enums into what it accepts', () => {
      const properties = byName.get('addresses')!.parameters!.properties as Record<
        string,
        JsonSchema
      >;
      expect(properties.home).toMatchObject({
        type: 'object',
        properties: { street: { type: 'string' } },
        required: ['street'],
      });
      expect(properties.work).toMatchObject({
        type: 'object',
        nullable: true,
        properties: { zip: { type: 'string' } },
      });
      expect(properties.kind).toMatchObject({ type: 'string', enum: ['postal'] });
      expect(properties.priority!.enum).toBeUndefined();
      expect(properties.priority!.description).toMatch(/one of: 1, 2, 3/);
    });

    it('leaves out the recursive tool and the free-form map, reports both, keeps the others', () => {
      expect(excluded.map(([name]) => name)).toEqual(['tree', 'labels']);
      expect(excluded[0]![1]).toMatch(/recursive/);
      expect([...byName.keys()]).toEqual(['book_trip', 'addresses', 'ping']);
    });

    it('omits parameters for a tool without any', () => {
      expect(byName.get('ping')).toEqual({ name: 'ping', description: 'no parameters' });
    });
  });

  it('an excluded tool is also logged as a warning', () => {
    const warnings: unknown[] = [];
    const logger = {
      debug() {},
      info() {},
      error() {},
      warn: (message: string, fields?: Record<string, unknown>) =>
        warnings.push({ message, fields }),
    };
    const toolkit = new Toolkit({ logger });
    toolkit.register(
      defineTool({
        name: 'labels',
        description: 'd',
        parameters: z.object({ labels: z.record(z.string(), z.number()) }),
        execute: () => 1,
      }),
    );
    expect(toolkit.getJsonSchemas({ target: 'openai-strict' })).toEqual([]);
    expect(warnings).toEqual([
      {
        message: 'tool left out of the schema list',
        fields: expect.objectContaining({ tool: 'labels', target: 'openai-strict' }),
      },
    ]);
  });

  it('conversion never changes the registered schema', async () => {
    const toolkit = makeToolkit();
    const before = JSON.stringify(toolkit.get('book_trip')!.modelParameters);
    for (const target of ['openai', 'openai-strict', 'anthropic', 'gemini'] as const)
      toolkit.getJsonSchemas({ target });
    expect(JSON.stringify(toolkit.get('book_trip')!.modelParameters)).toBe(before);
    expect(textOf(await toolkit.callToCompletion({ id: 'c', name: 'ping', arguments: '' }))).toBe(
      'pong',
    );
  });
});
