import { afterEach, describe, expect, it } from '@jest/globals';
import type { ToolResponse } from '@quiver/core';
import { MCPManager } from '../src/index.js';
import { descendantsOf } from '../src/process-tree.js';
import { EVERYTHING, living, startEverythingHttp, waitFor } from './helpers.js';
import type { HttpEverything } from './helpers.js';

/** Servers that die mid-call: a clear error on that call, a reconnection on the next. */
describe('server crashes', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('a stdio server killed mid-call fails that call clearly and is restarted on the next', async () => {
    const manager = new MCPManager({
      servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
      reconnect: { initialDelayMs: 50 },
    });
    cleanups.push(() => manager.close());
    await manager.connect();
    const firstPid = manager.status()[0]!.pid!;

    const chunks: ToolResponse[] = [];
    for await (const chunk of manager.toolkit.call({
      id: '1',
      name: 'everything__trigger-long-running-operation',
      arguments: '{"duration":10,"steps":20}',
    })) {
      chunks.push(chunk);
      // The call is running on the server: kill the server under it.
      if (chunks.length === 1) process.kill(firstPid, 'SIGKILL');
    }
    const last = chunks[chunks.length - 1]!;
    expect(last.isError).toBe(true);
    expect(last.metadata?.error).toMatchObject({
      code: 'mcp_server_disconnected',
      isRetryable: true,
      serverName: 'everything',
    });
    expect((last.content[0] as { text: string }).text).toMatch(
      /MCP server "everything" disconnected while "trigger-long-running-operation" was running/,
    );
    expect(manager.status()[0]!.state).toBe('disconnected');

    const next = await manager.toolkit.callToCompletion({
      id: '2',
      name: 'everything__echo',
      arguments: '{"message":"back"}',
    });
    expect(next.content).toEqual([{ type: 'text', text: 'Echo: back' }]);
    const status = manager.status()[0]!;
    expect(status.state).toBe('connected');
    expect(status.pid).not.toBe(firstPid);
    await manager.close();
    expect(living([firstPid, status.pid!])).toEqual([]);
  });

  it('close() also ends the processes a wrapper (a shell, npx) started', async () => {
    const manager = new MCPManager({
      servers: {
        wrapped: {
          command: '/bin/sh',
          // Two commands, so the shell cannot exec the server in its own place: it stays the parent.
          args: ['-c', `"${process.execPath}" "${EVERYTHING}" stdio; echo done >&2`],
        },
      },
    });
    await manager.connect();
    const shellPid = manager.status()[0]!.pid!;
    const children = await descendantsOf(shellPid);
    expect(children.length).toBeGreaterThanOrEqual(1);
    const echo = await manager.toolkit.callToCompletion({
      id: '1',
      name: 'wrapped__echo',
      arguments: '{"message":"x"}',
    });
    expect(echo.isError).toBeUndefined();
    await manager.close();
    expect(living([shellPid, ...children])).toEqual([]);
  });

  it('a Streamable HTTP server killed mid-call fails that call clearly and is reconnected once back', async () => {
    let server: HttpEverything = await startEverythingHttp('streamableHttp');
    cleanups.push(() => server.stop());
    const manager = new MCPManager({
      servers: { remote: { url: `http://127.0.0.1:${server.port}/mcp` } },
      reconnect: { initialDelayMs: 100, maxAttempts: 3 },
    });
    cleanups.push(() => manager.close());
    const report = await manager.connect();
    expect(report.connected).toEqual(['remote']);
    expect(manager.status()[0]!.transport).toBe('streamable-http');

    const chunks: ToolResponse[] = [];
    for await (const chunk of manager.toolkit.call({
      id: '1',
      name: 'remote__trigger-long-running-operation',
      arguments: '{"duration":10,"steps":20}',
    })) {
      chunks.push(chunk);
      if (chunks.length === 1) await server.stop();
    }
    const last = chunks[chunks.length - 1]!;
    expect(last.isError).toBe(true);
    expect(last.metadata?.error).toMatchObject({ code: 'mcp_server_disconnected' });
    await waitFor(() => manager.status()[0]!.state === 'disconnected', 5_000, 'disconnected');

    // While the server is down, a call fails fast with a connection error (after its retries).
    const down = await manager.toolkit.callToCompletion({
      id: '2',
      name: 'remote__echo',
      arguments: '{"message":"anyone?"}',
    });
    expect(down.isError).toBe(true);
    expect(down.metadata?.error).toMatchObject({ code: 'mcp_connection_failed' });

    server = await startEverythingHttp('streamableHttp', server.port);
    const back = await manager.toolkit.callToCompletion({
      id: '3',
      name: 'remote__echo',
      arguments: '{"message":"back"}',
    });
    expect(back.content).toEqual([{ type: 'text', text: 'Echo: back' }]);
  });
});
