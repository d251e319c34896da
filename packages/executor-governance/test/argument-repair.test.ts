import { describe, expect, it } from '@jest/globals';
import type { JsonSchema } from '@quiver/core';
import { Toolkit, defineTool } from '@quiver/core-registry';
import { z } from 'zod';
import { argumentRepair, governanceOf, repairArguments } from '../src/index.js';
import { call, deepFreeze, recordingLogger, textOf } from './helpers.js';

const searchSchema: JsonSchema = {
  type: 'object',
  properties: {
    query: { type: 'string' },
    max_results: { type: 'integer' },
    safe: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    level: { type: 'string', enum: ['low', 'high'] },
    options: {
      type: 'object',
      properties: { page_size: { type: 'integer' }, region: { type: 'string' } },
    },
  },
  required: ['query'],
};

describe('repairArguments: repairs', () => {
  it('renames by normalisation (camelCase, case, separators)', () => {
    const result = repairArguments({ Query: 'a', maxResults: 3 }, searchSchema);
    expect(result.arguments).toEqual({ query: 'a', max_results: 3 });
    expect(result.repairs.map((repair) => [repair.kind, repair.from, repair.path])).toEqual([
      ['rename', 'Query', ['query']],
      ['rename', 'maxResults', ['max_results']],
    ]);
  });

  it('renames by synonym and by edit distance', () => {
    expect(repairArguments({ q: 'a', limit: 2 }, searchSchema).arguments).toEqual({
      query: 'a',
      max_results: 2,
    });
    expect(repairArguments({ queyr: 'a', max_reslts: 2 }, searchSchema).arguments).toEqual({
      query: 'a',
      max_results: 2,
    });
  });

  it('applies alias maps first', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: { url: { type: 'string' }, info_to_extract: { type: 'string' } },
    };
    const result = repairArguments({ url: 'u', introduction: 'the price' }, schema, {
      aliases: { introduction: 'info_to_extract' },
    });
    expect(result.arguments).toEqual({ url: 'u', info_to_extract: 'the price' });
    expect(result.repairs[0]).toMatchObject({ kind: 'alias', from: 'introduction' });
  });

  it('coerces unambiguous scalars', () => {
    const result = repairArguments({ query: 42, max_results: ' 5 ', safe: 'TRUE' }, searchSchema);
    expect(result.arguments).toEqual({ query: '42', max_results: 5, safe: true });
    expect(result.repairs.every((repair) => repair.kind === 'coerce')).toBe(true);
  });

  it('wraps a lone value in an array and parses JSON text for arrays and objects', () => {
    expect(repairArguments({ query: 'a', tags: 'news' }, searchSchema).arguments.tags).toEqual([
      'news',
    ]);
    expect(repairArguments({ query: 'a', tags: '["a","b"]' }, searchSchema).arguments.tags).toEqual(
      ['a', 'b'],
    );
    expect(
      repairArguments({ query: 'a', options: '{"pageSize":"10"}' }, searchSchema).arguments.options,
    ).toEqual({ page_size: 10 });
  });

  it('repairs nested objects and array items', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        items: {
          type: 'array',
          items: {
            type: 'object',
            properties: { count: { type: 'integer' }, name: { type: 'string' } },
          },
        },
      },
    };
    const result = repairArguments(
      {
        items: [
          { Count: '2', name: 'x' },
          { count: 3, Name: 'y' },
        ],
      },
      schema,
    );
    expect(result.arguments).toEqual({
      items: [
        { count: 2, name: 'x' },
        { count: 3, name: 'y' },
      ],
    });
    expect(result.repairs.map((repair) => repair.path)).toEqual([
      ['items', 0, 'count'],
      ['items', 0, 'count'],
      ['items', 1, 'name'],
    ]);
  });

  it('fixes the case of enum values', () => {
    expect(repairArguments({ query: 'a', level: 'High' }, searchSchema).arguments.level).toBe(
      'high',
    );
  });

  it('never mutates its input and returns the input itself when nothing changes', () => {
    const input = deepFreeze({ q: 'a', options: { pageSize: '5' }, tags: 'x' });
    const result = repairArguments(input, searchSchema);
    expect(result.arguments).toEqual({ query: 'a', options: { page_size: 5 }, tags: ['x'] });
    expect(input).toEqual({ q: 'a', options: { pageSize: '5' }, tags: 'x' });
    const clean = { query: 'a', max_results: 1 };
    expect(repairArguments(clean, searchSchema).arguments).toBe(clean);
  });

  it('handles nullable (anyOf) properties and $ref definitions', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        limit: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
        point: { $ref: '#/$defs/Point' },
      },
      $defs: { Point: { type: 'object', properties: { x: { type: 'number' } } } },
    };
    expect(repairArguments({ limit: '4', point: { X: '1.5' } }, schema).arguments).toEqual({
      limit: 4,
      point: { x: 1.5 },
    });
    expect(repairArguments({ limit: null }, schema).arguments).toEqual({ limit: null });
  });
});

describe('repairArguments: ambiguous cases are left alone', () => {
  const unchanged = (args: Record<string, unknown>, schema: JsonSchema) => {
    const result = repairArguments(args, schema);
    expect(result.arguments).toEqual(args);
    expect(result.repairs).toEqual([]);
  };

  it('does not rename when two properties match equally', () => {
    unchanged(
      { nme: 'x' },
      { type: 'object', properties: { name: { type: 'string' }, nmea: { type: 'string' } } },
    );
    // "text" is a synonym of "content" and "body"; both are missing.
    unchanged(
      { text: 'x' },
      { type: 'object', properties: { content: { type: 'string' }, body: { type: 'string' } } },
    );
  });

  it('does not rename when two unknown keys want the same property', () => {
    unchanged(
      { Query: 'a', q: 'b' },
      { type: 'object', properties: { query: { type: 'string' } } },
    );
  });

  it('does not overwrite a property the model did send', () => {
    unchanged(
      { query: 'a', q: 'b' },
      { type: 'object', properties: { query: { type: 'string' } } },
    );
  });

  it('does not rename a value that cannot be the target type', () => {
    unchanged(
      { limit: 'all of them' },
      { type: 'object', properties: { max_results: { type: 'integer' } } },
    );
  });

  it('does not match short names by edit distance', () => {
    unchanged({ id: 1 }, { type: 'object', properties: { ip: { type: 'integer' } } });
  });

  it('does not rename keys of map-like objects (additionalProperties is a schema)', () => {
    unchanged(
      { Header: 'x' },
      {
        type: 'object',
        properties: { header: { type: 'string' } },
        additionalProperties: { type: 'string' },
      },
    );
  });

  it('does not guess between types or read unclear text', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        either: { type: ['string', 'integer'] },
        flag: { type: 'boolean' },
        whole: { type: 'integer' },
        pair: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] },
        names: { type: 'array', items: { type: 'string' } },
        level: { type: 'string', enum: ['high', 'higher'] },
      },
    };
    unchanged({ either: true }, schema);
    unchanged({ flag: 'yes' }, schema);
    unchanged({ flag: 1 }, schema);
    unchanged({ whole: '5.5' }, schema);
    unchanged({ whole: 'abc' }, schema);
    unchanged({ whole: '' }, schema);
    unchanged({ pair: 'a' }, schema);
    unchanged({ names: { a: 1 } }, schema);
    unchanged({ level: 'hi' }, schema);
  });

  it('leaves a union value that several branches accept', () => {
    unchanged(
      { value: '5' },
      {
        type: 'object',
        properties: { value: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
      },
    );
  });
});

describe('argumentRepair middleware', () => {
  const makeToolkit = () => {
    const seen: unknown[] = [];
    const toolkit = new Toolkit();
    toolkit.register(
      defineTool({
        name: 'web_search',
        description: 'Search the web',
        parameters: z.object({ query: z.string(), max_results: z.number().int().default(5) }),
        execute: (args) => {
          seen.push(args);
          return `results for ${args.query} (${args.max_results})`;
        },
      }),
    );
    return { toolkit, seen };
  };

  it('lets a call with misnamed arguments succeed and records the repairs', async () => {
    const { toolkit, seen } = makeToolkit();
    toolkit.use(argumentRepair());
    const original = { searchQuery: 'quiver', maxResults: '3' };
    const response = await call(toolkit, 'web_search', original);
    expect(response.isError).toBeUndefined();
    expect(textOf(response)).toBe('results for quiver (3)');
    expect(seen).toEqual([{ query: 'quiver', max_results: 3 }]);
    const governance = governanceOf(response);
    expect(governance.repairedArguments).toEqual({ query: 'quiver', max_results: 3 });
    expect(governance.repairs?.map((repair) => repair.kind)).toEqual([
      'rename',
      'rename',
      'coerce',
    ]);
  });

  it('without repair the same call fails validation (the repair is what fixes it)', async () => {
    const { toolkit } = makeToolkit();
    const response = await call(toolkit, 'web_search', { searchQuery: 'quiver' });
    expect(response.isError).toBe(true);
  });

  it('uses per-tool and global alias maps, and can tell the model', async () => {
    const { toolkit, seen } = makeToolkit();
    toolkit.use(
      argumentRepair({
        aliases: { web_search: { topic: 'query' }, '*': { n: 'max_results' } },
        tellModel: true,
      }),
    );
    const response = await call(toolkit, 'web_search', { topic: 'x', n: 2 });
    expect(seen).toEqual([{ query: 'x', max_results: 2 }]);
    expect(textOf(response)).toContain('Note: your arguments were repaired');
    expect(textOf(response)).toContain('renamed "topic" to "query" (alias)');
  });

  it('logs and skips a repair rule that throws; applies one that works', async () => {
    const { toolkit, seen } = makeToolkit();
    const logger = recordingLogger();
    toolkit.use(
      argumentRepair({
        logger,
        rules: [
          {
            name: 'broken',
            repair: () => {
              throw new Error('boom');
            },
          },
          {
            name: 'trim',
            repair: (args) =>
              typeof args.query === 'string' ? { ...args, query: args.query.trim() } : undefined,
          },
        ],
      }),
    );
    const response = await call(toolkit, 'web_search', { query: '  spaced  ' });
    expect(response.isError).toBeUndefined();
    expect(seen).toEqual([{ query: 'spaced', max_results: 5 }]);
    expect(logger.entries).toEqual([
      expect.objectContaining({
        level: 'warn',
        fields: expect.objectContaining({ rule: 'broken', error: 'boom' }),
      }),
    ]);
    expect(governanceOf(response).repairs).toEqual([expect.objectContaining({ kind: 'rule' })]);
  });

  it('passes unknown tools and unreadable arguments through untouched', async () => {
    const { toolkit } = makeToolkit();
    toolkit.use(argumentRepair());
    expect((await call(toolkit, 'nope', { q: 1 })).metadata?.error?.code).toBe('tool_not_found');
    expect(
      (await call(toolkit, 'web_search', '{"query": "unterminated')).metadata?.error?.code,
    ).toBe('tool_argument_invalid');
  });
});
