import { describe, expect, it } from '@jest/globals';
import { ToolRegistrationError, createToolContext } from '@quiver/core';
import { z } from 'zod';
import { defineTool, isTool } from '../src/index.js';

const noop = () => 'ok';

describe('defineTool', () => {
  it('builds a frozen tool whose JSON Schema comes from the zod schema, descriptions included', () => {
    const tool = defineTool({
      name: 'search_docs',
      description: { en: 'Search the docs', zh: '搜索文档' },
      parameters: z.object({
        query: z.string().describe('What to look for'),
        limit: z.number().int().min(1).max(50).optional().describe('Most results to return'),
      }),
      flags: { networkAccess: true },
      timeoutMs: 1234,
      execute: noop,
    });
    expect(isTool(tool)).toBe(true);
    expect(Object.isFrozen(tool)).toBe(true);
    expect(tool.parameters.type).toBe('object');
    expect(tool.parameters.properties?.query).toMatchObject({
      type: 'string',
      description: 'What to look for',
    });
    expect(tool.parameters.properties?.limit).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 50,
      description: 'Most results to return',
    });
    expect(tool.parameters.required).toEqual(['query']);
    // zod's $schema and ±2^53 integer bounds are noise for a model.
    expect(JSON.stringify(tool.parameters)).not.toContain('$schema');
    expect(JSON.stringify(tool.parameters)).not.toContain(String(Number.MAX_SAFE_INTEGER));
    expect(tool.flags).toEqual({ networkAccess: true });
    expect(tool.timeoutMs).toBe(1234);
    expect(tool.needsApproval).toBe(false);
    expect(tool.group).toBeUndefined();
  });

  it('gives the definition in the requested language, English as fallback', () => {
    const tool = defineTool({
      name: 't',
      description: { en: 'English', zh: '中文' },
      parameters: z.object({}),
      group: 'web',
      execute: noop,
    });
    expect(tool.definition('zh').description).toBe('中文');
    expect(tool.definition('en').description).toBe('English');
    expect(tool.definition().description).toBe('English');
    expect(tool.definition('zh')).toMatchObject({
      name: 't',
      group: 'web',
      parameters: tool.parameters,
    });
    const englishOnly = defineTool({
      name: 'u',
      description: { en: 'Only English' },
      parameters: z.object({}),
      execute: noop,
    });
    expect(englishOnly.definition('zh').description).toBe('Only English');
  });

  it('accepts a plain JSON Schema and validates with it (defaults applied to a copy)', () => {
    const tool = defineTool({
      name: 'json_tool',
      description: 'd',
      parameters: {
        type: 'object',
        properties: { q: { type: 'string' }, page: { type: 'integer', default: 1 } },
        required: ['q'],
      },
      execute: noop,
    });
    const input = { q: 'x' };
    const result = tool.validate(input);
    expect(result).toEqual({ ok: true, value: { q: 'x', page: 1 } });
    expect(input).toEqual({ q: 'x' });
    expect(tool.validate({}).ok).toBe(false);
  });

  it('infers a JSON Schema root of type object from `properties` alone', () => {
    const tool = defineTool({
      name: 'implicit',
      description: 'd',
      parameters: { properties: { a: { type: 'string' } } },
      execute: noop,
    });
    expect(tool.parameters.type).toBe('object');
  });

  it('strips $schema and $id from a JSON Schema the model will see', () => {
    const tool = defineTool({
      name: 'meta',
      description: 'd',
      parameters: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $id: 'https://example.com/meta',
        type: 'object',
        properties: {},
      },
      execute: noop,
    });
    expect(tool.parameters).not.toHaveProperty('$schema');
    expect(tool.parameters).not.toHaveProperty('$id');
  });

  it('validates draft-07 schemas (definitions) with the draft-07 validator', () => {
    const tool = defineTool({
      name: 'draft7',
      description: 'd',
      parameters: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { point: { $ref: '#/definitions/point' } },
        definitions: {
          point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] },
        },
      },
      execute: noop,
    });
    expect(tool.validate({ point: { x: 1 } }).ok).toBe(true);
    expect(tool.validate({ point: {} }).ok).toBe(false);
  });

  it('rejects invalid names, missing execute, missing description and a bad timeout', () => {
    const base = { description: 'd', parameters: z.object({}), execute: noop };
    for (const name of ['', 'has space', 'a'.repeat(65), 'dot.name', 'ünïcode']) {
      expect(() => defineTool({ ...base, name })).toThrow(ToolRegistrationError);
    }
    expect(defineTool({ ...base, name: 'a'.repeat(64) }).name).toHaveLength(64);
    expect(() => defineTool({ ...base, name: 'x', execute: undefined as never })).toThrow(
      /no execute function/,
    );
    expect(() => defineTool({ ...base, name: 'x', description: undefined as never })).toThrow(
      /needs a description/,
    );
    expect(() =>
      defineTool({ ...base, name: 'x', description: { zh: '只有中文' } as never }),
    ).toThrow(/needs a description/);
    expect(() => defineTool({ ...base, name: 'x', timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => defineTool({ ...base, name: 'x', timeoutMs: Number.NaN })).toThrow(/timeoutMs/);
    expect(() => defineTool(null as never)).toThrow(ToolRegistrationError);
  });

  it('passes validated (transformed) arguments and the context to execute', async () => {
    let seen: unknown;
    const tool = defineTool({
      name: 'transform',
      description: 'd',
      parameters: z.object({ n: z.string().transform((text) => Number(text)) }),
      execute: (args, context) => {
        seen = { args, callId: context.callId };
        return args.n * 2;
      },
    });
    const validation = tool.validate({ n: '21' });
    expect(validation).toEqual({ ok: true, value: { n: 21 } });
    if (!validation.ok) throw new Error('unreachable');
    const result = await tool.execute(
      validation.value as { n: number },
      createToolContext({ callId: 'c9' }),
    );
    expect(result).toBe(42);
    expect(seen).toEqual({ args: { n: 21 }, callId: 'c9' });
  });

  it('keeps needsApproval, background and group from the spec', () => {
    const predicate = (args: { path: string }) => args.path.startsWith('/');
    const tool = defineTool({
      name: 'rm',
      description: 'd',
      parameters: z.object({ path: z.string() }),
      needsApproval: predicate,
      background: true,
      group: 'files',
      execute: noop,
    });
    expect(tool.needsApproval).toBe(predicate);
    expect(tool.background).toBe(true);
    expect(tool.group).toBe('files');
  });
});
