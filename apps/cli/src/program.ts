import { Command, CommanderError } from 'commander';
import type { Toolkit } from '@quiver/core-registry';
import { createBuiltinToolkit } from './builtin-toolkit.js';
import type { CliIO } from './io.js';
import { ExitCode, processIO } from './io.js';
import { registerDemoCommand } from './commands/demo.js';
import type { CommandEnvironment } from './commands/tools.js';
import { registerToolsCommands } from './commands/tools.js';

/** Options of {@link runCli}. */
export interface RunOptions {
  io?: CliIO;
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
  const environment: CommandEnvironment = {
    io,
    createToolkit: options.createToolkit ?? (() => createBuiltinToolkit()),
    setExitCode: (code) => {
      exitCode = code;
    },
  };
  const program = new Command('quiver')
    .description('Quiver: tools for LLM agents')
    .version('0.0.0')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError();
  registerToolsCommands(program, environment);
  registerDemoCommand(program, environment);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    io.stderr(`quiver: ${error instanceof Error ? error.message : String(error)}\n`);
    return ExitCode.failure;
  }
  return exitCode;
}
