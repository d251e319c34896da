import { Command, CommanderError } from 'commander';
import type { Toolkit } from '@quiver/core-registry';
import { createBuiltinToolkit } from './builtin-toolkit.js';
import type { CliIO } from './io.js';
import { ExitCode, processIO } from './io.js';
import { ConfigurationError, ToolArgumentError } from '@quiver/core';
import { registerDemoCommand } from './commands/demo.js';
import { registerServeCommand } from './commands/serve.js';
import { registerChatCommand } from './commands/chat.js';
import { registerExecCommand } from './commands/exec.js';
import { registerMcpCommands } from './commands/mcp.js';
import { registerParseCommand } from './commands/parse.js';
import { registerRagCommands } from './commands/rag.js';
import type { QuiverConfig } from './config.js';
import { loadConfig } from './config.js';
import type { CommandEnvironment } from './commands/tools.js';
import { registerToolsCommands } from './commands/tools.js';

/** Options of {@link runCli}. */
export interface RunOptions {
  io?: CliIO;
  /** Environment variables (defaults to process.env). */
  env?: NodeJS.ProcessEnv;
  /** Tests: receives a function that stops a long-running command. */
  onStop?: (stop: () => void) => void;
  /** Build the toolkit commands use (tests pass their own). */
  createToolkit?: () => Toolkit | Promise<Toolkit>;
}

/**
 * Run the `quiver` command line (without the leading `node` and script path).
 * @returns the exit code: 0 ok, 1 failure, 2 usage or configuration error, 3 the tool answered with an error
 */
export async function runCli(argv: string[], options: RunOptions = {}): Promise<number> {
  const io = options.io ?? processIO();
  let exitCode: number = ExitCode.ok;
  let config: QuiverConfig | undefined;
  const program = new Command('quiver')
    .description('Quiver: tools for LLM agents')
    .version('0.0.0')
    .option(
      '--config <path>',
      'configuration file (default: ./quiver.config.json, or $QUIVER_CONFIG)',
    )
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError();
  const environment: CommandEnvironment = {
    io,
    createToolkit: options.createToolkit ?? (() => createBuiltinToolkit()),
    env: options.env ?? process.env,
    setExitCode: (code) => {
      exitCode = code;
    },
    config: () =>
      (config ??= loadConfig({
        path: program.opts<{ config?: string }>().config,
        env: options.env ?? process.env,
      })),
    ...(options.onStop ? { onStop: options.onStop } : {}),
  };
  registerToolsCommands(program, environment);
  registerExecCommand(program, environment);
  registerParseCommand(program, environment);
  registerRagCommands(program, environment);
  registerMcpCommands(program, environment);
  registerChatCommand(program, environment);
  registerServeCommand(program, environment);
  registerDemoCommand(program, environment);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    if (error instanceof ConfigurationError || error instanceof ToolArgumentError) {
      io.stderr(`quiver: ${error.message}\n`);
      return ExitCode.usage;
    }
    io.stderr(`quiver: ${error instanceof Error ? error.message : String(error)}\n`);
    return ExitCode.failure;
  }
  return exitCode;
}
