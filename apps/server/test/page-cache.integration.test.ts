import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { PageBackend } from '../src/index.js';
import { PageCache } from '../src/index.js';
import { startTestServer } from './helpers.js';

// A real HTTP server for the pages the cache fetches.
let site: { url: string; close: () => Promise<void> };
beforeAll(async () => {
  const server = createServer((request, response) => {
    if (request.url === '/article') {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(
        '<html><head><title>Owls</title></head><body><p>Owls hunt at night.</p></body></html>',
      );
    } else {
      response.writeHead(404).end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  site = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
});
afterAll(() => site.close());

/** Fetches over HTTP and keeps the indexed text in memory (the real KB is wired in the app). */
function backend(overrides: Partial<PageBackend> = {}) {
  const indexed = new Map<string, string>();
  const value: PageBackend & { indexed: Map<string, string> } = {
    indexed,
    async fetch(url, signal) {
      const response = await fetch(url, { signal });
      if (!response.ok) throw new Error(`HTTP ${response.status} from ${url}`);
      const html = await response.text();
      return {
        title: /<title>(.*?)<\/title>/.exec(html)?.[1] ?? url,
        content: html.replace(/<[^>]+>/g, ' ').trim(),
      };
    },
    async index(page) {
      indexed.set(page.id, page.content);
    },
    async remove(id) {
      indexed.delete(id);
    },
    ...overrides,
  };
  return value;
}

const tempFile = () => join(mkdtempSync(join(tmpdir(), 'quiver-pages-')), 'pages.json');

describe('page cache', () => {
  it('fetches, indexes and lists a posted page; content given is used as is', async () => {
    const pages = await PageCache.open(tempFile(), backend());
    const fetched = await pages.add({ url: `${site.url}/article` });
    expect(fetched.status).toBe('caching');
    const ready = await pages.settled(fetched.id);
    expect(ready?.status).toBe('ready');
    expect(ready?.title).toBe('Owls');
    const given = await pages.add({
      url: 'https://example.org/notes',
      title: 'Notes',
      content: 'Given text',
    });
    expect((await pages.settled(given.id))?.status).toBe('ready');
    expect(
      pages
        .list()
        .map((page) => page.title)
        .sort(),
    ).toEqual(['Notes', 'Owls']);
    await pages.close();
  });

  it('marks a page whose fetch fails as failed, with the reason, and indexes nothing', async () => {
    const store = backend();
    const pages = await PageCache.open(tempFile(), store);
    const page = await pages.add({ url: `${site.url}/missing` });
    const settled = await pages.settled(page.id);
    expect(settled?.status).toBe('failed');
    expect(settled?.error).toMatch(/HTTP 404/);
    expect(store.indexed.size).toBe(0);
    await pages.close();
  });

  it('updates a duplicate URL instead of adding it twice', async () => {
    const pages = await PageCache.open(tempFile(), backend());
    const first = await pages.add({ url: 'https://example.org/a#intro', content: 'v1' });
    await pages.settled(first.id);
    const second = await pages.add({ url: 'https://example.org/a', content: 'v2' });
    await pages.settled(second.id);
    expect(second.id).toBe(first.id);
    expect(pages.list()).toHaveLength(1);
    await pages.close();
  });

  it('keeps the history across restarts, and never leaves a page stuck in caching', async () => {
    const file = tempFile();
    let release!: () => void;
    const hanging = backend({
      index: (_page, signal) =>
        new Promise<void>((resolve, reject) => {
          release = resolve;
          signal.addEventListener('abort', () => reject(new Error('stopped')));
        }),
    });
    const first = await PageCache.open(file, hanging);
    const page = await first.add({ url: `${site.url}/article`, content: 'Owls hunt at night.' });
    await first.setSelected(page.id, false);
    // The process stops in the middle of indexing.
    await first.close();
    expect(
      (JSON.parse(readFileSync(file, 'utf8')) as { pages: { status: string }[] }).pages[0]!.status,
    ).toBe('caching');
    void release;

    const second = await PageCache.open(file, backend());
    const after = await second.settled(page.id);
    expect(after?.status).toBe('ready');
    expect(after?.selected).toBe(false);
    await second.close();

    // Re-queued but unreachable now: it ends failed, not caching.
    const third = await PageCache.open(
      file,
      backend({ fetch: async () => Promise.reject(new Error('offline')) }),
    );
    await third.add({ url: `${site.url}/other` });
    await third.close();
    const fourth = await PageCache.open(
      file,
      backend({ fetch: async () => Promise.reject(new Error('offline')) }),
    );
    for (const entry of fourth.list()) await fourth.settled(entry.id);
    expect(fourth.list().every((entry) => entry.status !== 'caching')).toBe(true);
    await fourth.close();
  });

  it('is served under /v1/pages with selection and the current page', async () => {
    const pages = await PageCache.open(tempFile(), backend());
    const server = await startTestServer({ pages });
    try {
      const posted = await fetch(`${server.url}/v1/pages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${site.url}/article` }),
      });
      expect(posted.status).toBe(202);
      const { page } = (await posted.json()) as { page: { id: string } };
      await pages.settled(page.id);
      const listed = (await (await fetch(`${server.url}/v1/pages`)).json()) as {
        pages: { id: string; status: string }[];
      };
      expect(listed.pages.find((entry) => entry.id === page.id)?.status).toBe('ready');
      const patched = await fetch(`${server.url}/v1/pages/${page.id}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ selected: false }),
      });
      expect(((await patched.json()) as { page: { selected: boolean } }).page.selected).toBe(false);
      const current = await fetch(`${server.url}/v1/pages/current`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${site.url}/article` }),
      });
      expect(((await current.json()) as { page: { id: string } }).page.id).toBe(page.id);
      expect(pages.current()?.id).toBe(page.id);
      const bad = await fetch(`${server.url}/v1/pages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'not a url' }),
      });
      expect(bad.status).toBe(400);
      const missing = await fetch(`${server.url}/v1/pages/nope`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ selected: true }),
      });
      expect(missing.status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
