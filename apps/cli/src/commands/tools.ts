import { randomUUID } from 'node:crypto';
import type { ToolResponse } from '@quiver/core';
import { localize, responseText } from '@quiver/core';
import type { Command } from 'commander';
import type { Toolkit } from '@quiver/core-registry';
import { mergeResponses } from '@quiver/core-registry';
import type { QuiverConfig } from '../config.js';
import type { CliIO } from '../io.js';
import { ExitCode, styles } from '../io.js';

/** Shared options of the CLI's commands. */
export interface CommandEnvironment {
  io: CliIO;
  createToolkit: () => Toolkit | Promise<Toolkit>;
  setExitCode: (code: number) => void;
  /** The loaded configuration (file + environment overrides). */
  config: () => QuiverConfig;
  /** Environment variables (process.env unless a test passes its own). */
  env: NodeJS.ProcessEnv;
  /** Tests: register a function that stops a long-running command (`serve`). */
  onStop?: (stop: () => void) => void;
}

/** `quiver tools list` and `quiver tools call <name> --args JSON`. */
export function registerToolsCommands(program: Command, environment: CommandEnvironment): void {
  const tools = program.command('tools').description('List the built-in tools and call them');

  tools
    .command('list')
    .description('List every tool with its group and description')
    .option('--json', 'print JSON (name, group, active, description, parameters)')
    .option('--lang <language>', 'description language: en or zh', 'en')
    .action(async (options: { json?: boolean; lang: string }) => {
      const { io } = environment;
      const toolkit = await environment.createToolkit();
      try {
        const language = options.lang === 'zh' ? 'zh' : 'en';
        const rows = toolkit.list().map((tool) => ({
          name: tool.name,
          group: tool.group,
          active: toolkit.isActive(tool.name),
          description: localize(tool.description, language),
          parameters: tool.modelParameters,
        }));
        if (options.json) {
          io.stdout(`${JSON.stringify(rows, null, 2)}\n`);
          return;
        }
        const style = styles(io);
        const width = Math.max(...rows.map((row) => row.name.length), 4);
        for (const row of rows) {
          io.stdout(
            `${style.bold(row.name.padEnd(width))}  ${style.dim(`[${row.group}]`)} ${row.description}\n`,
          );
        }
      } finally {
        await toolkit.close();
      }
    });

  tools
    .command('call')
    .description('Call a tool; its output streams to stdout')
    .argument('<name>', 'tool name')
    .option('--args <json>', 'arguments as a JSON object', '{}')
    .option('--json', 'print the whole response as JSON when it ends')
    .action(async (name: string, options: { args: string; json?: boolean }) => {
      const { io } = environment;
      const toolkit = await environment.createToolkit();
      try {
        const chunks: ToolResponse[] = [];
        const call = { id: `cli-${randomUUID()}`, name, arguments: options.args };
        for await (const chunk of toolkit.call(call)) {
          chunks.push(chunk);
          if (!options.json) {
            const text = responseText(chunk);
            if (text) (chunk.isError ? io.stderr : io.stdout)(text);
          }
        }
        const response = mergeResponses(chunks);
        if (options.json) io.stdout(`${JSON.stringify(response, null, 2)}\n`);
        else if (responseText(response) && !responseText(response).endsWith('\n')) io.stdout('\n');
        environment.setExitCode(response.isError ? ExitCode.toolError : ExitCode.ok);
      } finally {
        await toolkit.close();
      }
    });
}
