import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ToolResponse } from '@quiver/core';
import { Toolkit } from '@quiver/core-registry';
import { MCPManager } from '../src/index.js';
import { EVERYTHING, living } from './helpers.js';

/** The real reference server of the MCP project, over stdio. */
describe('MCPManager with server-everything over stdio', () => {
  let manager: MCPManager;
  let toolkit: Toolkit;
  const pids: number[] = [];

  beforeAll(async () => {
    toolkit = new Toolkit();
    manager = new MCPManager({
      toolkit,
      servers: {
        mcpServers: {
          everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
          missing: { command: '/nonexistent/mcp-server' },
          // Starts but never answers the initialize request.
          silent: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] },
          off: { command: 'whatever', disabled: true },
        },
      },
      connectTimeoutMs: 4_000,
      groups: true,
      resourcesAsTools: true,
      promptsAsTools: true,
    });
  });

  afterAll(async () => {
    await manager.close();
  });

  it('connects in parallel and reports the servers that fail without blocking the others', async () => {
    const report = await manager.connect();
    expect(report.connected).toEqual(['everything']);
    const failed = Object.fromEntries(report.failed.map((item) => [item.name, item.error]));
    expect(Object.keys(failed).sort()).toEqual(['missing', 'silent']);
    expect(failed.missing!.message).toMatch(/was not found or is not executable/);
    expect((failed.missing as unknown as { code: string }).code).toBe('mcp_connection_failed');
    expect(failed.silent!.message).toMatch(/did not answer the initialize request within 4000 ms/);
    const status = manager.status();
    expect(status.map((item) => item.name).sort()).toEqual(['everything', 'missing', 'silent']);
    const everything = status.find((item) => item.name === 'everything')!;
    expect(everything).toMatchObject({ state: 'connected', transport: 'stdio' });
    expect(everything.pid).toBeGreaterThan(0);
    pids.push(everything.pid!);
  });

  it('registers the tools as server__tool in a group named after the server', () => {
    const names = toolkit.list().map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'everything__echo',
        'everything__get-sum',
        'everything__trigger-long-running-operation',
        'everything__read_resource',
        'everything__get_prompt',
      ]),
    );
    expect(toolkit.get('everything__echo')!.group).toBe('everything');
    expect(toolkit.groups().find((group) => group.name === 'everything')?.active).toBe(true);
    // The MCP inputSchema is the schema the model sees, and arguments are validated against it.
    expect(toolkit.get('everything__get-sum')!.modelParameters.properties).toHaveProperty('a');
  });

  it('calls a tool', async () => {
    const response = await toolkit.callToCompletion({
      id: '1',
      name: 'everything__echo',
      arguments: '{"message":"hello MCP"}',
    });
    expect(response.isError).toBeUndefined();
    expect(response.content).toEqual([{ type: 'text', text: 'Echo: hello MCP' }]);
  });

  it('validates arguments against the server schema before calling', async () => {
    const response = await toolkit.callToCompletion({
      id: '2',
      name: 'everything__get-sum',
      arguments: '{"a":"one"}',
    });
    expect(response.isError).toBe(true);
    expect(response.metadata?.error).toMatchObject({ code: 'tool_argument_invalid' });
  });

  it('maps images, resource links, embedded resources and structured content', async () => {
    const image = await toolkit.callToCompletion({
      id: '3',
      name: 'everything__get-tiny-image',
      arguments: '{}',
    });
    const imageBlock = image.content.find((block) => block.type === 'image');
    expect(imageBlock).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(
      Buffer.from((imageBlock as { data: string }).data, 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');

    const links = await toolkit.callToCompletion({
      id: '4',
      name: 'everything__get-resource-links',
      arguments: '{"count":2}',
    });
    const files = links.content.filter((block) => block.type === 'file');
    expect(files).toHaveLength(2);
    expect(files[0]).toMatchObject({ type: 'file', url: expect.stringMatching(/^demo:\/\//) });

    const reference = await toolkit.callToCompletion({
      id: '5',
      name: 'everything__get-resource-reference',
      arguments: '{"resourceType":"Text","resourceId":2}',
    });
    expect(reference.metadata?.mcpResources).toEqual([
      expect.objectContaining({ embedded: true, uri: expect.stringContaining('2') }),
    ]);

    const structured = await toolkit.callToCompletion({
      id: '6',
      name: 'everything__get-structured-content',
      arguments: '{"location":"New York"}',
    });
    const json = structured.content.find((block) => block.type === 'json');
    expect(json).toMatchObject({ type: 'json', value: { temperature: expect.any(Number) } });
  });

  it('streams progress notifications as partial responses before the result', async () => {
    const chunks: ToolResponse[] = [];
    for await (const chunk of toolkit.call({
      id: '7',
      name: 'everything__trigger-long-running-operation',
      arguments: '{"duration":0.6,"steps":3}',
    })) {
      chunks.push(chunk);
    }
    const progress = chunks.filter((chunk) => chunk.metadata?.progress !== undefined);
    // The SDK dispatches notifications a microtask later than responses, so the last progress
    // notification may lose the race against the result; the earlier ones always arrive.
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.slice(0, 2).map((chunk) => chunk.metadata!.progress)).toEqual([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
    ]);
    expect(progress.every((chunk) => chunk.content.length === 0)).toBe(true);
    expect(progress.every((chunk) => chunk.isLast !== true)).toBe(true);
    const last = chunks[chunks.length - 1]!;
    expect(last.isLast).toBe(true);
    expect(last.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringContaining('completed'),
    });
  });

  it('callToCompletion does not ask for progress nobody would see, and still gets the result', async () => {
    const merged = await toolkit.callToCompletion({
      id: '7b',
      name: 'everything__trigger-long-running-operation',
      arguments: '{"duration":0.3,"steps":3}',
    });
    expect(merged.isError).toBeUndefined();
    expect(merged.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringContaining('completed'),
    });
    // The server sends progress only for a request that carries a progress token.
    expect(merged.metadata?.progress).toBeUndefined();
  });

  it('stops a call at its timeout and reports it as a timeout', async () => {
    const timed = new Toolkit();
    const short = new MCPManager({
      toolkit: timed,
      servers: {
        slow: { command: process.execPath, args: [EVERYTHING, 'stdio'], timeoutMs: 300 },
      },
    });
    try {
      await short.connect();
      pids.push(short.status()[0]!.pid!);
      const response = await timed.callToCompletion({
        id: '8',
        name: 'slow__trigger-long-running-operation',
        arguments: '{"duration":5,"steps":5}',
      });
      expect(response.isError).toBe(true);
      expect(response.metadata?.error).toMatchObject({ code: 'tool_timeout' });
      // The connection survives a timed-out call.
      const echo = await timed.callToCompletion({
        id: '9',
        name: 'slow__echo',
        arguments: '{"message":"still here"}',
      });
      expect(echo.content).toEqual([{ type: 'text', text: 'Echo: still here' }]);
    } finally {
      await short.close();
    }
  });

  it('offers resources and prompts as tools', async () => {
    const list = await toolkit.callToCompletion({
      id: '10',
      name: 'everything__list_resources',
      arguments: '{}',
    });
    const resources = (list.content[0] as { value: { resources: { uri: string }[] } }).value
      .resources;
    expect(resources.length).toBeGreaterThan(0);
    const read = await toolkit.callToCompletion({
      id: '11',
      name: 'everything__read_resource',
      arguments: JSON.stringify({ uri: resources[0]!.uri }),
    });
    expect(read.isError).toBeUndefined();
    expect(read.content.length).toBeGreaterThan(0);

    const prompts = await toolkit.callToCompletion({
      id: '12',
      name: 'everything__list_prompts',
      arguments: '{}',
    });
    const names = (
      prompts.content[0] as { value: { prompts: { name: string }[] } }
    ).value.prompts.map((prompt) => prompt.name);
    expect(names.length).toBeGreaterThan(0);
    const simple = names.find((name) => /simple/i.test(name)) ?? names[0]!;
    const prompt = await toolkit.callToCompletion({
      id: '13',
      name: 'everything__get_prompt',
      arguments: JSON.stringify({ name: simple }),
    });
    expect(prompt.isError).toBeUndefined();
    expect(prompt.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringMatching(/^user: /),
    });
  });

  it('close() ends every server process and removes the tools', async () => {
    await manager.close();
    expect(toolkit.list().some((tool) => tool.name.startsWith('everything__'))).toBe(false);
    expect(living(pids)).toEqual([]);
    expect(
      manager.status().every((item) => item.state === 'closed' || item.state === 'failed'),
    ).toBe(true);
  });
});
