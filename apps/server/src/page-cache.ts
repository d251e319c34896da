import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import writeFileAtomic from 'write-file-atomic';
import { dirname } from 'node:path';
import { errorMessage } from '@quiver/core';
import type { Logger } from '@quiver/core';
import { silentLogger } from '@quiver/core';

/** Where a cached page is: being fetched/indexed, ready for the Assistant, or failed (with why). */
export type PageStatus = 'caching' | 'ready' | 'failed';

/** One entry of the browsing history. */
export interface CachedPage {
  id: string;
  url: string;
  title: string;
  status: PageStatus;
  /** Why it failed, when it did. */
  error?: string;
  /** Selected for the Assistant's context (Qwen-Agent's checkbox). */
  selected: boolean;
  addedAt: string;
  updatedAt: string;
  /** Characters of text indexed. */
  size?: number;
}

/** What the page cache needs from the rest of the system. */
export interface PageBackend {
  /** Fetch a page's main text (e.g. through web_extractor). */
  fetch(url: string, signal: AbortSignal): Promise<{ title: string; content: string }>;
  /** Index a page's text under its id (replacing an earlier version); reject to mark it failed. */
  index(
    page: { id: string; url: string; title: string; content: string },
    signal: AbortSignal,
  ): Promise<void>;
  /** Remove a page from the index. */
  remove?(id: string): Promise<void>;
}

interface StoredState {
  version: 1;
  pages: CachedPage[];
  currentPageId?: string;
}

/**
 * Browsing history with a page cache (Qwen-Agent's database server): pages posted by a browser
 * extension or script are fetched (unless their content is given), indexed asynchronously, and
 * selectable for the Assistant. The history is a JSON file written atomically, so it survives
 * restarts; a page still `caching` when the process stopped is queued again on start.
 */
export class PageCache {
  readonly #file: string;
  readonly #backend: PageBackend;
  readonly #logger: Logger;
  #state: StoredState = { version: 1, pages: [] };
  #writing: Promise<void> = Promise.resolve();
  readonly #jobs = new Map<string, { controller: AbortController; done: Promise<void> }>();
  readonly #pendingContent = new Map<string, { title: string; content: string }>();

  private constructor(file: string, backend: PageBackend, logger: Logger) {
    this.#file = file;
    this.#backend = backend;
    this.#logger = logger;
  }

  /** Open (or create) the history stored in `file`, and re-queue pages left `caching`. */
  static async open(
    file: string,
    backend: PageBackend,
    options: { logger?: Logger } = {},
  ): Promise<PageCache> {
    const cache = new PageCache(file, backend, options.logger ?? silentLogger);
    try {
      const parsed = JSON.parse(await readFile(file, 'utf8')) as StoredState;
      if (parsed.version === 1 && Array.isArray(parsed.pages)) cache.#state = parsed;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        cache.#logger.warn('page history unreadable; starting a new one', {
          file,
          error: errorMessage(error),
        });
      }
    }
    for (const page of cache.#state.pages.filter((entry) => entry.status === 'caching')) {
      // Interrupted by a restart: the content given with the request is gone, so fetch it again.
      cache.#startJob(page.id);
    }
    return cache;
  }

  /** The history, newest first. */
  list(): CachedPage[] {
    return [...this.#state.pages]
      .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))
      .map((page) => ({ ...page }));
  }

  get(id: string): CachedPage | undefined {
    const page = this.#state.pages.find((entry) => entry.id === id);
    return page ? { ...page } : undefined;
  }

  /** The page being viewed (the seed's pop_url), if any. */
  current(): CachedPage | undefined {
    return this.#state.currentPageId ? this.get(this.#state.currentPageId) : undefined;
  }

  /** Pages selected for the Assistant that are ready. */
  selected(): CachedPage[] {
    return this.list().filter((page) => page.selected && page.status === 'ready');
  }

  /**
   * Add or update a page. The same URL updates its entry instead of adding another. Indexing runs
   * in the background; the entry is `caching` until it is `ready` or `failed`.
   */
  async add(input: { url: string; title?: string; content?: string }): Promise<CachedPage> {
    const url = normaliseUrl(input.url);
    const id = pageId(url);
    const now = new Date().toISOString();
    const existing = this.#state.pages.find((page) => page.id === id);
    const page: CachedPage = existing ?? {
      id,
      url,
      title: input.title ?? url,
      status: 'caching',
      selected: true,
      addedAt: now,
      updatedAt: now,
    };
    page.title = input.title ?? page.title;
    page.status = 'caching';
    delete page.error;
    page.updatedAt = now;
    if (!existing) this.#state.pages.push(page);
    if (input.content !== undefined)
      this.#pendingContent.set(id, { title: page.title, content: input.content });
    else this.#pendingContent.delete(id);
    await this.#save();
    this.#startJob(id);
    return { ...page };
  }

  /** Select or deselect a page for the Assistant's context. */
  async setSelected(id: string, selected: boolean): Promise<CachedPage | undefined> {
    const page = this.#state.pages.find((entry) => entry.id === id);
    if (!page) return undefined;
    page.selected = selected;
    await this.#save();
    return { ...page };
  }

  /** Set the page being viewed, by id or URL (added first when unknown). */
  async setCurrent(input: { id?: string; url?: string }): Promise<CachedPage | undefined> {
    let page = input.id ? this.#state.pages.find((entry) => entry.id === input.id) : undefined;
    if (!page && input.url)
      page = this.#state.pages.find((entry) => entry.id === pageId(normaliseUrl(input.url!)));
    if (!page && input.url) {
      await this.add({ url: input.url });
      page = this.#state.pages.find((entry) => entry.id === pageId(normaliseUrl(input.url!)));
    }
    if (!page) return undefined;
    this.#state.currentPageId = page.id;
    await this.#save();
    return { ...page };
  }

  /** Wait for the page's indexing job (tests, scripts). */
  async settled(id: string): Promise<CachedPage | undefined> {
    await this.#jobs.get(id)?.done;
    return this.get(id);
  }

  /** Stop indexing jobs; pages they leave `caching` are re-queued on the next open. */
  async close(): Promise<void> {
    for (const job of this.#jobs.values()) job.controller.abort();
    await Promise.allSettled([...this.#jobs.values()].map((job) => job.done));
    await this.#writing;
  }

  #startJob(id: string): void {
    this.#jobs.get(id)?.controller.abort();
    const controller = new AbortController();
    const done = this.#run(id, controller.signal).finally(() => {
      if (this.#jobs.get(id)?.controller === controller) this.#jobs.delete(id);
    });
    this.#jobs.set(id, { controller, done });
  }

  async #run(id: string, signal: AbortSignal): Promise<void> {
    const page = this.#state.pages.find((entry) => entry.id === id);
    if (!page) return;
    try {
      const given = this.#pendingContent.get(id);
      this.#pendingContent.delete(id);
      const { title, content } = given ?? (await this.#backend.fetch(page.url, signal));
      if (signal.aborted) return;
      if (content.trim() === '') throw new Error('the page has no text to index');
      await this.#backend.index({ id, url: page.url, title: title || page.title, content }, signal);
      if (signal.aborted) return;
      page.title = title || page.title;
      page.size = content.length;
      page.status = 'ready';
    } catch (error) {
      if (signal.aborted) return; // stopped by close() or a newer job: that one decides the status
      page.status = 'failed';
      page.error = errorMessage(error);
      // Never leave a half-indexed page around that could look ready later.
      await this.#backend.remove?.(id).catch(() => {});
    }
    page.updatedAt = new Date().toISOString();
    await this.#save();
  }

  #save(): Promise<void> {
    const snapshot = JSON.stringify(this.#state, null, 2);
    this.#writing = this.#writing
      .then(async () => {
        // Temp file, fsync, rename: a crash never leaves a torn history.
        await mkdir(dirname(this.#file), { recursive: true });
        await writeFileAtomic(this.#file, snapshot, { fsync: true });
      })
      .catch((error: unknown) => {
        this.#logger.error('could not save the page history', {
          file: this.#file,
          error: errorMessage(error),
        });
      });
    return this.#writing;
  }
}

function normaliseUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new TypeError(`Only http(s) pages can be cached, not ${parsed.protocol}`);
  parsed.hash = '';
  return parsed.toString();
}

function pageId(url: string): string {
  return createHash('sha256').update(url).digest('hex').slice(0, 16);
}
