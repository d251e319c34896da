import { describe, expect, it } from '@jest/globals';
import { ToolRegistrationError } from '@quiver/core';
import { z } from 'zod';
import { Toolkit, defineTool } from '../src/index.js';
import { collect, errorOf, expectWellFormed, finalChunk, textOf } from './helpers.js';

const search = defineTool({
  name: 'search',
  description: { en: 'Search the web', zh: '搜索网页' },
  parameters: z.object({
    query: z.string(),
    apiKey: z.string().describe('Secret key'),
    region: z.enum(['us', 'eu']),
    limit: z.number().optional(),
  }),
  execute: (args) => ({ args }),
});

describe('registration options', () => {
  it('presetArgs are removed from the model schema (and required) and injected at call, winning over the model', async () => {
    const toolkit = new Toolkit();
    const registered = toolkit.register(search, {
      presetArgs: { apiKey: 'secret', region: 'eu' },
    })!;
    expect(Object.keys(registered.modelParameters.properties ?? {})).toEqual(['query', 'limit']);
    expect(registered.modelParameters.required).toEqual(['query']);
    const [schema] = toolkit.getJsonSchemas();
    expect(JSON.stringify(schema)).not.toContain('apiKey');
    // The tool's own schema is untouched: other registrations still see every field.
    expect(Object.keys(search.parameters.properties ?? {})).toContain('apiKey');

    const response = await toolkit.callToCompletion({
      id: 'c',
      name: 'search',
      arguments: '{"query":"q","apiKey":"stolen"}',
    });
    expect(response.content).toEqual([
      { type: 'json', value: { args: { query: 'q', apiKey: 'secret', region: 'eu' } } },
    ]);
  });

  it('presetArgs are still validated: a bad preset is an argument error at call', async () => {
    const toolkit = new Toolkit();
    toolkit.register(search, { presetArgs: { apiKey: 'k', region: 'mars' } });
    const response = finalChunk(
      await collect(toolkit.call({ id: 'c', name: 'search', arguments: '{"query":"q"}' })),
    );
    expect(errorOf(response).code).toBe('tool_argument_invalid');
    expect(textOf(response)).toContain('"region"');
  });

  it('presetArgs are copied at registration: changing the object later changes nothing', async () => {
    const toolkit = new Toolkit();
    const presets = { apiKey: 'first', region: 'us' };
    toolkit.register(search, { presetArgs: presets });
    presets.apiKey = 'second';
    const response = await toolkit.callToCompletion({
      id: 'c',
      name: 'search',
      arguments: '{"query":"q"}',
    });
    expect(response.content[0]).toEqual({
      type: 'json',
      value: { args: { query: 'q', apiKey: 'first', region: 'us' } },
    });
  });

  it('name and description overrides change what the model sees and what it calls', async () => {
    const toolkit = new Toolkit();
    toolkit.register(search, {
      name: 'web_search',
      description: { en: 'Find pages', zh: '查找网页' },
      presetArgs: { apiKey: 'k', region: 'us' },
    });
    expect(toolkit.has('search')).toBe(false);
    const schemas = toolkit.getJsonSchemas({ language: 'zh' });
    expect(schemas.map((tool) => [tool.function.name, tool.function.description])).toEqual([
      ['web_search', '查找网页'],
    ]);
    const response = await toolkit.callToCompletion({
      id: 'c',
      name: 'web_search',
      arguments: '{"query":"q"}',
    });
    expect(response.isError).toBeUndefined();
  });

  it('rejects an invalid override name and an invalid timeout', () => {
    const toolkit = new Toolkit();
    expect(() => toolkit.register(search, { name: 'has space' })).toThrow(ToolRegistrationError);
    expect(() => toolkit.register(search, { timeoutMs: -1 })).toThrow(/timeoutMs/);
    expect(toolkit.list()).toEqual([]);
  });

  it('postprocess transforms each chunk and sees the call and the validated arguments', async () => {
    const toolkit = new Toolkit();
    const seen: unknown[] = [];
    toolkit.register(
      defineTool({
        name: 'lines',
        description: 'd',
        parameters: z.object({ count: z.number() }),
        *execute({ count }) {
          for (let index = 1; index < count; index++) yield `line ${index}\n`;
          return `line ${count}\n`;
        },
      }),
      {
        postprocess: (chunk, call) => {
          seen.push({ id: call.toolCall.id, arguments: call.arguments });
          return {
            ...chunk,
            content: chunk.content.map((block) =>
              block.type === 'text' ? { ...block, text: `> ${block.text}` } : block,
            ),
          };
        },
      },
    );
    const chunks = await collect(
      toolkit.call({ id: 'p1', name: 'lines', arguments: '{"count":3}' }),
    );
    expectWellFormed(chunks);
    expect(textOf(chunks)).toBe('> line 1\n> line 2\n> line 3\n');
    expect(seen).toEqual([
      { id: 'p1', arguments: { count: 3 } },
      { id: 'p1', arguments: { count: 3 } },
      { id: 'p1', arguments: { count: 3 } },
    ]);
  });

  it('a postprocess hook that throws becomes an error response', async () => {
    const toolkit = new Toolkit();
    toolkit.register(
      defineTool({ name: 'v', description: 'd', parameters: z.object({}), execute: () => 'value' }),
      {
        postprocess: () => {
          throw new Error('hook broke');
        },
      },
    );
    const response = finalChunk(await collect(toolkit.call({ id: 'c', name: 'v', arguments: '' })));
    expect(textOf(response)).toMatch(/hook broke/);
    expect(response.isError).toBe(true);
  });

  it('registers a spec directly (defineTool is applied)', async () => {
    const toolkit = new Toolkit();
    const registered = toolkit.register({
      name: 'inline',
      description: 'd',
      parameters: z.object({}),
      execute: () => 'inline ok',
    });
    expect(registered?.tool.name).toBe('inline');
    expect(
      textOf(await toolkit.callToCompletion({ id: 'c', name: 'inline', arguments: '{}' })),
    ).toBe('inline ok');
  });

  it('unregister removes a tool; list and has follow', () => {
    const toolkit = new Toolkit();
    toolkit.register(search);
    toolkit.register(search, { name: 'search2' });
    expect(toolkit.list().map((tool) => tool.name)).toEqual(['search', 'search2']);
    expect(toolkit.unregister('search')).toBe(true);
    expect(toolkit.unregister('search')).toBe(false);
    expect(toolkit.has('search')).toBe(false);
    expect(toolkit.get('search2')?.tool).toBe(search);
  });
});

describe('namesake strategies (duplicate registration)', () => {
  const first = defineTool({
    name: 'dup',
    description: 'first',
    parameters: z.object({}),
    execute: () => 'first',
  });
  const second = defineTool({
    name: 'dup',
    description: 'second',
    parameters: z.object({}),
    execute: () => 'second',
  });
  const run = async (toolkit: Toolkit, name = 'dup') =>
    textOf(await toolkit.callToCompletion({ id: 'c', name, arguments: '{}' }));

  it('raise (the default): throws ToolRegistrationError and keeps the first', async () => {
    const toolkit = new Toolkit();
    toolkit.register(first);
    let thrown: unknown;
    try {
      toolkit.register(second);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ToolRegistrationError);
    expect((thrown as ToolRegistrationError).message).toMatch(/already registered.*namesake/);
    expect(await run(toolkit)).toBe('first');
  });

  it('override: replaces the first', async () => {
    const toolkit = new Toolkit();
    toolkit.register(first);
    expect(toolkit.register(second, { namesake: 'override' })?.description).toBe('second');
    expect(await run(toolkit)).toBe('second');
    expect(toolkit.list()).toHaveLength(1);
  });

  it('skip: keeps the first and returns undefined', async () => {
    const toolkit = new Toolkit();
    toolkit.register(first);
    expect(toolkit.register(second, { namesake: 'skip' })).toBeUndefined();
    expect(await run(toolkit)).toBe('first');
  });

  it('rename: registers under the next free suffix', async () => {
    const toolkit = new Toolkit();
    toolkit.register(first);
    expect(toolkit.register(second, { namesake: 'rename' })?.name).toBe('dup_2');
    expect(toolkit.register(second, { namesake: 'rename' })?.name).toBe('dup_3');
    expect(await run(toolkit)).toBe('first');
    expect(await run(toolkit, 'dup_2')).toBe('second');
  });

  it('rename keeps 64-character names valid and distinct', () => {
    const long = 'x'.repeat(64);
    const toolkit = new Toolkit();
    toolkit.register(
      defineTool({ name: long, description: 'd', parameters: z.object({}), execute: () => 1 }),
    );
    const renamed = toolkit.register(
      defineTool({ name: long, description: 'd', parameters: z.object({}), execute: () => 2 }),
      { namesake: 'rename' },
    )!;
    const again = toolkit.register(
      defineTool({ name: long, description: 'd', parameters: z.object({}), execute: () => 3 }),
      { namesake: 'rename' },
    )!;
    for (const name of [renamed.name, again.name]) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(new Set([long, renamed.name, again.name]).size).toBe(3);
    expect(toolkit.list()).toHaveLength(3);
  });

  it('the toolkit-wide default applies when the registration names none', () => {
    const toolkit = new Toolkit({ namesake: 'skip' });
    toolkit.register(first);
    expect(toolkit.register(second)).toBeUndefined();
  });

  it('an unknown strategy is a registration error', () => {
    const toolkit = new Toolkit();
    toolkit.register(first);
    expect(() => toolkit.register(second, { namesake: 'merge' as never })).toThrow(
      /Unknown namesake strategy/,
    );
  });
});
