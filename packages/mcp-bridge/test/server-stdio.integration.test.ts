import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ToolResponse } from '@quiver/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { MCPManager } from '../src/index.js';
import { TOOLKIT_SERVER, living, recordProgress, waitFor } from './helpers.js';

/** Our Toolkit served over stdio, driven by the official SDK client. */
describe('serveMCPStdio with the official SDK client', () => {
  let client: Client;
  let transport: StdioClientTransport;

  beforeAll(async () => {
    client = new Client({ name: 'sdk-test-client', version: '1.0.0' });
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [TOOLKIT_SERVER],
      stderr: 'pipe',
    });
    await client.connect(transport);
  });

  afterAll(async () => {
    const pid = transport.pid;
    await client.close();
    if (pid !== null) await waitFor(() => living([pid]).length === 0, 5_000, 'server exit');
  });

  it('announces the server and lists the active tools with their schemas', async () => {
    expect(client.getServerVersion()?.name).toBe('quiver-test');
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      'add',
      'count',
      'weather',
      'fail',
      'wait_for_abort',
    ]);
    const add = tools.find((tool) => tool.name === 'add')!;
    expect(add.description).toBe('Add two numbers.');
    expect(add.inputSchema).toMatchObject({ type: 'object', required: ['a', 'b'] });
    expect(add.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
  });

  it('runs a tool', async () => {
    const result = (await client.callTool({
      name: 'add',
      arguments: { a: 2, b: 40 },
    })) as CallToolResult;
    expect(result.content).toEqual([{ type: 'text', text: '42' }]);
    expect(result.isError).toBeUndefined();
  });

  it('sends streamed chunks as progress notifications and all the content in the result', async () => {
    const sent = recordProgress(transport);
    const heard: Progress[] = [];
    const result = (await client.callTool(
      { name: 'count', arguments: { n: 4 } },
      CallToolResultSchema,
      {
        onprogress: (item) => heard.push(item),
      },
    )) as CallToolResult;
    expect(result.content).toEqual([{ type: 'text', text: '1,2,3,4' }]);
    // Read off the wire: the SDK may drop progress that arrives with the result (see recordProgress).
    const token = sent[0]?.progressToken;
    expect(token).toBeDefined();
    expect(sent.slice(0, 3)).toEqual([
      { progressToken: token, progress: 1, message: '1,' },
      { progressToken: token, progress: 2, message: '2,' },
      { progressToken: token, progress: 3, message: '3,' },
    ]);
    // What onprogress heard is what was sent, less any that lost that race.
    expect(sent.slice(0, heard.length).map(({ progressToken: _, ...rest }) => rest)).toEqual(heard);
  });

  it('returns structured content for a JSON result', async () => {
    const result = (await client.callTool({
      name: 'weather',
      arguments: { city: 'Oslo' },
    })) as CallToolResult;
    expect(result.structuredContent).toEqual({ city: 'Oslo', temperature: 21 });
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual({
      city: 'Oslo',
      temperature: 21,
    });
  });

  it('reports a failing tool and invalid arguments as isError results', async () => {
    const failed = (await client.callTool({ name: 'fail', arguments: {} })) as CallToolResult;
    expect(failed.isError).toBe(true);
    expect((failed.content[0] as { text: string }).text).toContain('deliberate failure');
    const invalid = (await client.callTool({
      name: 'add',
      arguments: { a: 'x' },
    })) as CallToolResult;
    expect(invalid.isError).toBe(true);
    expect((invalid.content[0] as { text: string }).text).toMatch(/"a"|"b"/);
  });

  it('answers an unknown or hidden tool with a JSON-RPC error', async () => {
    await expect(client.callTool({ name: 'hidden', arguments: {} })).rejects.toBeInstanceOf(
      McpError,
    );
  });

  it('cancels a call the client aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await expect(
      client.callTool({ name: 'wait_for_abort', arguments: {} }, CallToolResultSchema, {
        signal: controller.signal,
      }),
    ).rejects.toThrow();
    // The server is still fine after a cancellation.
    const result = (await client.callTool({
      name: 'add',
      arguments: { a: 1, b: 1 },
    })) as CallToolResult;
    expect(result.content).toEqual([{ type: 'text', text: '2' }]);
  });
});

/** Quiver on both ends: MCPManager bridging our own stdio server. */
describe('MCPManager bridging serveMCPStdio', () => {
  it('streams the server chunks through as progress and ends every process on close', async () => {
    const manager = new MCPManager({
      servers: { quiver: { command: process.execPath, args: [TOOLKIT_SERVER] } },
    });
    try {
      await manager.connect();
      const chunks: ToolResponse[] = [];
      for await (const chunk of manager.toolkit.call({
        id: '1',
        name: 'quiver__count',
        arguments: '{"n":3}',
      })) {
        chunks.push(chunk);
      }
      const messages = chunks
        .map((chunk) => (chunk.metadata?.progress as { message?: string } | undefined)?.message)
        .filter((message) => message !== undefined);
      expect(messages.slice(0, 2)).toEqual(['1,', '2,']);
      expect(chunks[chunks.length - 1]!.content).toEqual([{ type: 'text', text: '1,2,3' }]);
    } finally {
      const pid = manager.status()[0]!.pid!;
      await manager.close();
      expect(living([pid])).toEqual([]);
    }
  });
});
