import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createQuiverServices } from '../src/index.js';
import type { ServerServices } from '../src/index.js';
import { exampleToolkit, startTestServer } from './helpers.js';

const fixtures = join(__dirname, 'fixtures');
let server: Awaited<ReturnType<typeof startTestServer>>;
let services: ServerServices;
let site: ReturnType<typeof createServer>;
let siteUrl: string;

beforeAll(async () => {
  // A local web site the page cache fetches from (allowed explicitly: it is a private address).
  site = createServer((request, response) => {
    if (request.url === '/owls') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(
        '<html><head><title>Owls at night</title></head><body><main><h1>Owls</h1><p>Barn owls hunt voles at night with silent flight feathers.</p></main></body></html>',
      );
    } else {
      response.writeHead(404);
      response.end('missing');
    }
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  services = await createQuiverServices({
    toolkit: exampleToolkit(),
    unavailableReason: 'no model in this test: set OPENAI_API_KEY',
    dataDir: mkdtempSync(join(tmpdir(), 'quiver-services-')),
    allowHosts: ['127.0.0.1'],
  });
  server = await startTestServer(services);
});
afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => site?.close(resolve));
});

describe('MCP endpoint at /mcp', () => {
  it('serves the toolkit to an MCP client over Streamable HTTP', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`));
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['calculator', 'countdown']),
    );
    const result = (await client.callTool({
      name: 'calculator',
      arguments: { expression: '6 * 7' },
    })) as { content: { type: string; text: string }[]; isError?: boolean };
    expect(result.isError).toBeFalsy();
    expect(result.content[0]!.text).toBe(String(6 * 7));
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    await client.close();
    // The session is gone after DELETE.
    const after = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(after.status).toBe(404);
  });

  it('answers a request without a session that is not initialize with 400', async () => {
    const response = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
  });
});

describe('knowledge bases at /v1/kb', () => {
  it('indexes real documents and finds passages with their sources', async () => {
    const add = await fetch(`${server.url}/v1/kb/docs/documents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        paths: [
          join(fixtures, 'readability-README.md'),
          join(fixtures, 'tables.docx'),
          '/nonexistent.pdf',
        ],
      }),
    });
    expect(add.status).toBe(200);
    const report = (await add.json()) as {
      indexed: string[];
      failed: { path: string; reason: string }[];
    };
    expect(report.indexed).toHaveLength(2);
    expect(report.failed.map((failure) => failure.path)).toEqual(['/nonexistent.pdf']);
    const search = (await (
      await fetch(
        `${server.url}/v1/kb/docs/search?q=${encodeURIComponent('install readability from npm')}`,
      )
    ).json()) as { chunks: { source: string; text: string }[] };
    expect(search.chunks[0]!.source).toBe(join(fixtures, 'readability-README.md'));
    expect(search.chunks[0]!.text).toMatch(/npm install/);
    const table = (await (
      await fetch(`${server.url}/v1/kb/docs/search?q=${encodeURIComponent('top left')}`)
    ).json()) as { chunks: { source: string }[] };
    expect(table.chunks[0]!.source).toBe(join(fixtures, 'tables.docx'));
  });

  it('refuses a bad knowledge-base name with 400', async () => {
    const response = await fetch(`${server.url}/v1/kb/${encodeURIComponent('../etc')}/search?q=x`);
    expect(response.status).toBe(400);
  });
});

describe('page cache through the web extractor', () => {
  it('fetches a page, indexes it in the pages knowledge base, and marks failures', async () => {
    const added = (await (
      await fetch(`${server.url}/v1/pages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${siteUrl}/owls` }),
      })
    ).json()) as { page: { id: string } };
    const missing = (await (
      await fetch(`${server.url}/v1/pages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${siteUrl}/nowhere` }),
      })
    ).json()) as { page: { id: string } };
    await services.pages!.settled(added.page.id);
    await services.pages!.settled(missing.page.id);
    const page = services.pages!.get(added.page.id)!;
    expect(page.status).toBe('ready');
    expect(page.title).toBe('Owls at night');
    const failed = services.pages!.get(missing.page.id)!;
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/404/);
    const search = (await (
      await fetch(`${server.url}/v1/kb/pages/search?q=${encodeURIComponent('barn owls voles')}`)
    ).json()) as { chunks: { source: string; text: string }[] };
    expect(search.chunks[0]!.source).toContain(`${siteUrl}/owls`);
    expect(search.chunks[0]!.text).toMatch(/silent flight/);
  });
});
