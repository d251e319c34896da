import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { ConfigurationError } from '@quiver/core';
import { loadMCPServersConfig, parseMCPServersConfig } from '../src/index.js';

describe('parseMCPServersConfig', () => {
  it('accepts the common mcpServers shape with stdio and remote entries', () => {
    const servers = parseMCPServersConfig({
      mcpServers: {
        fs: { command: 'npx', args: ['-y', 'pkg', '/tmp'], env: { A: '1' }, cwd: '/tmp' },
        remote: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer x' } },
        legacy: { type: 'sse', url: 'http://127.0.0.1:9/sse' },
      },
    });
    expect(Object.keys(servers)).toEqual(['fs', 'remote', 'legacy']);
    expect(servers.fs).toMatchObject({ command: 'npx', args: ['-y', 'pkg', '/tmp'], cwd: '/tmp' });
    expect(servers.legacy).toMatchObject({ type: 'sse' });
  });

  it('accepts the bare map too', () => {
    expect(parseMCPServersConfig({ a: { command: 'node' } })).toEqual({ a: { command: 'node' } });
  });

  it('names every wrong entry in one error', () => {
    let error: unknown;
    try {
      parseMCPServersConfig({
        mcpServers: {
          nothing: {},
          badUrl: { url: 'ftp://example.com' },
          'bad name!': { command: 'x' },
          badArgs: { command: 'x', args: 'not-an-array' },
        },
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    const message = (error as Error).message;
    expect(message).toContain('"nothing": give either "command"');
    expect(message).toContain('"badUrl".url');
    expect(message).toContain('"bad name!"');
    expect(message).toContain('"badArgs".args');
  });

  it('rejects a non-object', () => {
    expect(() => parseMCPServersConfig([])).toThrow(ConfigurationError);
  });
});

describe('loadMCPServersConfig', () => {
  it('reads a file and reports bad JSON as a configuration error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcp-config-'));
    try {
      const good = join(dir, 'good.json');
      await writeFile(good, JSON.stringify({ mcpServers: { a: { command: 'node' } } }));
      expect(await loadMCPServersConfig(good)).toEqual({ a: { command: 'node' } });
      const bad = join(dir, 'bad.json');
      await writeFile(bad, '{ not json');
      await expect(loadMCPServersConfig(bad)).rejects.toThrow(/not valid JSON/);
      await expect(loadMCPServersConfig(join(dir, 'missing.json'))).rejects.toThrow(/Cannot read/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
