import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { RunningServer, ServerServices } from '@quiver/server';
import { createQuiverServices, startServer } from '@quiver/server';
import { missingModelReason } from '../config.js';
import { styles } from '../io.js';
import { createChatModel } from './chat.js';
import { connectConfiguredMcpServers } from '../configured-mcp.js';
import type { CommandEnvironment } from './tools.js';

interface ServeOptions {
  host?: string;
  port?: number;
  token?: string;
  dataDir: string;
  json?: boolean;
}

/**
 * `quiver serve`: the HTTP API, the MCP endpoint, the page cache and the web chat UI over the
 * built-in tools and the tools of the configured MCP servers. Runs until SIGINT/SIGTERM, then shuts down gracefully: open streams end, tool
 * calls are aborted, kernels and MCP sessions stop, knowledge bases are committed and unlocked.
 */
export function registerServeCommand(program: Command, environment: CommandEnvironment): void {
  program
    .command('serve')
    .description('Start the HTTP API, the MCP endpoint and the web chat UI')
    .option('--host <host>', 'address to bind (non-loopback needs --token)')
    .option('--port <port>', 'port (0 picks a free one)', (value) => Number(value))
    .option('--token <token>', 'require this bearer token')
    .option(
      '--data-dir <dir>',
      'where knowledge bases (kb/<name>) and the page history live',
      '.quiver',
    )
    .option('--json', 'print the address as JSON')
    .action(async (options: ServeOptions) => {
      const { io } = environment;
      const config = environment.config();
      const host = options.host ?? config.server.host ?? '127.0.0.1';
      const token = options.token ?? config.server.token;
      const toolkit = await environment.createToolkit();
      const missing = missingModelReason(config);
      let services: ServerServices | undefined;
      let server: RunningServer;
      try {
        await connectConfiguredMcpServers(toolkit, config, io);
        services = await createQuiverServices({
          toolkit,
          ...(missing ? { unavailableReason: missing } : { model: createChatModel(config) }),
          dataDir: resolve(options.dataDir),
          knowledgeBasePaths: Object.fromEntries(
            Object.entries(config.knowledgeBases).map(([name, entry]) => [name, entry.path]),
          ),
        });
        server = await startServer(services, {
          host,
          port: options.port ?? config.server.port ?? 7860,
          ...(token ? { token } : {}),
        });
      } catch (error) {
        // Nothing may outlive a failed start: kernels, MCP children, knowledge-base locks.
        await toolkit.close();
        await services?.onShutdown?.();
        throw error;
      }
      if (options.json) io.stdout(`${JSON.stringify({ url: server.url, chat: !missing })}\n`);
      else
        io.stdout(
          `${styles(io).bold('Quiver')} is serving ${server.url} (web UI at /, API at /v1, MCP at /mcp). ${missing ? 'Chat is off: no model configured. ' : ''}Ctrl+C stops it.\n`,
        );
      let stop!: () => void;
      await new Promise<void>((resolve) => {
        stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        environment.onStop?.(stop);
      });
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      await server.close();
      if (!options.json) io.stdout('Stopped.\n');
    });
}
