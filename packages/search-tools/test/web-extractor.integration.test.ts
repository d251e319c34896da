import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ServerResponse } from 'node:http';
import {
  BlockedUrlError,
  createWebExtractor,
  type WebExtractor,
  WebFetchError,
} from '../src/index.js';
import { fixture, type FixtureServer, startFixtureServer } from './helpers/fixture-server.js';

async function fetchError(promise: Promise<unknown>): Promise<WebFetchError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WebFetchError) return error;
    throw error;
  }
  throw new Error('expected a WebFetchError');
}

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

describe('web extractor against a local server with saved real pages', () => {
  let server: FixtureServer;
  let extractor: WebExtractor;
  let imageBytesWritten = 0;
  let imageFinished = false;

  beforeAll(async () => {
    server = await startFixtureServer();
    extractor = createWebExtractor({ allow: ['127.0.0.1'], timeoutMs: 5_000 });
    const html =
      (name: string, contentType = 'text/html; charset=utf-8') =>
      (_request: unknown, response: ServerResponse) => {
        response.writeHead(200, { 'content-type': contentType });
        response.end(fixture('pages', name));
      };
    server.route('GET /wiki/Mozilla', html('wikipedia-mozilla.html'));
    server.route('GET /fff-282', html('keep-tabular-data.html', 'text/html'));
    server.route('GET /gbk-header', html('qq-deepmind-gbk.html', 'text/html; charset=GBK'));
    server.route('GET /gbk-meta', html('qq-deepmind-gbk.html', 'text/html'));
    server.route('GET /old-address', (_request, response) => {
      response.writeHead(301, { location: '/wiki/Mozilla' });
      response.end();
    });
    server.route('GET /logo.png', (_request, response) => {
      // A 32 MiB "photo": the extractor must not download it.
      response.writeHead(200, {
        'content-type': 'image/png',
        'content-length': String(PNG.length + 32 * 1024 * 1024),
      });
      response.write(PNG);
      const chunk = Buffer.alloc(64 * 1024);
      let remaining = 512;
      const pump = (): void => {
        while (remaining > 0) {
          remaining -= 1;
          imageBytesWritten += chunk.length;
          if (!response.write(chunk)) {
            response.once('drain', pump);
            return;
          }
        }
        imageFinished = true;
        response.end();
      };
      response.on('close', () => (remaining = 0));
      pump();
    });
    server.route('GET /download', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      response.end(
        Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 0]), Buffer.alloc(2048, 0)]),
      );
    });
    server.route('GET /files/nics-background-checks-2015-11.pdf', (_request, response) => {
      const pdf = fixture('documents', 'nics-background-checks-2015-11.pdf');
      response.writeHead(200, {
        'content-type': 'application/pdf',
        'content-length': String(pdf.length),
      });
      response.end(pdf);
    });
    server.route('GET /files/chunked.pdf', (_request, response) => {
      const pdf = fixture('documents', 'nics-background-checks-2015-11.pdf');
      response.writeHead(200, { 'content-type': 'application/pdf' });
      response.write(pdf.subarray(0, 1000));
      response.end(pdf.subarray(1000));
    });
    server.route('GET /download/report', (_request, response) => {
      // A DOCX served with a precise type but no file name in the URL.
      response.writeHead(200, {
        'content-type': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      });
      response.end(fixture('documents', 'testWORD_various.docx'));
    });
    server.route('GET /notes.txt', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      response.end('Plain notes.\nSecond line.');
    });
    server.route('GET /big', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.write(
        '<html><head><title>Big page</title></head><body><article><h1>Start of a huge page</h1>',
      );
      for (let index = 0; index < 4000; index += 1)
        response.write(`<p>Paragraph ${index} of filler text that goes on and on.</p>`);
      response.end('</article></body></html>');
    });
    server.route('GET /missing', (_request, response) => {
      response.writeHead(404, { 'content-type': 'text/html' });
      response.end('<h1>Not found</h1>');
    });
    server.route('GET /overloaded', (_request, response) => {
      response.writeHead(503, { 'content-type': 'text/html', 'retry-after': '7' });
      response.end('<h1>Try later</h1>');
    });
  });
  afterAll(async () => {
    await extractor.close();
    await server.close();
  });

  it('extracts title, canonical URL, text and links from a saved Wikipedia page', async () => {
    const page = await extractor.extract(`${server.origin}/wiki/Mozilla`);
    expect(page.title).toBe('Mozilla - Wikipedia');
    expect(page.canonicalUrl).toBe('https://en.wikipedia.org/wiki/Mozilla');
    expect(page.text).toContain(
      'Mozilla is a free-software community, created in 1998 by members of Netscape.',
    );
    expect(page.format).toBe('html');
    expect(page.charset).toBe('utf-8');
    expect(page.links.length).toBeGreaterThan(50);
    expect(page.truncated).toBe(false);
  });

  it('follows redirects and reports the final URL', async () => {
    const page = await extractor.extract(`${server.origin}/old-address`);
    expect(page.finalUrl).toBe(`${server.origin}/wiki/Mozilla`);
    expect(page.redirects).toEqual([`${server.origin}/old-address`]);
  });

  it('decodes GBK pages declared by header or by <meta>', async () => {
    for (const path of ['/gbk-header', '/gbk-meta']) {
      const page = await extractor.extract(`${server.origin}${path}`);
      expect(page.charset).toBe('gb18030');
      expect(page.title).toBe('DeepMind新电脑已可利用记忆自学 人工智能迈上新台阶_科技_腾讯网');
      expect(page.text).toContain('DeepMind表示，这款名为DNC（可微神经计算机）的AI模型');
    }
  });

  it('refuses images without downloading them and binary downloads after sniffing', async () => {
    const image = await fetchError(extractor.extract(`${server.origin}/logo.png`));
    expect(image.code).toBe('unsupported_content');
    expect(image.message).toContain('image/png');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(imageFinished).toBe(false);
    expect(imageBytesWritten).toBeLessThan(32 * 1024 * 1024);
    const binary = await fetchError(extractor.extract(`${server.origin}/download`));
    expect(binary.code).toBe('unsupported_content');
    expect(binary.isRetryable).toBe(false);
  });

  it('parses PDF and DOCX responses with @quiver/doc-parser (real documents)', async () => {
    const pdf = await extractor.extract(
      `${server.origin}/files/nics-background-checks-2015-11.pdf`,
    );
    expect(pdf.format).toBe('pdf');
    expect(pdf.text).toContain('NICS Firearm Background Checks');
    expect(pdf.text).toContain('November - 2015');
    const docx = await extractor.extract(`${server.origin}/download/report?id=7`);
    expect(docx.format).toBe('docx');
    expect(docx.text).toContain('Here is a numbered list:');
  });

  it('refuses documents when parsing is turned off, and cut documents', async () => {
    const noParser = createWebExtractor({ allow: ['127.0.0.1'], documentParser: false });
    try {
      const error = await fetchError(
        noParser.extract(`${server.origin}/files/nics-background-checks-2015-11.pdf`),
      );
      expect(error.code).toBe('unsupported_content');
      expect(error.message).toContain('PDF');
    } finally {
      await noParser.close();
    }
    // Declared too large: refused from the headers, never downloaded.
    const declared = await fetchError(
      extractor.extract(`${server.origin}/files/nics-background-checks-2015-11.pdf`, {
        maxBytes: 10_000,
      }),
    );
    expect(declared.code).toBe('content_too_large');
    expect(declared.message).toContain('not downloaded');
    // Chunked (no Content-Length): read up to the cap, then refused because a cut PDF is useless.
    const cut = await fetchError(
      extractor.extract(`${server.origin}/files/chunked.pdf`, { maxBytes: 10_000 }),
    );
    expect(cut.code).toBe('content_too_large');
    expect(cut.message).toContain('cannot be parsed');
  });

  it('returns plain text as is', async () => {
    const page = await extractor.extract(`${server.origin}/notes.txt`);
    expect(page).toMatchObject({
      format: 'text',
      text: 'Plain notes.\nSecond line.',
      title: 'notes.txt',
    });
  });

  it('reads only the first maxBytes of a huge page and says so', async () => {
    const page = await extractor.extract(`${server.origin}/big`, { maxBytes: 20_000 });
    expect(page.truncated).toBe(true);
    expect(page.title).toBe('Big page');
    expect(page.text).toContain('Start of a huge page');
    expect(page.text).toContain('Paragraph 10 ');
    expect(page.text).not.toContain('Paragraph 3999');
  });

  it('maps HTTP errors: 404 is final, 503 is retryable with Retry-After', async () => {
    const missing = await fetchError(extractor.extract(`${server.origin}/missing`));
    expect(missing).toMatchObject({ code: 'http_status', statusCode: 404, isRetryable: false });
    const overloaded = await fetchError(extractor.extract(`${server.origin}/overloaded`));
    expect(overloaded).toMatchObject({
      code: 'http_status',
      statusCode: 503,
      isRetryable: true,
      retryAfterMs: 7_000,
    });
  });

  it('rejects invalid URLs and non-http schemes before any request', async () => {
    const before = server.requests.length;
    expect((await fetchError(extractor.extract('not a url'))).code).toBe('invalid_url');
    await expect(extractor.extract('file:///etc/passwd')).rejects.toBeInstanceOf(BlockedUrlError);
    await expect(
      extractor.extract('http://169.254.169.254/latest/meta-data/'),
    ).rejects.toBeInstanceOf(BlockedUrlError);
    expect(server.requests.length).toBe(before);
  });
});
