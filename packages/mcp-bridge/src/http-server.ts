import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@quiver/core';
import { ConfigurationError, errorMessage, silentLogger } from '@quiver/core';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryEventStore } from './event-store.js';
import type { MCPServerOptions } from './mcp-server.js';
import { createMCPServer } from './mcp-server.js';

/** Options of {@link serveMCPHttp}. */
export interface MCPHttpServerOptions extends MCPServerOptions {
  /** Interface to listen on. Default `127.0.0.1` (this machine only). */
  host?: string;
  /** Port; `0` picks a free one (see `url`). Default 0. */
  port?: number;
  /** Endpoint path. Default `/mcp`. */
  path?: string;
  /** When set, every request must carry `Authorization: Bearer <token>`. */
  bearerToken?: string;
  /**
   * Origins allowed to call from a browser (exact `scheme://host:port`). A request without an
   * `Origin` header (not from a browser) is allowed. Default: any origin on localhost, 127.0.0.1
   * or [::1], which blocks DNS-rebinding attacks from web pages.
   */
  allowedOrigins?: string[];
  /**
   * Accepted `Host` header names (without port). Default, when listening on a loopback address:
   * `localhost`, `127.0.0.1`, `[::1]`; otherwise any.
   */
  allowedHosts?: string[];
  /** Keep sent messages so that a client can resume a broken stream with Last-Event-ID. Default true. */
  resumable?: boolean;
  /** Messages kept per session for resumption. Default 1000. */
  maxEventsPerSession?: number;
  /** Close sessions idle this long. Default 30 minutes. */
  sessionIdleTimeoutMs?: number;
  /** Refuse new sessions beyond this many (HTTP 503). Default 1000. */
  maxSessions?: number;
  logger?: Logger;
}

/** A running Streamable HTTP MCP server. */
export interface MCPHttpServer {
  /** The endpoint, e.g. `http://127.0.0.1:43123/mcp`. */
  readonly url: string;
  readonly port: number;
  /** Number of open sessions. */
  sessionCount(): number;
  /** Tell every connected client the tool list changed. */
  notifyToolListChanged(): Promise<void>;
  /** Close every session and stop listening. */
  close(): Promise<void>;
}

interface Session {
  server: Server;
  transport: StreamableHTTPServerTransport;
  lastSeen: number;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Serve a Toolkit over MCP Streamable HTTP: one session (and one MCP server) per client,
 * resumable streams (an in-memory event store), optional bearer-token auth, `Origin` and `Host`
 * validation against DNS rebinding, bound to 127.0.0.1 unless told otherwise.
 *
 * @example
 * ```ts
 * const http = await serveMCPHttp({ toolkit, port: 8808, bearerToken: process.env.MCP_TOKEN });
 * console.error(`MCP server at ${http.url}`);
 * ```
 * @throws ConfigurationError on invalid options (a chosen group that does not exist)
 */
export async function serveMCPHttp(options: MCPHttpServerOptions): Promise<MCPHttpServer> {
  // Build one server up front: invalid options fail here, not on the first request.
  await createMCPServer(options).close();
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const logger = options.logger ?? silentLogger;
  const resumable = options.resumable ?? true;
  const idleMs = options.sessionIdleTimeoutMs ?? 30 * 60_000;
  const maxSessions = options.maxSessions ?? 1_000;
  const allowedHosts =
    options.allowedHosts ??
    (LOOPBACK.has(host) || host.startsWith('127.') ? [...LOOPBACK] : undefined);
  if (options.bearerToken !== undefined && options.bearerToken.length < 16) {
    throw new ConfigurationError(
      'bearerToken must be at least 16 characters long; use a random secret.',
    );
  }
  const tokenDigest = options.bearerToken !== undefined ? digest(options.bearerToken) : undefined;
  const sessions = new Map<string, Session>();

  const drop = (sessionId: string | undefined): void => {
    if (sessionId === undefined) return;
    const session = sessions.get(sessionId);
    if (!session) return;
    sessions.delete(sessionId);
    void session.server.close().catch(() => {});
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== path) return reply(res, 404, `Not found. The MCP endpoint is ${path}.`);
    if (allowedHosts && !allowedHosts.includes(hostName(req.headers.host))) {
      return reply(res, 403, 'Forbidden: this Host is not allowed.');
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin, options.allowedOrigins)) {
      return reply(res, 403, 'Forbidden: this Origin is not allowed.');
    }
    if (tokenDigest !== undefined && !authorized(req.headers.authorization, tokenDigest)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="mcp"');
      return reply(res, 401, 'Unauthorized: send Authorization: Bearer <token>.');
    }
    const sessionHeader = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      // 404 tells a client its session is gone and it should initialize a new one.
      if (!session) return reply(res, 404, 'Session not found; initialize a new session.');
      session.lastSeen = Date.now();
      await session.transport.handleRequest(req, res);
      return;
    }
    if (req.method !== 'POST') {
      return reply(res, 400, 'Bad request: no Mcp-Session-Id; send an initialize request first.');
    }
    const body = await readJson(req);
    if (body === undefined) return reply(res, 400, 'Bad request: the body is not JSON.', -32700);
    if (!isInitializeRequest(body)) {
      return reply(res, 400, 'Bad request: no Mcp-Session-Id; send an initialize request first.');
    }
    if (sessions.size >= maxSessions) {
      return reply(res, 503, 'Too many sessions; try again later.');
    }
    const server = createMCPServer(options);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      ...(resumable
        ? {
            eventStore: new InMemoryEventStore({ maxEvents: options.maxEventsPerSession ?? 1_000 }),
          }
        : {}),
      onsessioninitialized: (id) => {
        sessions.set(id, { server, transport, lastSeen: Date.now() });
      },
      onsessionclosed: (id) => drop(id),
    });
    transport.onclose = () => drop(transport.sessionId);
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.error('MCP HTTP request failed', { error: errorMessage(error) });
      if (!res.headersSent) reply(res, 500, 'Internal server error.', -32603);
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const [id, session] of sessions) {
        if (now - session.lastSeen > idleMs) {
          logger.info('closing idle MCP session', { session: id });
          void session.transport.close().catch(() => {});
          drop(id);
        }
      }
    },
    Math.min(idleMs, 60_000),
  );
  sweeper.unref();
  const port = (http.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}${path}`,
    port,
    sessionCount: () => sessions.size,
    notifyToolListChanged: async () => {
      await Promise.all(
        [...sessions.values()].map((session) =>
          session.server.sendToolListChanged().catch(() => {}),
        ),
      );
    },
    close: async () => {
      clearInterval(sweeper);
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(
        open.map(async (session) => {
          await session.transport.close().catch(() => {});
          await session.server.close().catch(() => {});
        }),
      );
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}

function reply(res: ServerResponse, status: number, message: string, code = -32000): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function hostName(header: string | undefined): string {
  if (!header) return '';
  if (header.startsWith('[')) return header.slice(0, header.indexOf(']') + 1);
  return header.split(':')[0] ?? '';
}

function originAllowed(origin: string, allowed: string[] | undefined): boolean {
  if (allowed) return allowed.includes(origin);
  try {
    return LOOPBACK.has(new URL(origin).hostname);
  } catch {
    return false;
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function authorized(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  // Compare digests, in constant time, so that neither timing nor length leaks the token.
  return match !== null && timingSafeEqual(digest(match[1]!.trim()), expected);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
