import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseDocument } from '../src/index.js';
import { devBytes, norm } from './helpers/fixtures.js';

/** A real HTTP server on 127.0.0.1 (port 0) serving dev-set files and misbehaving on purpose. */
let server: Server;
let base: string;
const hanging = new Set<ServerResponse>();

beforeAll(async () => {
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    switch (url.pathname) {
      case '/report.pdf':
        response.writeHead(200, {
          'content-type': 'application/pdf',
          'content-length': devBytes('pdf/jo.pdf').length,
        });
        response.end(devBytes('pdf/jo.pdf'));
        return;
      case '/download':
        // No extension in the URL: the name comes from Content-Disposition, the format from the bytes.
        response.writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-disposition': 'attachment; filename="tables.docx"',
        });
        response.end(devBytes('docx/tables.docx'));
        return;
      case '/redirect':
        response.writeHead(302, { location: '/report.pdf' });
        response.end();
        return;
      case '/big-declared':
        response.writeHead(200, { 'content-length': 50_000_000 });
        response.end();
        return;
      case '/big-chunked':
        // No Content-Length: the cap must be enforced while streaming.
        response.writeHead(200, { 'content-type': 'text/plain' });
        for (let index = 0; index < 100; index += 1) response.write(Buffer.alloc(10_000, 0x61));
        response.end();
        return;
      case '/hang':
        hanging.add(response);
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.write('partial ');
        return;
      case '/busy':
        response.writeHead(503);
        response.end('try later');
        return;
      default:
        response.writeHead(404);
        response.end('not here');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const response of hanging) response.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('URL input', () => {
  it('downloads and parses a PDF, keeping the URL as source', async () => {
    const document = await parseDocument(`${base}/report.pdf`, { cacheDir: false });
    expect(document.source).toBe(`${base}/report.pdf`);
    expect(document.format).toBe('pdf');
    expect(norm(document.text)).toContain('わたくしといふ現象は');
    expect(document.metadata.contentType).toBe('application/pdf');
  });

  it('follows redirects and accepts a URL object', async () => {
    const document = await parseDocument(new URL(`${base}/redirect`), { cacheDir: false });
    expect(document.format).toBe('pdf');
  });

  it('names the download from Content-Disposition and detects the format from the bytes', async () => {
    const document = await parseDocument(`${base}/download`, { cacheDir: false });
    expect(document.format).toBe('docx');
    expect(document.title).toBe('tables');
  });

  it('uses an injected fetch', async () => {
    const seen: string[] = [];
    const countingFetch: typeof fetch = async (input, init) => {
      seen.push(String(input));
      return fetch(input, init);
    };
    await parseDocument(`${base}/report.pdf`, { cacheDir: false, fetch: countingFetch });
    expect(seen).toEqual([`${base}/report.pdf`]);
  });

  it('refuses a download whose Content-Length is above maxBytes, and one that streams past it', async () => {
    await expect(
      parseDocument(`${base}/big-declared`, { cacheDir: false, maxBytes: 1_000_000 }),
    ).rejects.toMatchObject({ code: 'too_large' });
    await expect(
      parseDocument(`${base}/big-chunked`, { cacheDir: false, maxBytes: 100_000 }),
    ).rejects.toMatchObject({
      code: 'too_large',
      message: expect.stringContaining('more than'),
    });
  });

  it('reports HTTP errors as fetch_failed, retryable for 5xx only', async () => {
    await expect(parseDocument(`${base}/missing.pdf`, { cacheDir: false })).rejects.toMatchObject({
      code: 'fetch_failed',
      isRetryable: false,
    });
    await expect(parseDocument(`${base}/busy`, { cacheDir: false })).rejects.toMatchObject({
      code: 'fetch_failed',
      isRetryable: true,
    });
  });

  it('gives up on a server that stops sending, with a timeout', async () => {
    await expect(
      parseDocument(`${base}/hang`, { cacheDir: false, timeoutMs: 300 }),
    ).rejects.toMatchObject({ code: 'timeout' });
  });

  it('reports an unreachable host as retryable fetch_failed', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(
      parseDocument(`http://127.0.0.1:${port}/x.pdf`, { cacheDir: false }),
    ).rejects.toMatchObject({ code: 'fetch_failed', isRetryable: true });
  });
});
