import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Toolkit } from '@quiver/core-registry';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { CallToolResultSchema, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { MCPHttpServer } from '../src/index.js';
import { MCPManager, serveMCPHttp } from '../src/index.js';
import { createTestToolkit, observed } from './fixtures/test-toolkit.js';
import { recordProgress, waitFor } from './helpers.js';

const TOKEN = 'test-token-0123456789abcdef';

async function sdkClient(url: string, token = TOKEN): Promise<Client> {
  const client = new Client({ name: 'sdk-test-client', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

const initialize = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: {
    protocolVersion: LATEST_PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: 'raw', version: '1' },
  },
};

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${TOKEN}`,
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** Read SSE events from a response until `stop` says so. */
async function readEvents(
  response: Response,
  stop: (event: { id?: string; data?: unknown }) => boolean,
): Promise<{ id?: string; data?: unknown }[]> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: { id?: string; data?: unknown }[] = [];
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return events;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const raw = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event: { id?: string; data?: unknown } = {};
      for (const line of raw.split('\n')) {
        if (line.startsWith('id:')) event.id = line.slice(3).trim();
        if (line.startsWith('data:') && line.slice(5).trim() !== '') {
          event.data = JSON.parse(line.slice(5));
        }
      }
      events.push(event);
      if (stop(event)) {
        await reader.cancel();
        return events;
      }
    }
  }
}

describe('serveMCPHttp', () => {
  let toolkit: Toolkit;
  let http: MCPHttpServer;

  beforeAll(async () => {
    toolkit = createTestToolkit(new Toolkit());
    http = await serveMCPHttp({ toolkit, bearerToken: TOKEN, name: 'quiver-http' });
  });

  afterAll(async () => {
    await http.close();
  });

  it('listens on 127.0.0.1 by default', () => {
    expect(http.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it('serves the official client with one session per client', async () => {
    const first = await sdkClient(http.url);
    const second = await sdkClient(http.url);
    try {
      expect(http.sessionCount()).toBe(2);
      const { tools } = await first.listTools();
      expect(tools.map((tool) => tool.name)).toContain('add');
      const result = (await second.callTool({
        name: 'add',
        arguments: { a: 20, b: 22 },
      })) as CallToolResult;
      expect(result.content).toEqual([{ type: 'text', text: '42' }]);

      const sent = recordProgress(first.transport!);
      const heard: Progress[] = [];
      const counted = (await first.callTool(
        { name: 'count', arguments: { n: 3 } },
        CallToolResultSchema,
        {
          onprogress: (item) => heard.push(item),
        },
      )) as CallToolResult;
      expect(counted.content).toEqual([{ type: 'text', text: '1,2,3' }]);
      // Read off the wire: the SDK may drop progress that arrives with the result (see recordProgress).
      const token = sent[0]?.progressToken;
      expect(token).toBeDefined();
      expect(sent.slice(0, 2)).toEqual([
        { progressToken: token, progress: 1, message: '1,' },
        { progressToken: token, progress: 2, message: '2,' },
      ]);
      expect(sent.slice(0, heard.length).map(({ progressToken: _, ...rest }) => rest)).toEqual(
        heard,
      );
    } finally {
      await (first.transport as StreamableHTTPClientTransport).terminateSession();
      await first.close();
      await second.close();
    }
    // DELETE ended the first session on the server.
    await waitFor(() => http.sessionCount() <= 1, 2_000, 'session end');
  });

  it('requires the bearer token', async () => {
    await expect(sdkClient(http.url, 'wrong-token-0123456789')).rejects.toThrow(
      /401|Unauthorized/i,
    );
    const response = await post(http.url, initialize, { authorization: '' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('rejects foreign Origins and Hosts (DNS rebinding)', async () => {
    const evil = await post(http.url, initialize, { origin: 'http://evil.example' });
    expect(evil.status).toBe(403);
    const local = await post(http.url, initialize, { origin: 'http://localhost:5173' });
    expect(local.status).toBe(200);
    await local.body?.cancel();

    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        http.url,
        {
          method: 'POST',
          headers: {
            host: 'evil.example',
            'content-type': 'application/json',
            authorization: `Bearer ${TOKEN}`,
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(initialize));
    });
    expect(status).toBe(403);
  });

  it('answers an unknown session with 404 and a request without one with 400', async () => {
    const unknown = await post(
      http.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      {
        'mcp-session-id': 'no-such-session',
      },
    );
    expect(unknown.status).toBe(404);
    const none = await post(http.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(none.status).toBe(400);
  });

  it('resumes a broken stream from Last-Event-ID', async () => {
    const init = await post(http.url, initialize);
    const sessionId = init.headers.get('mcp-session-id')!;
    await init.body?.cancel();
    const headers = {
      'mcp-session-id': sessionId,
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
    };
    const initialized = await post(
      http.url,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      headers,
    );
    expect(initialized.status).toBe(202);

    const call = await post(
      http.url,
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'count', arguments: { n: 12 }, _meta: { progressToken: 'p' } },
      },
      headers,
    );
    // Read up to the first progress notification, then drop the connection.
    const before = await readEvents(
      call,
      (event) =>
        (event.data as { method?: string } | undefined)?.method === 'notifications/progress',
    );
    const lastId = before[before.length - 1]!.id!;
    expect(lastId).toBeTruthy();

    // The server learns about the dropped connection asynchronously; until then it answers 409.
    let resumed!: Response;
    await waitFor(
      async () => {
        resumed = await fetch(http.url, {
          method: 'GET',
          headers: {
            accept: 'text/event-stream',
            authorization: `Bearer ${TOKEN}`,
            'last-event-id': lastId,
            ...headers,
          },
        });
        if (resumed.status !== 409) return true;
        await resumed.body?.cancel();
        return false;
      },
      5_000,
      'the server to release the broken stream',
    );
    expect(resumed.status).toBe(200);
    const after = await readEvents(
      resumed,
      (event) => (event.data as { id?: number } | undefined)?.id === 7,
    );
    const progress = after
      .map((event) => event.data as { method?: string; params?: { progress: number } } | undefined)
      .filter((data) => data?.method === 'notifications/progress')
      .map((data) => data!.params!.progress);
    // Nothing before the resume point is sent again; everything after it arrives.
    expect(progress[0]).toBe(2);
    const result = after[after.length - 1]!.data as { result: CallToolResult };
    expect(result.result.content).toEqual([{ type: 'text', text: '1,2,3,4,5,6,7,8,9,10,11,12' }]);
  });
});

describe('MCPManager against serveMCPHttp', () => {
  let toolkit: Toolkit;
  let http: MCPHttpServer;
  let manager: MCPManager;
  let patient: MCPManager;
  const changes: string[][] = [];

  beforeAll(async () => {
    toolkit = createTestToolkit(new Toolkit());
    // A page size of 2 makes the client follow cursors to see every tool.
    http = await serveMCPHttp({ toolkit, pageSize: 2 });
    manager = new MCPManager({
      servers: { q: { url: http.url, timeoutMs: 1_500 } },
      onToolsChanged: (event) => changes.push(event.tools),
    });
    const report = await manager.connect();
    expect(report.connected).toEqual(['q']);
    // Its timeout is far off: a server-side abort seen by these tests must come from the
    // cancellation the bridge sends, not from the SDK's timeout.
    patient = new MCPManager({ servers: { q: { url: http.url, timeoutMs: 600_000 } } });
    expect((await patient.connect()).connected).toEqual(['q']);
  });

  afterAll(async () => {
    await patient.close();
    await manager.close();
    await http.close();
  });

  it('lists every tool across pages', () => {
    expect(manager.status()[0]!.tools).toEqual([
      'q__add',
      'q__count',
      'q__weather',
      'q__fail',
      'q__wait_for_abort',
    ]);
  });

  it('re-registers the tools when the server sends tools/list_changed', async () => {
    toolkit.register({
      name: 'late',
      description: 'Registered after the client connected.',
      parameters: { type: 'object', properties: {} },
      execute: () => 'late result',
    });
    await http.notifyToolListChanged();
    await waitFor(() => manager.toolkit.has('q__late'), 5_000, 'q__late');
    expect(changes[changes.length - 1]).toContain('q__late');
    const response = await manager.toolkit.callToCompletion({
      id: '1',
      name: 'q__late',
      arguments: '{}',
    });
    expect(response.content).toEqual([{ type: 'text', text: 'late result' }]);
    toolkit.unregister('late');
    await http.notifyToolListChanged();
    await waitFor(() => !manager.toolkit.has('q__late'), 5_000, 'q__late removed');
  });

  it('sends notifications/cancelled on abort: the server-side tool sees its signal abort', async () => {
    const before = observed.aborted;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const response = await patient.toolkit.callToCompletion(
      { id: '2', name: 'q__wait_for_abort', arguments: '{}' },
      { signal: controller.signal },
    );
    expect(response.metadata?.error).toMatchObject({ code: 'tool_aborted' });
    await waitFor(() => observed.aborted === before + 1, 5_000, 'server-side abort');
  });

  it('sends notifications/cancelled when a streamed call is aborted', async () => {
    const before = observed.aborted;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const chunks = [];
    for await (const chunk of patient.toolkit.call(
      { id: '2s', name: 'q__wait_for_abort', arguments: '{}' },
      { signal: controller.signal },
    ))
      chunks.push(chunk);
    expect(chunks[chunks.length - 1]!.metadata?.error).toMatchObject({ code: 'tool_aborted' });
    await waitFor(() => observed.aborted === before + 1, 5_000, 'server-side abort');
  });

  it('sends notifications/cancelled when the reader stops reading a streamed call', async () => {
    const before = observed.aborted;
    const iterator = patient.toolkit
      .call({ id: '2r', name: 'q__wait_for_abort', arguments: '{}' })
      [Symbol.asyncIterator]();
    const pending = iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await iterator.return?.();
    await pending;
    await waitFor(() => observed.aborted === before + 1, 5_000, 'server-side abort');
  });

  it('sends notifications/cancelled at the timeout too', async () => {
    const before = observed.aborted;
    const response = await manager.toolkit.callToCompletion(
      { id: '3', name: 'q__wait_for_abort', arguments: '{}' },
      {},
    );
    expect(response.metadata?.error).toMatchObject({ code: 'tool_timeout', timeoutMs: 1_500 });
    await waitFor(() => observed.aborted === before + 1, 5_000, 'server-side abort');
  });

  it('applies the namesake strategy when two servers offer the same names', async () => {
    const second = await serveMCPHttp({ toolkit: createTestToolkit(new Toolkit()) });
    const servers = { one: { url: http.url }, two: { url: second.url } };
    const renaming = new MCPManager({
      servers,
      toolName: (_server, tool) => tool,
      namesake: 'rename',
    });
    const skipping = new MCPManager({
      servers,
      toolName: (_server, tool) => tool,
      namesake: 'skip',
    });
    try {
      await renaming.connect();
      const names = renaming.toolkit.list().map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['add', 'add_2', 'count', 'count_2']));
      const sum = await renaming.toolkit.callToCompletion({
        id: '4',
        name: 'add_2',
        arguments: '{"a":1,"b":2}',
      });
      expect(sum.content).toEqual([{ type: 'text', text: '3' }]);

      await skipping.connect();
      const statuses = skipping.status();
      const skipped = statuses.flatMap((status) => status.skippedTools.map((tool) => tool.name));
      expect(skipped.sort()).toEqual(['add', 'count', 'fail', 'wait_for_abort', 'weather']);
      expect(skipping.toolkit.list()).toHaveLength(5);
    } finally {
      await renaming.close();
      await skipping.close();
      await second.close();
    }
  });

  it('serves only the chosen groups', async () => {
    const grouped = await serveMCPHttp({
      toolkit: createTestToolkit(new Toolkit()),
      groups: ['extra'],
    });
    const client = new Client({ name: 'c', version: '1' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(grouped.url)));
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['hidden']);
      const result = (await client.callTool({ name: 'hidden', arguments: {} })) as CallToolResult;
      expect(result.content).toEqual([{ type: 'text', text: 'hidden' }]);
    } finally {
      await client.close();
      await grouped.close();
    }
  });
});
