import { performance } from 'node:perf_hooks';
import type { Command } from 'commander';
import { errorMessage } from '@quiver/core';
import type { CliIO } from '../io.js';
import { ExitCode, styles } from '../io.js';
import type { CommandEnvironment } from './tools.js';
import type { DemoStep } from '../demo-steps.js';
import { defaultDemoSteps } from '../demo-steps.js';

/** What one demo step reported. */
export interface DemoStepResult {
  title: string;
  ok: boolean;
  /** Why the step did not run (it counts as passed). */
  skipped?: string;
  durationMs: number;
  lines: string[];
  error?: string;
}

/**
 * Run the demo steps in order, printing each as it finishes.
 * @returns the results; the demo failed if any step did
 */
export async function runDemo(
  environment: CommandEnvironment,
  options: { json?: boolean; steps?: DemoStep[] } = {},
): Promise<DemoStepResult[]> {
  const { io } = environment;
  const style = styles(io);
  const steps = options.steps ?? defaultDemoSteps;
  const toolkit = await environment.createToolkit();
  const config = environment.config();
  const shared = new Map<string, unknown>();
  const results: DemoStepResult[] = [];
  if (!options.json)
    io.stdout(
      `${style.bold('Quiver demo')} ${style.dim('— bundled documents, no API key, no network')}\n\n`,
    );
  try {
    for (const [index, step] of steps.entries()) {
      const lines: string[] = [];
      const started = performance.now();
      let ok = false;
      let error: string | undefined;
      if (!options.json)
        io.stdout(`${style.cyan(`[${index + 1}/${steps.length}]`)} ${style.bold(step.title)}\n`);
      const context = {
        toolkit,
        io,
        config,
        shared,
        log: (line: string) => {
          lines.push(line);
          if (!options.json) io.stdout(`    ${line}\n`);
        },
      };
      const skipped = step.skip?.(context);
      if (skipped !== undefined) {
        results.push({ title: step.title, ok: true, skipped, durationMs: 0, lines });
        if (!options.json) io.stdout(`    ${style.yellow('↷ skipped')} ${style.dim(skipped)}\n\n`);
        continue;
      }
      try {
        ok = await step.run(context);
      } catch (caught) {
        error = errorMessage(caught);
      }
      const durationMs = Math.round(performance.now() - started);
      results.push({
        title: step.title,
        ok,
        durationMs,
        lines,
        ...(error !== undefined ? { error } : {}),
      });
      if (!options.json) printStepEnd(io, ok, durationMs, error);
    }
  } finally {
    // A step that failed half-way may leave resources for a later step: release them.
    for (const value of shared.values())
      await (value as { close?: () => Promise<void> }).close?.().catch(() => undefined);
    await toolkit.close();
  }
  return results;
}

function printStepEnd(io: CliIO, ok: boolean, durationMs: number, error: string | undefined): void {
  const style = styles(io);
  const status = ok ? style.green('✔ ok') : style.red('✘ failed');
  io.stdout(
    `    ${status} ${style.dim(`(${durationMs} ms)`)}${error ? ` ${style.red(error)}` : ''}\n\n`,
  );
}

/** `quiver demo`: a tour of what Quiver does, on embedded defaults. Exits non-zero if any step fails. */
export function registerDemoCommand(program: Command, environment: CommandEnvironment): void {
  program
    .command('demo')
    .description(
      'Run the tour: retrieval, a Python kernel, document parsing, MCP, governance (no API key, no network)',
    )
    .option('--json', 'print a JSON report instead of the tour')
    .action(async (options: { json?: boolean }) => {
      const { io } = environment;
      const results = await runDemo(environment, options);
      const failed = results.filter((result) => !result.ok);
      const skipped = results.filter((result) => result.skipped !== undefined).length;
      if (options.json) {
        io.stdout(`${JSON.stringify({ ok: failed.length === 0, steps: results }, null, 2)}\n`);
      } else {
        const style = styles(io);
        io.stdout(
          failed.length === 0
            ? style.green(
                `All ${results.length} demo steps passed${skipped ? ` (${skipped} skipped)` : ''}.\n`,
              )
            : style.red(
                `${failed.length} of ${results.length} demo steps failed: ${failed.map((result) => result.title).join('; ')}\n`,
              ),
        );
      }
      environment.setExitCode(failed.length === 0 ? ExitCode.ok : ExitCode.failure);
    });
}
