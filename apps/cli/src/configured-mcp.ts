import type { Toolkit } from '@quiver/core-registry';
import { errorMessage } from '@quiver/core';
import { MCPManager } from '@quiver/mcp-bridge';
import type { MCPServersConfig } from '@quiver/mcp-bridge';
import type { QuiverConfig } from './config.js';
import type { CliIO } from './io.js';

/**
 * Start or connect the MCP servers of the configuration and register their tools in `toolkit`
 * (one tool group per server, `<server>__<tool>`). Closing the toolkit closes the connections and
 * ends the child processes. A server that fails is reported on stderr; the others are used.
 * @returns the manager, or undefined when no server is configured
 */
export async function connectConfiguredMcpServers(
  toolkit: Toolkit,
  config: Pick<QuiverConfig, 'mcpServers'>,
  io: CliIO,
): Promise<MCPManager | undefined> {
  if (Object.keys(config.mcpServers).length === 0) return undefined;
  const manager = new MCPManager({
    servers: { mcpServers: config.mcpServers as unknown as MCPServersConfig['mcpServers'] },
    toolkit,
    groups: true,
    connectTimeoutMs: 20_000,
  });
  const report = await manager.connect();
  for (const failure of report.failed)
    io.stderr(
      `quiver: MCP server "${failure.name}" is not available: ${errorMessage(failure.error)}\n`,
    );
  return manager;
}
