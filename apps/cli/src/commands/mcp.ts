import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import type { ToolResponse } from '@quiver/core';
import { ConfigurationError, errorMessage, localize, responseText } from '@quiver/core';
import { mergeResponses } from '@quiver/core-registry';
import { MCPManager } from '@quiver/mcp-bridge';
import type { MCPServersConfig } from '@quiver/mcp-bridge';
import type { QuiverConfig } from '../config.js';
import { ExitCode, styles } from '../io.js';
import type { CommandEnvironment } from './tools.js';

/** Connect to the configured MCP servers (only `only`, when given). */
async function connect(config: QuiverConfig, only?: string): Promise<MCPManager> {
  const names = Object.keys(config.mcpServers);
  if (names.length === 0) {
    throw new ConfigurationError(
      'No MCP servers are configured: add an "mcpServers" section to quiver.config.json (same shape as Claude Desktop or Cursor).',
    );
  }
  if (only !== undefined && !names.includes(only)) {
    throw new ConfigurationError(
      `No MCP server named "${only}" in the configuration; configured: ${names.join(', ')}.`,
    );
  }
  const servers = Object.fromEntries(
    Object.entries(config.mcpServers).filter(([name]) => only === undefined || name === only),
  ) as unknown as MCPServersConfig['mcpServers'];
  const manager = new MCPManager({ servers: { mcpServers: servers }, connectTimeoutMs: 20_000 });
  await manager.connect();
  return manager;
}

/** `quiver mcp list` and `quiver mcp call` over the servers of `quiver.config.json`. */
export function registerMcpCommands(program: Command, environment: CommandEnvironment): void {
  const mcp = program
    .command('mcp')
    .description('List and call the tools of the configured MCP servers');

  mcp
    .command('list')
    .description('Connect to every configured MCP server and list its tools')
    .option('--server <name>', 'only this server')
    .option('--json', 'print JSON')
    .action(async (options: { server?: string; json?: boolean }) => {
      const { io } = environment;
      const manager = await connect(environment.config(), options.server);
      try {
        const toolkit = manager.toolkit;
        const servers = manager.status().map((status) => ({
          name: status.name,
          state: status.state,
          transport: status.transport,
          error: status.error ? errorMessage(status.error) : undefined,
          tools: status.tools.map((name) => {
            const tool = toolkit.get(name);
            return {
              name,
              description: tool ? localize(tool.description, 'en') : '',
            };
          }),
        }));
        if (options.json) io.stdout(`${JSON.stringify({ servers }, null, 2)}\n`);
        else {
          const style = styles(io);
          for (const server of servers) {
            io.stdout(
              `${style.bold(server.name)} ${server.state === 'connected' ? style.green(server.state) : style.red(server.state)}${server.transport ? style.dim(` (${server.transport})`) : ''}${server.error ? ` ${style.red(server.error)}` : ''}\n`,
            );
            for (const tool of server.tools)
              io.stdout(`  ${tool.name}  ${style.dim(tool.description.split('\n')[0] ?? '')}\n`);
          }
        }
        environment.setExitCode(
          servers.some((server) => server.state !== 'connected') ? ExitCode.failure : ExitCode.ok,
        );
      } finally {
        await manager.close();
      }
    });

  mcp
    .command('call')
    .description('Call an MCP tool by its Quiver name (<server>__<tool>, see `quiver mcp list`)')
    .argument('<tool>', 'tool name, e.g. everything__echo')
    .option('--args <json>', 'arguments as a JSON object', '{}')
    .option('--json', 'print the whole response as JSON')
    .action(async (tool: string, options: { args: string; json?: boolean }) => {
      const { io } = environment;
      const config = environment.config();
      const server = Object.keys(config.mcpServers).find((name) => tool.startsWith(`${name}__`));
      const manager = await connect(config, server);
      try {
        const chunks: ToolResponse[] = [];
        for await (const chunk of manager.toolkit.call({
          id: `cli-${randomUUID()}`,
          name: tool,
          arguments: options.args,
        }))
          chunks.push(chunk);
        const response = mergeResponses(chunks);
        if (options.json) io.stdout(`${JSON.stringify(response, null, 2)}\n`);
        else {
          const text = responseText(response);
          (response.isError ? io.stderr : io.stdout)(text.endsWith('\n') ? text : `${text}\n`);
        }
        environment.setExitCode(response.isError ? ExitCode.toolError : ExitCode.ok);
      } finally {
        await manager.close();
      }
    });
}
