import { QuiverError, ToolExecutionError } from '@quiver/core';

/** Error codes raised by the MCP bridge. */
export const MCPErrorCodes = {
  /** A server could not be started, reached or initialised. */
  connectionFailed: 'mcp_connection_failed',
  /** The server went away (crashed, exited, dropped the connection) while a call was running. */
  serverDisconnected: 'mcp_server_disconnected',
  /** The server answered the call with a JSON-RPC error. */
  requestFailed: 'mcp_request_failed',
  /** The server ran the tool and reported `isError: true`. */
  toolError: 'mcp_tool_error',
  /** The manager was closed. */
  closed: 'mcp_manager_closed',
} as const;

/**
 * A configured MCP server could not be started, reached or initialised. `isRetryable` is true for
 * failures that may pass on their own (a refused connection, a timeout), false for ones that need
 * a configuration change (a missing command, a 401).
 */
export class MCPConnectionError extends QuiverError {
  /** The server's name in the `mcpServers` configuration. */
  readonly serverName: string;
  readonly isRetryable: boolean;

  constructor(
    serverName: string,
    message: string,
    options?: { cause?: unknown; isRetryable?: boolean },
  ) {
    super(MCPErrorCodes.connectionFailed, message, options);
    this.serverName = serverName;
    this.isRetryable = options?.isRetryable ?? true;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), serverName: this.serverName, isRetryable: this.isRetryable };
  }
}

/**
 * The server went away while a call was in flight. The call may or may not have taken effect on
 * the server; the next call reconnects (with backoff).
 */
export class MCPServerDisconnectedError extends ToolExecutionError {
  /** The server's name in the `mcpServers` configuration. */
  readonly serverName: string;

  constructor(serverName: string, toolName: string, detail: string, options?: { cause?: unknown }) {
    super(
      toolName,
      `MCP server "${serverName}" disconnected while "${toolName}" was running (${detail}). ` +
        'The call may or may not have taken effect; the next call reconnects to the server.',
      { ...options, isRetryable: true, code: MCPErrorCodes.serverDisconnected },
    );
    this.serverName = serverName;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), serverName: this.serverName };
  }
}
