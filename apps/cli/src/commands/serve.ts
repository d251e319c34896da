import type { Command } from 'commander';
import { startServer } from '@quiver/server';
import type { CommandEnvironment } from './tools.js';
import { styles } from '../io.js';

/** `quiver serve`: the demo server and web UI. Runs until SIGINT/SIGTERM, then shuts down gracefully. */
export function registerServeCommand(program: Command, environment: CommandEnvironment): void {
  program
    .command('serve')
    .description('Start the HTTP API, the MCP endpoint and the web chat UI')
    .option('--host <host>', 'address to bind (non-loopback needs --token)')
    .option('--port <port>', 'port (0 picks a free one)', (value) => Number(value))
    .option('--token <token>', 'require this bearer token')
    .option('--json', 'print the address as JSON')
    .action(async (options: { host?: string; port?: number; token?: string; json?: boolean }) => {
      const { io } = environment;
      const config = environment.config();
      const toolkit = await environment.createToolkit();
      const server = await startServer(
        { toolkit },
        {
          host: options.host ?? config.server.host ?? '127.0.0.1',
          port: options.port ?? config.server.port ?? 7860,
          ...((options.token ?? config.server.token)
            ? { token: options.token ?? config.server.token }
            : {}),
        },
      );
      if (options.json) io.stdout(`${JSON.stringify({ url: server.url })}\n`);
      else
        io.stdout(
          `${styles(io).bold('Quiver')} is serving ${server.url} (web UI at /, API at /v1, MCP at /mcp). Ctrl+C stops it.\n`,
        );
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        environment.onStop?.(stop);
      });
      await server.close();
      if (!options.json) io.stdout('Stopped.\n');
    });
}
