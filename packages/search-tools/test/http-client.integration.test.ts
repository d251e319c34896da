import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import {
  createHttpClient,
  createNetworkPolicy,
  type HttpClient,
  WebFetchError,
} from '../src/index.js';
import { type FixtureServer, startFixtureServer } from './helpers/fixture-server.js';

async function fetchError(promise: Promise<unknown>): Promise<WebFetchError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WebFetchError) return error;
    throw error;
  }
  throw new Error('expected a WebFetchError');
}

describe('guarded HTTP client limits (real server on 127.0.0.1)', () => {
  let server: FixtureServer;
  let client: HttpClient;
  let hugeBytesWritten = 0;
  let hugeFinished = false;

  beforeAll(async () => {
    server = await startFixtureServer();
    client = createHttpClient({ policy: createNetworkPolicy({ allow: ['127.0.0.1'] }) });
    server.route('GET /loop-a', (_request, response) => {
      response.writeHead(302, { location: '/loop-b' });
      response.end();
    });
    server.route('GET /loop-b', (_request, response) => {
      response.writeHead(302, { location: '/loop-a#again' });
      response.end();
    });
    for (let hop = 0; hop < 8; hop += 1) {
      server.route(`GET /chain-${hop}`, (_request, response) => {
        response.writeHead(301, { location: `/chain-${hop + 1}` });
        response.end();
      });
    }
    server.route('GET /chain-8', (_request, response) => response.end('end of chain'));
    server.route('GET /trickle', (_request, response) => {
      // A slowloris-style server: headers at once, then one byte every 100 ms, forever.
      response.writeHead(200, { 'content-type': 'text/html' });
      const timer = setInterval(() => response.write('a'), 100);
      response.on('close', () => clearInterval(timer));
    });
    server.route('GET /huge', (_request, response) => {
      // 64 MiB of HTML, written as fast as the client reads it.
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      const chunk = Buffer.from(`<p>${'x'.repeat(65_530)}</p>`);
      let remaining = 1024;
      hugeBytesWritten = 0;
      hugeFinished = false;
      const pump = (): void => {
        while (remaining > 0) {
          remaining -= 1;
          hugeBytesWritten += chunk.length;
          if (!response.write(chunk)) {
            response.once('drain', pump);
            return;
          }
        }
        hugeFinished = true;
        response.end();
      };
      response.on('close', () => (remaining = 0));
      pump();
    });
    server.route('GET /gzip', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      response.end(gzipSync(Buffer.from('compressed body '.repeat(100))));
    });
    server.route('GET /gzip-bomb', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      response.end(gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x61)));
    });
    server.route('GET /post-redirect', (_request, response) => {
      response.writeHead(303, { location: '/echo-method' });
      response.end();
    });
    server.route('GET /echo-method', (request, response) =>
      response.end(`${request.method} ${request.headers['x-api-key'] ?? 'no-key'}`),
    );
    server.route('POST /post-redirect', (_request, response) => {
      response.writeHead(303, { location: '/echo-method' });
      response.end();
    });
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('detects redirect loops', async () => {
    const error = await fetchError(client.fetch(`${server.origin}/loop-a`));
    expect(error.code).toBe('redirect_loop');
    expect(error.isRetryable).toBe(false);
  });

  it('stops after maxRedirects', async () => {
    const error = await fetchError(client.fetch(`${server.origin}/chain-0`, { maxRedirects: 3 }));
    expect(error.code).toBe('too_many_redirects');
    const followed = await client.fetch(`${server.origin}/chain-0`, { maxRedirects: 8 });
    expect(Buffer.from(followed.body).toString()).toBe('end of chain');
    expect(followed.redirects).toHaveLength(8);
    expect(followed.url).toBe(`${server.origin}/chain-8`);
  });

  it('gives up on a server that trickles bytes, at the total deadline', async () => {
    const error = await fetchError(client.fetch(`${server.origin}/trickle`, { timeoutMs: 700 }));
    expect(error.code).toBe('fetch_timeout');
    expect(error.isRetryable).toBe(true);
    expect(error.message).toContain('700 ms');
  });

  it('reads a huge page only up to the cap and hangs up', async () => {
    const response = await client.fetch(`${server.origin}/huge`, { maxBytes: 200_000 });
    expect(response.body.byteLength).toBe(200_000);
    expect(response.truncated).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The server never got to write the whole 64 MiB: the client stopped reading.
    expect(hugeFinished).toBe(false);
    expect(hugeBytesWritten).toBeLessThan(64 * 1024 * 1024);
  });

  it('decompresses gzip and caps the decompressed size (no zip bombs)', async () => {
    const plain = await client.fetch(`${server.origin}/gzip`);
    expect(Buffer.from(plain.body).toString()).toBe('compressed body '.repeat(100));
    const bomb = await client.fetch(`${server.origin}/gzip-bomb`, { maxBytes: 1_000_000 });
    expect(bomb.body.byteLength).toBe(1_000_000);
    expect(bomb.truncated).toBe(true);
  });

  it('turns a POST into a GET on 303 and keeps same-origin headers', async () => {
    const response = await client.fetch(`${server.origin}/post-redirect`, {
      method: 'POST',
      body: '{}',
      headers: { 'x-api-key': 'secret' },
    });
    expect(Buffer.from(response.body).toString()).toBe('GET secret');
  });

  it('honours an already-aborted signal and a signal aborted mid-flight', async () => {
    const aborted = new AbortController();
    aborted.abort(new Error('cancelled by caller'));
    await expect(
      client.fetch(`${server.origin}/trickle`, { signal: aborted.signal }),
    ).rejects.toThrow('cancelled by caller');
    const later = new AbortController();
    setTimeout(() => later.abort(new Error('stopped')), 150);
    await expect(
      client.fetch(`${server.origin}/trickle`, { signal: later.signal, timeoutMs: 10_000 }),
    ).rejects.toThrow('stopped');
  });

  it('reports connection failures as retryable network errors', async () => {
    const closed = await startFixtureServer();
    const origin = closed.origin;
    await closed.close();
    const error = await fetchError(client.fetch(`${origin}/`));
    expect(error.code).toBe('network_error');
    expect(error.isRetryable).toBe(true);
  });
});
