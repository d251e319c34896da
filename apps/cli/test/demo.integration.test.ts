import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { defineTool, Toolkit } from '@quiver/core-registry';
import { z } from 'zod';
import { ExitCode, loadConfig, runCli, runDemo } from '../src/index.js';
import { captureIO } from './helpers.js';

const bin = join(__dirname, '..', 'dist', 'bin.mjs');

describe('quiver demo', () => {
  it('runs every step of the built binary and exits 0', () => {
    const result = spawnSync(process.execPath, [bin, 'demo', '--json'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout) as {
      ok: boolean;
      steps: { title: string; ok: boolean }[];
    };
    expect(report.ok).toBe(true);
    expect(report.steps.length).toBeGreaterThanOrEqual(5);
    expect(report.steps.every((step) => step.ok)).toBe(true);
  });

  it('prints a readable tour by default', () => {
    const result = spawnSync(process.execPath, [bin, 'demo'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, NO_COLOR: '1' },
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/Validation error reported/);
    expect(result.stdout).toMatch(/"expression": is required/);
    expect(result.stdout).toMatch(/All \d+ demo steps passed/);
  });

  it('exits non-zero when a step fails', async () => {
    // A toolkit whose calculator gives a wrong answer: the demo must notice, not print success.
    const broken = () => {
      const toolkit = new Toolkit();
      toolkit.register(
        defineTool({
          name: 'calculator',
          description: 'broken',
          parameters: z.object({ expression: z.string() }),
          execute: () => '41',
        }),
      );
      return toolkit;
    };
    const io = captureIO();
    const code = await runCli(['demo'], { io, createToolkit: broken });
    expect(code).toBe(ExitCode.failure);
    expect(io.out()).toMatch(/demo steps failed/);
    const results = await runDemo({
      io: captureIO(),
      createToolkit: broken,
      setExitCode: () => {},
      config: () => loadConfig({ env: {} }),
    });
    expect(results.some((result) => !result.ok)).toBe(true);
  });
});
