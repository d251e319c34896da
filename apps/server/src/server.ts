import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import type { ServerType } from '@hono/node-server';
import { ConfigurationError, errorMessage } from '@quiver/core';
import { createApp } from './app.js';
import type { AppOptions } from './app.js';
import type { ServerServices } from './services.js';

/** Options of {@link startServer}. */
export interface ServerOptions extends Partial<Omit<AppOptions, 'sessions'>> {
  /** Address to bind. Default 127.0.0.1; any other address requires a `token`. */
  host?: string;
  /** Port; 0 picks a free one. Default 7860. */
  port?: number;
}

/** A running server. */
export interface RunningServer {
  url: string;
  port: number;
  host: string;
  /** Stop accepting connections, end open streams, close the toolkit (kernels, MCP children). */
  close(): Promise<void>;
}

const LOOPBACK = /^(127(?:\.\d{1,3}){3}|::1|localhost)$/;

/** The web UI's folder: next to the built module (dist/web) or the source (src/web). */
export function defaultWebDir(): string {
  return join(__dirname, 'web');
}

/**
 * Start the Quiver HTTP server.
 * @throws ConfigurationError when binding a non-loopback address without a token
 */
export async function startServer(
  services: ServerServices,
  options: ServerOptions = {},
): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK.test(host) && !options.token) {
    throw new ConfigurationError(
      `Binding to ${host} exposes the tools to the network: set a bearer token (--token or QUIVER_SERVER_TOKEN), or bind to 127.0.0.1.`,
    );
  }
  const app = createApp(services, {
    // On loopback, answer only to loopback names (DNS rebinding); elsewhere the token protects.
    ...(LOOPBACK.test(host)
      ? {
          allowedHostnames: [
            '127.0.0.1',
            'localhost',
            '[::1]',
            host.includes(':') ? `[${host}]` : host,
          ],
        }
      : {}),
    ...options,
    uploadDir: options.uploadDir ?? join(tmpdir(), 'quiver-uploads'),
    webDir: options.webDir ?? defaultWebDir(),
  });
  const server = await new Promise<ServerType>((resolve, reject) => {
    const instance = serve({ fetch: app.fetch, hostname: host, port: options.port ?? 7860 }, () =>
      resolve(instance),
    );
    instance.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    host: address.address,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        // End keep-alive and streaming connections so close() does not wait on idle clients.
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        await services.pages?.close();
        await services.toolkit.close();
        try {
          await services.mcp?.close();
          await services.onShutdown?.();
        } catch (error) {
          services.toolkit.logger.warn('shutdown hook failed', { error: errorMessage(error) });
        }
        await stopped;
      })();
      return closing;
    },
  };
}
