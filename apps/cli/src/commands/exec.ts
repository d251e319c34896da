import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { ContentBlock, ToolResponse } from '@quiver/core';
import { ConfigurationError } from '@quiver/core';
import { CodeInterpreter } from '@quiver/code-interpreter';
import { ExitCode } from '../io.js';
import { keepImage, outputDirectory } from '../output-files.js';
import { postToolCall, serverUrl } from '../server-client.js';
import type { CommandEnvironment } from './tools.js';

interface ExecOptions {
  code?: string;
  session?: string;
  server?: string;
  timeout?: number;
  json?: boolean;
}

/**
 * `quiver exec <file.py> | -c CODE`: run Python in an IPython kernel. A CLI process ends after
 * each command, so a kernel cannot outlive it: without `--session` the code runs in a fresh local
 * kernel; with `--session NAME` it runs in the session's kernel inside a running `quiver serve`
 * (`--server` or `$QUIVER_SERVER_URL`), where variables persist between commands.
 */
export function registerExecCommand(program: Command, environment: CommandEnvironment): void {
  program
    .command('exec')
    .description('Run Python in a kernel (charts are saved as PNG files and their paths printed)')
    .argument('[file]', 'a Python file to run')
    .option('-c, --code <code>', 'the code to run instead of a file')
    .option(
      '--session <name>',
      'run in a named kernel session of a running `quiver serve`, so state persists between commands',
    )
    .option('--server <url>', 'the server for --session (default $QUIVER_SERVER_URL or the config)')
    .option('--timeout <seconds>', 'stop the code after this many seconds', Number)
    .option('--json', 'print the whole response as JSON')
    .action(async (file: string | undefined, options: ExecOptions) => {
      const { io } = environment;
      if ((file === undefined) === (options.code === undefined)) {
        throw new ConfigurationError('Give a Python file or -c CODE (exactly one).');
      }
      const code = options.code ?? (await readFile(file!, 'utf8'));
      const config = environment.config();
      const outDir = outputDirectory(config);
      const args = {
        code,
        ...(options.timeout !== undefined ? { timeout_seconds: options.timeout } : {}),
      };
      const print = async (blocks: ContentBlock[]) => {
        for (const block of blocks) {
          if (block.type === 'text') io.stdout(block.text);
          else if (block.type === 'image') {
            const kept = await keepImage(block, outDir);
            if (kept) io.stdout(`[image] ${kept}\n`);
          }
        }
      };

      let response: ToolResponse;
      if (options.session !== undefined) {
        const url = serverUrl(options.server, config, environment.env);
        response = await postToolCall(url, 'code_interpreter', args, {
          sessionId: `cli:${options.session}`,
          token: config.server.token,
          onChunk: options.json ? undefined : (chunk) => print(chunk.content),
        });
      } else {
        const interpreter = new CodeInterpreter({ poolSize: 0 });
        try {
          const pending: Promise<void>[] = [];
          const result = await interpreter.run({
            code,
            ...(options.timeout !== undefined ? { timeoutMs: options.timeout * 1000 } : {}),
            ...(options.json ? {} : { onContent: (blocks) => void pending.push(print(blocks)) }),
          });
          await Promise.all(pending);
          if (!options.json) await print(result.tail);
          const images: string[] = [];
          for (const block of result.content)
            if (block.type === 'image' && options.json) {
              const kept = await keepImage(block, outDir);
              if (kept) images.push(kept);
            }
          response = {
            content: result.content.map((block) =>
              block.type === 'image' ? { ...block, data: undefined } : block,
            ) as ContentBlock[],
            ...(result.status === 'ok' ? {} : { isError: true }),
            metadata: {
              status: result.status,
              ...(images.length ? { images } : {}),
              ...(result.error ? { error: result.error.toJSON() } : {}),
            },
          };
        } finally {
          await interpreter.close();
        }
      }
      if (options.json) io.stdout(`${JSON.stringify(response, null, 2)}\n`);
      environment.setExitCode(response.isError ? ExitCode.toolError : ExitCode.ok);
    });
}
