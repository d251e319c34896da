import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConfigurationError, ToolRegistrationError } from '@quiver/core';
import { z } from 'zod';
import type { ToolFactory } from '../src/index.js';
import {
  Toolkit,
  ToolRegistry,
  defaultRegistry,
  defineTool,
  getTool,
  registerTool,
} from '../src/index.js';
import { textOf } from './helpers.js';

/** A factory like a real web search tool's: it needs an endpoint and refuses to start without one. */
const searchFactory: ToolFactory<{ endpoint?: string; maxResults?: number }> = {
  name: 'web_search',
  create(config) {
    if (typeof config.endpoint !== 'string') {
      throw new ConfigurationError(
        'web_search needs an endpoint: set tools.web_search.endpoint in the tool config file.',
      );
    }
    const endpoint = config.endpoint;
    const maxResults = config.maxResults ?? 5;
    return defineTool({
      name: 'web_search',
      description: 'Search the web',
      parameters: z.object({ query: z.string() }),
      execute: ({ query }) => `${endpoint}?q=${query}&n=${maxResults}`,
    });
  },
};

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'quiver-registry-'));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function configFile(name: string, content: string): Promise<string> {
  const path = join(directory, name);
  await writeFile(path, content);
  return path;
}

describe('ToolRegistry', () => {
  it('returns a registered tool by name, and builds configured instances from a factory', async () => {
    const registry = new ToolRegistry();
    const ping = defineTool({
      name: 'ping',
      description: 'd',
      parameters: z.object({}),
      execute: () => 'pong',
    });
    registry.register(ping);
    registry.register(searchFactory);
    expect(registry.names()).toEqual(['ping', 'web_search']);
    expect(registry.getTool('ping')).toBe(ping);

    const a = registry.getTool('web_search', { endpoint: 'https://a.example' });
    const b = registry.getTool('web_search', { endpoint: 'https://b.example', maxResults: 2 });
    expect(a).not.toBe(b);
    const toolkit = new Toolkit();
    toolkit.register(b);
    expect(
      textOf(
        await toolkit.callToCompletion({
          id: 'c',
          name: 'web_search',
          arguments: '{"query":"cats"}',
        }),
      ),
    ).toBe('https://b.example?q=cats&n=2');
  });

  it('loads per-tool config from a JSON file ({"tools": {...}} or a bare map)', async () => {
    for (const content of [
      { tools: { web_search: { endpoint: 'https://file.example', maxResults: 7 } } },
      { web_search: { endpoint: 'https://file.example', maxResults: 7 } },
    ]) {
      const registry = new ToolRegistry();
      registry.register(searchFactory);
      const loaded = await registry.loadConfig(
        await configFile('tools.json', JSON.stringify(content)),
      );
      expect(loaded).toEqual({ web_search: { endpoint: 'https://file.example', maxResults: 7 } });
      const tool = registry.getTool('web_search');
      expect(await tool.execute({ query: 'q' }, undefined as never)).toBe(
        'https://file.example?q=q&n=7',
      );
      // An explicit config wins over the file.
      expect(
        await registry
          .getTool('web_search', { endpoint: 'https://explicit.example' })
          .execute({ query: 'q' }, undefined as never),
      ).toBe('https://explicit.example?q=q&n=5');
    }
  });

  it('a factory that rejects its config gives a ConfigurationError that says what to set', () => {
    const registry = new ToolRegistry();
    registry.register(searchFactory);
    expect(() => registry.getTool('web_search')).toThrow(ConfigurationError);
    expect(() => registry.getTool('web_search')).toThrow(/tools\.web_search\.endpoint/);
  });

  it('a factory that throws something else, or returns a non-tool, is wrapped in a ConfigurationError', () => {
    const registry = new ToolRegistry();
    registry.register({
      name: 'broken',
      create: () => {
        throw new TypeError('bad');
      },
    });
    registry.register({ name: 'liar', create: () => ({ name: 'liar' }) as never });
    expect(() => registry.getTool('broken')).toThrow(/Could not create tool "broken": bad/);
    expect(() => registry.getTool('liar')).toThrow(/did not return a tool/);
  });

  it('an unknown name lists what is registered', () => {
    const registry = new ToolRegistry();
    registry.register(searchFactory);
    expect(() => registry.getTool('nope')).toThrow(/No tool named "nope".*Registered: web_search/);
  });

  it('refuses a duplicate unless override is asked for, and anything that is not a tool or factory', () => {
    const registry = new ToolRegistry();
    registry.register(searchFactory);
    expect(() => registry.register(searchFactory)).toThrow(ToolRegistrationError);
    const replacement = defineTool({
      name: 'web_search',
      description: 'd',
      parameters: z.object({}),
      execute: () => 'replaced',
    });
    registry.register(replacement, { override: true });
    expect(registry.getTool('web_search')).toBe(replacement);
    expect(() => registry.register({ name: 'x' } as never)).toThrow(/defineTool or a factory/);
  });

  it.each([
    ['a missing file', null, /Cannot read the tool config file/],
    ['invalid JSON', '{"tools": ', /not valid JSON/],
    ['a non-object entry', '{"tools": {"web_search": 3}}', /must map tool names to objects/],
    ['an array', '[1, 2]', /must map tool names to objects/],
  ])('loadConfig rejects %s with a ConfigurationError', async (_label, content, message) => {
    const registry = new ToolRegistry();
    const path =
      content === null
        ? join(directory, 'does-not-exist.json')
        : await configFile('bad.json', content);
    await expect(registry.loadConfig(path)).rejects.toThrow(ConfigurationError);
    await expect(registry.loadConfig(path)).rejects.toThrow(message);
  });
});

describe('the default registry', () => {
  it('registerTool and getTool work on the process-wide registry', async () => {
    registerTool(searchFactory);
    expect(defaultRegistry.has('web_search')).toBe(true);
    const tool = getTool('web_search', { endpoint: 'https://default.example' });
    expect(await tool.execute({ query: 'x' }, undefined as never)).toBe(
      'https://default.example?q=x&n=5',
    );
    expect(() => registerTool(searchFactory)).toThrow(ToolRegistrationError);
    registerTool(searchFactory, { override: true });
  });
});
