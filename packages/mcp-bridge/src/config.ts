import { readFile } from 'node:fs/promises';
import { ConfigurationError } from '@quiver/core';
import { z } from 'zod';

/** A server started as a child process that speaks MCP over its stdin and stdout. */
export interface StdioServerConfig {
  type?: 'stdio';
  /** Program to run, e.g. `npx` or `node`. */
  command: string;
  args?: string[];
  /**
   * Extra environment variables. The child gets a safe default environment (`PATH`, `HOME` …, as
   * the MCP SDK chooses) plus these; your process's other variables are not passed on.
   */
  env?: Record<string, string>;
  /** Working directory of the child process. */
  cwd?: string;
  /** Time limit of each call to this server's tools, in milliseconds. */
  timeoutMs?: number;
  /** Leave this server out without deleting its entry. */
  disabled?: boolean;
}

/**
 * A server reached over HTTP. `type` picks the transport: `streamable-http` (also spelt `http`
 * or `streamableHttp`), `sse` (the legacy HTTP+SSE transport), or unset: Streamable HTTP first,
 * falling back to SSE when the server answers the Streamable HTTP handshake with a 4xx.
 */
export interface RemoteServerConfig {
  type?: 'streamable-http' | 'http' | 'streamableHttp' | 'sse';
  url: string;
  /** Sent with every request, e.g. `{ "Authorization": "Bearer …" }`. */
  headers?: Record<string, string>;
  timeoutMs?: number;
  disabled?: boolean;
}

/** One entry of `mcpServers`. */
export type MCPServerConfig = StdioServerConfig | RemoteServerConfig;

/** The `mcpServers` configuration shape shared by Claude Desktop, Cursor, Qwen-Agent and others. */
export interface MCPServersConfig {
  mcpServers: Record<string, MCPServerConfig>;
}

const stdioSchema = z.object({
  type: z.literal('stdio').optional(),
  command: z.string().min(1, 'command must not be empty'),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
  timeoutMs: z.number().positive().optional(),
  disabled: z.boolean().optional(),
});

const remoteSchema = z.object({
  type: z.enum(['streamable-http', 'http', 'streamableHttp', 'sse']).optional(),
  url: z.url({ protocol: /^https?$/, error: 'url must be an http:// or https:// URL' }),
  headers: z.record(z.string(), z.string()).optional(),
  timeoutMs: z.number().positive().optional(),
  disabled: z.boolean().optional(),
});

/** Server names become tool-name prefixes, so they follow the tool-name alphabet. */
const SERVER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Validate an `mcpServers` configuration (the whole `{ mcpServers: {…} }` object, or just the map).
 *
 * @param value - parsed JSON
 * @returns the map of server names to their (validated) configuration
 * @throws ConfigurationError naming every entry that is wrong and how
 * @example
 * ```ts
 * const servers = parseMCPServersConfig({ mcpServers: { fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] } } });
 * ```
 */
export function parseMCPServersConfig(value: unknown): Record<string, MCPServerConfig> {
  const map =
    typeof value === 'object' && value !== null && 'mcpServers' in value
      ? (value as { mcpServers: unknown }).mcpServers
      : value;
  if (typeof map !== 'object' || map === null || Array.isArray(map)) {
    throw new ConfigurationError(
      'The MCP configuration must be an object like {"mcpServers": {"name": {"command": "…"}}}.',
    );
  }
  const problems: string[] = [];
  const out: Record<string, MCPServerConfig> = {};
  for (const [name, entry] of Object.entries(map)) {
    if (!SERVER_NAME.test(name)) {
      problems.push(`"${name}": server names use 1 to 64 letters, digits, "_", "-" or "."`);
      continue;
    }
    const isRemote = typeof entry === 'object' && entry !== null && 'url' in entry;
    const isStdio = typeof entry === 'object' && entry !== null && 'command' in entry;
    if (!isRemote && !isStdio) {
      problems.push(`"${name}": give either "command" (a stdio server) or "url" (a remote server)`);
      continue;
    }
    const parsed = (isRemote ? remoteSchema : stdioSchema).safeParse(entry);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const where = issue.path.length > 0 ? `.${issue.path.join('.')}` : '';
        problems.push(`"${name}"${where}: ${issue.message}`);
      }
      continue;
    }
    out[name] = parsed.data as MCPServerConfig;
  }
  if (problems.length > 0) {
    throw new ConfigurationError(
      `Invalid MCP server configuration:\n- ${problems.join('\n- ')}\nFix these entries of "mcpServers".`,
    );
  }
  return out;
}

/**
 * Read and validate an `mcpServers` JSON file.
 * @throws ConfigurationError when the file cannot be read, is not JSON, or has invalid entries
 */
export async function loadMCPServersConfig(path: string): Promise<Record<string, MCPServerConfig>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigurationError(
      `Cannot read the MCP configuration file ${path}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  try {
    return parseMCPServersConfig(JSON.parse(text));
  } catch (error) {
    if (error instanceof SyntaxError) {
      throw new ConfigurationError(
        `The MCP configuration file ${path} is not valid JSON: ${error.message}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}

/** @internal True for a stdio entry. */
export function isStdioConfig(config: MCPServerConfig): config is StdioServerConfig {
  return 'command' in config;
}
