import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ToolResponse } from '@quiver/core';
import { responseText } from '@quiver/core';
import { Toolkit } from '@quiver/core-registry';
import { MCPManager } from '../src/index.js';
import type { HttpEverything } from './helpers.js';
import { FILESYSTEM, living, startEverythingHttp } from './helpers.js';

describe('MCPManager with server-everything over Streamable HTTP and legacy SSE', () => {
  let streamable: HttpEverything;
  let sse: HttpEverything;
  let manager: MCPManager;

  beforeAll(async () => {
    [streamable, sse] = await Promise.all([
      startEverythingHttp('streamableHttp'),
      startEverythingHttp('sse'),
    ]);
    manager = new MCPManager({
      servers: {
        http: { url: `http://127.0.0.1:${streamable.port}/mcp` },
        // No type: Streamable HTTP is tried first, and the 4xx makes the manager fall back to SSE.
        legacy: { url: `http://127.0.0.1:${sse.port}/sse` },
      },
    });
    const report = await manager.connect();
    expect(report.failed).toEqual([]);
  });

  afterAll(async () => {
    await manager?.close();
    await Promise.all([streamable?.stop(), sse?.stop()]);
  });

  it('uses Streamable HTTP where offered and falls back to SSE where not', () => {
    const transports = Object.fromEntries(
      manager.status().map((item) => [item.name, item.transport]),
    );
    expect(transports).toEqual({ http: 'streamable-http', legacy: 'sse' });
  });

  it('calls tools over both', async () => {
    for (const server of ['http', 'legacy']) {
      const response = await manager.toolkit.callToCompletion({
        id: server,
        name: `${server}__get-sum`,
        arguments: '{"a":2,"b":40}',
      });
      expect(responseText(response)).toContain('42');
    }
  });

  it('streams progress over Streamable HTTP', async () => {
    const chunks: ToolResponse[] = [];
    for await (const chunk of manager.toolkit.call({
      id: 'p',
      name: 'http__trigger-long-running-operation',
      arguments: '{"duration":0.4,"steps":2}',
    })) {
      chunks.push(chunk);
    }
    expect(chunks[0]!.metadata?.progress).toEqual({ progress: 1, total: 2 });
    expect(responseText(chunks[chunks.length - 1]!)).toContain('completed');
  });

  it('cancels a call when the caller aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 200);
    const response = await manager.toolkit.callToCompletion(
      {
        id: 'c',
        name: 'http__trigger-long-running-operation',
        arguments: '{"duration":20,"steps":4}',
      },
      { signal: controller.signal },
    );
    expect(response.isError).toBe(true);
    expect(response.metadata?.error).toMatchObject({ code: 'tool_aborted' });
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe('MCPManager with server-filesystem over stdio on a temp dir', () => {
  let dir: string;
  let manager: MCPManager;
  let toolkit: Toolkit;

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'mcp-fs-')));
    await writeFile(join(dir, 'hello.txt'), 'Hello from a real file.\n');
    toolkit = new Toolkit();
    manager = new MCPManager({
      toolkit,
      servers: { fs: { command: process.execPath, args: [FILESYSTEM, dir] } },
    });
    const report = await manager.connect();
    expect(report.connected).toEqual(['fs']);
  });

  afterAll(async () => {
    const pid = manager.status()[0]?.pid;
    await manager.close();
    if (pid !== undefined) expect(living([pid])).toEqual([]);
    await rm(dir, { recursive: true, force: true });
  });

  it('lists, reads and writes files inside the allowed directory', async () => {
    const listing = await toolkit.callToCompletion({
      id: '1',
      name: 'fs__list_directory',
      arguments: JSON.stringify({ path: dir }),
    });
    expect(responseText(listing)).toContain('hello.txt');

    const read = await toolkit.callToCompletion({
      id: '2',
      name: 'fs__read_text_file',
      arguments: JSON.stringify({ path: join(dir, 'hello.txt') }),
    });
    expect(responseText(read)).toContain('Hello from a real file.');

    const write = await toolkit.callToCompletion({
      id: '3',
      name: 'fs__write_file',
      arguments: JSON.stringify({ path: join(dir, 'new.txt'), content: '写入成功' }),
    });
    expect(write.isError).toBeUndefined();
    expect(await readFile(join(dir, 'new.txt'), 'utf8')).toBe('写入成功');
  });

  it('turns the server isError result into an error response', async () => {
    const response = await toolkit.callToCompletion({
      id: '4',
      name: 'fs__read_text_file',
      arguments: JSON.stringify({ path: '/etc/passwd' }),
    });
    expect(response.isError).toBe(true);
    expect(response.metadata?.error).toMatchObject({ code: 'mcp_tool_error', serverName: 'fs' });
    expect(responseText(response)).toMatch(/denied|outside|not allowed/i);
  });

  it('marks tools from annotations: read-only tools have no side effects', () => {
    expect(toolkit.get('fs__read_text_file')!.tool.flags.sideEffects).toBe(false);
    expect(toolkit.get('fs__write_file')!.tool.flags.sideEffects).toBe(true);
  });
});
