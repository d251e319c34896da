import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Toolkit } from '@quiver/core-registry';
import { createMCPServer } from '@quiver/mcp-bridge';
import type { McpEndpoint } from './services.js';

/** Options of {@link createMcpEndpoint}. */
export interface McpEndpointOptions {
  toolkit: Toolkit;
  /** Serve only these tool groups (default: every active tool). */
  groups?: string[];
  /** Sessions kept at once; more get 503. Default 100. */
  maxSessions?: number;
  /** Close a session idle this long. Default 30 minutes. */
  sessionIdleTimeoutMs?: number;
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  close: () => Promise<void>;
  lastUsed: number;
}

/**
 * The MCP Streamable HTTP endpoint (`/mcp`) over a toolkit, through `@quiver/mcp-bridge`'s
 * `createMCPServer` and the SDK's web-standard transport: one MCP session (and `Server`) per
 * client, routed by the `mcp-session-id` header, closed on `DELETE`, when idle, or on shutdown.
 * Authentication is the app's bearer token (the route sits behind it).
 */
export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const sessions = new Map<string, Session>();
  const maxSessions = options.maxSessions ?? 100;
  const idleMs = options.sessionIdleTimeoutMs ?? 30 * 60_000;
  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const [id, session] of sessions)
        if (now - session.lastUsed > idleMs) void drop(id, session);
    },
    Math.min(idleMs, 60_000),
  );
  sweeper.unref();

  const drop = async (id: string, session: Session) => {
    sessions.delete(id);
    await session.close().catch(() => undefined);
  };

  const jsonRpcError = (status: number, code: number, message: string) =>
    new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
      status,
      headers: { 'content-type': 'application/json' },
    });

  return {
    async handle(request) {
      const sessionId = request.headers.get('mcp-session-id');
      if (sessionId) {
        const session = sessions.get(sessionId);
        if (!session) return jsonRpcError(404, -32001, 'Unknown MCP session: initialize again.');
        session.lastUsed = Date.now();
        const response = await session.transport.handleRequest(request);
        if (request.method === 'DELETE') await drop(sessionId, session);
        return response;
      }
      if (request.method !== 'POST')
        return jsonRpcError(400, -32000, 'Send an initialize request (POST) to open a session.');
      if (sessions.size >= maxSessions)
        return jsonRpcError(503, -32000, 'Too many MCP sessions; try again later.');
      const server = createMCPServer({
        toolkit: options.toolkit,
        ...(options.groups ? { groups: options.groups } : {}),
      });
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        // Called while the initialize request is handled, after `session` below is assigned.
        onsessioninitialized: (id) => {
          sessions.set(id, session);
        },
      });
      const session: Session = {
        transport,
        lastUsed: Date.now(),
        close: async () => {
          await transport.close();
          await server.close();
        },
      };
      await server.connect(transport);
      const response = await transport.handleRequest(request);
      // Not an initialize request (or a rejected one): nothing to keep.
      if (transport.sessionId === undefined) await session.close().catch(() => undefined);
      return response;
    },
    async close() {
      clearInterval(sweeper);
      await Promise.all([...sessions].map(([id, session]) => drop(id, session)));
    },
  };
}
