import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startOpenAITestServer } from '@quiver/agent-loop/testing';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { defineTool, Toolkit } from '@quiver/core-registry';
import { z } from 'zod';
import { ExitCode, loadConfig, runCli, runDemo } from '../src/index.js';
import { captureIO } from './helpers.js';

const bin = join(__dirname, '..', 'dist', 'bin.mjs');

/** Run the built binary without blocking the event loop (the model test server lives in this process). */
function runBinary(args: string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [bin, ...args],
      { encoding: 'utf8', timeout: 90_000, env, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ status: child.exitCode ?? (error ? 1 : 0), stdout, stderr }),
    );
  });
}

/** The environment without any model configuration (the machine's own must not leak in). */
function withoutModel(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const name of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'QUIVER_MODEL', 'QUIVER_CONFIG'])
    delete env[name];
  return env;
}

describe('quiver demo', () => {
  it('runs every step of the built binary with no model and exits 0', async () => {
    const result = await runBinary(['demo', '--json'], withoutModel());
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout) as {
      ok: boolean;
      steps: { title: string; ok: boolean; skipped?: string; lines: string[] }[];
    };
    expect(report.ok).toBe(true);
    expect(report.steps.every((step) => step.ok)).toBe(true);
    const step = (pattern: RegExp) => report.steps.find((entry) => pattern.test(entry.title))!;
    expect(step(/Index the bundled sample documents/).lines.join('\n')).toMatch(
      /3 of 3 files indexed/,
    );
    // The progress bar goes to stderr (not a terminal here: one line per step).
    expect(result.stderr).toMatch(/\[3\/3\] 100%/);
    expect(step(/retrieval query/).lines[0]).toMatch(/readability-README\.md.*Installation/);
    const chart = /chart saved: (\S+\.png)/.exec(step(/matplotlib chart/).lines.join('\n'))?.[1];
    expect(chart && readFileSync(chart).subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(step(/Parse a DOCX and a PDF/).lines.join('\n')).toMatch(
      /DOCX: .*docx.*\n[\s\S]*PDF: .*pdf/,
    );
    expect(step(/real MCP server/).lines.join('\n')).toMatch(/The sum of 19 and 23 is 42/);
    const governance = step(/Governance/).lines.join('\n');
    expect(governance).toMatch(/renamed "q" to "query"/);
    expect(governance).toMatch(/refused/);
    expect(step(/The Assistant answers/).skipped).toMatch(/OPENAI_API_KEY/);
  });

  it('prints a readable tour and runs the Assistant when a model is configured', async () => {
    const model = await startOpenAITestServer({
      script: (request) => {
        const system = JSON.stringify(request.body.messages);
        return {
          text: system.includes('npm install @mozilla/readability')
            ? 'Run `npm install @mozilla/readability` [1].'
            : 'I could not find it.',
        };
      },
    });
    try {
      const result = await runBinary(['demo'], {
        ...withoutModel(),
        OPENAI_BASE_URL: model.baseURL,
        OPENAI_API_KEY: 'test',
        QUIVER_MODEL: 'test-model',
      });
      expect(result.status).toBe(0);
      expect(result.stdout).toMatch(/Validation error reported/);
      expect(result.stdout).toMatch(/"expression": is required/);
      expect(result.stdout).toMatch(
        /The Assistant answers[\s\S]*Run `npm install @mozilla\/readability` \[1\]/,
      );
      expect(result.stdout).toMatch(/All \d+ demo steps passed\./);
      expect(model.requests.length).toBeGreaterThanOrEqual(1);
    } finally {
      await model.close();
    }
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
      env: {},
    });
    expect(results.some((result) => !result.ok)).toBe(true);
  });
});
