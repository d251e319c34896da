import { describe, expect, it } from '@jest/globals';
import { ExitCode, runCli } from '../src/index.js';
import { captureIO } from './helpers.js';

describe('quiver serve', () => {
  it('serves the API until stopped, then shuts down', async () => {
    const io = captureIO();
    let stop!: () => void;
    const running = runCli(['serve', '--port', '0', '--json'], {
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
    stop();
    expect(await running).toBe(ExitCode.ok);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('refuses a public address without a token', async () => {
    const io = captureIO();
    const code = await runCli(['serve', '--host', '0.0.0.0', '--port', '0'], { io, env: {} });
    expect(code).toBe(ExitCode.usage);
    expect(io.err()).toMatch(/token/);
  });
});
