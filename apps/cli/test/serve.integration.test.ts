import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { ExitCode, runCli } from '../src/index.js';
import { everythingServerPath } from '../src/index.js';
import { captureIO } from './helpers.js';

describe('quiver serve', () => {
  it('serves the API until stopped, then shuts down', async () => {
    const io = captureIO();
    let stop!: () => void;
    const dataDir = mkdtempSync(join(tmpdir(), 'quiver-serve-'));
    const running = runCli(['serve', '--port', '0', '--json', '--data-dir', dataDir], {
      io,
      env: {},
      onStop: (fn) => (stop = fn),
    });
    for (let attempt = 0; attempt < 500 && !io.out().includes('url'); attempt++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const { url } = JSON.parse(io.out().trim().split('\n')[0]!) as { url: string };
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const tools = (await (await fetch(`${url}/v1/tools`)).json()) as { tools: { name: string }[] };
    expect(tools.tools.map((tool) => tool.name)).toContain('calculator');
    const info = (await (await fetch(`${url}/v1/info`)).json()) as {
      chat: { available: boolean; reason: string };
      mcp: boolean;
      knowledgeBases: boolean;
      pages: boolean;
    };
    expect(info).toMatchObject({ mcp: true, knowledgeBases: true, pages: true });
    expect(info.chat.available).toBe(false);
    expect(info.chat.reason).toMatch(/OPENAI_API_KEY/);
    // The MCP endpoint answers an initialize request.
    const initialize = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 't', version: '1' },
        },
      }),
    });
    expect(initialize.status).toBe(200);
    expect(initialize.headers.get('mcp-session-id')).toBeTruthy();
    await initialize.body?.cancel();
    stop();
    expect(await running).toBe(ExitCode.ok);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('serves the tools of the configured MCP servers and ends their processes on stop', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quiver-serve-mcp-'));
    const marker = `quiver-test-${process.pid}-${Date.now()}`;
    const config = join(dir, 'quiver.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          everything: {
            command: process.execPath,
            args: [everythingServerPath(), 'stdio'],
            env: { QUIVER_TEST_MARKER: marker },
          },
        },
      }),
    );
    const markedProcesses = () =>
      readdirSync('/proc').filter((entry) => {
        try {
          return (
            /^\d+$/.test(entry) && readFileSync(`/proc/${entry}/environ`, 'utf8').includes(marker)
          );
        } catch {
          return false;
        }
      });
    const io = captureIO();
    let stop!: () => void;
    const running = runCli(
      ['--config', config, 'serve', '--port', '0', '--json', '--data-dir', dir],
      {
        io,
        env: {},
        onStop: (fn) => (stop = fn),
      },
    );
    for (let attempt = 0; attempt < 2000 && !io.out().includes('url'); attempt++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const { url } = JSON.parse(io.out().trim().split('\n')[0]!) as { url: string };
    const response = await fetch(`${url}/v1/tools/everything__echo/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { message: 'through the server' } }),
    });
    const body = (await response.json()) as { response: { content: { text: string }[] } };
    expect(body.response.content[0]!.text).toBe('Echo: through the server');
    expect(markedProcesses().length).toBeGreaterThan(0);
    stop();
    expect(await running).toBe(ExitCode.ok);
    for (let attempt = 0; attempt < 100 && markedProcesses().length > 0; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(markedProcesses()).toEqual([]);
  });

  it('refuses a public address without a token', async () => {
    const io = captureIO();
    const code = await runCli(['serve', '--host', '0.0.0.0', '--port', '0'], { io, env: {} });
    expect(code).toBe(ExitCode.usage);
    expect(io.err()).toMatch(/token/);
  });
});
