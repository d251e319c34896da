import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** A request the fixture server received. */
export interface RecordedRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type RouteHandler = (
  request: IncomingMessage,
  response: ServerResponse,
  body: string,
) => void;

/** A real HTTP server on 127.0.0.1 (random port) that replays fixtures and records requests. */
export interface FixtureServer {
  origin: string;
  port: number;
  requests: RecordedRequest[];
  /** Register `handler` for `METHOD /path` (query string ignored). */
  route(key: string, handler: RouteHandler): void;
  close(): Promise<void>;
}

export const FIXTURES = join(__dirname, '..', 'fixtures');

/** Read a fixture file as bytes. */
export function fixture(...parts: string[]): Buffer {
  return readFileSync(join(FIXTURES, ...parts));
}

/** Send a JSON fixture (or any body) with a status and headers. */
export function sendJson(
  response: ServerResponse,
  body: string | Buffer,
  status = 200,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  response.end(body);
}

export async function startFixtureServer(host = '127.0.0.1', port = 0): Promise<FixtureServer> {
  const routes = new Map<string, RouteHandler>();
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({
        method: request.method ?? 'GET',
        url: request.url ?? '/',
        headers: request.headers,
        body,
      });
      const path = new URL(request.url ?? '/', 'http://fixture').pathname;
      const handler = routes.get(`${request.method} ${path}`);
      if (handler === undefined) {
        response.writeHead(404, { 'content-type': 'text/plain' });
        response.end('no fixture for this route');
        return;
      }
      handler(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address() as AddressInfo;
  return {
    origin: `http://${host}:${address.port}`,
    port: address.port,
    requests,
    route(key, handler) {
      routes.set(key, handler);
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
