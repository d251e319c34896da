import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ParsedDocument } from '@quiver/core';

/** @internal The default cache directory (see `ParseDocumentOptions.cacheDir`). */
export function defaultCacheDirectory(): string {
  if (process.env.QUIVER_DOC_PARSER_CACHE_DIR) return process.env.QUIVER_DOC_PARSER_CACHE_DIR;
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'quiver', 'doc-parser');
}

/**
 * @internal Parsed documents stored as JSON files named by a key derived from the content
 * hash and the options that change the output. Failures to read or write are ignored: the
 * cache only ever saves time, it never changes a result or causes an error.
 */
export class ParseCache {
  constructor(private readonly directory: string) {}

  async get(key: string): Promise<ParsedDocument | undefined> {
    try {
      const stored = JSON.parse(await readFile(this.file(key), 'utf8')) as ParsedDocument;
      return Array.isArray(stored.pages) && typeof stored.text === 'string' ? stored : undefined;
    } catch {
      return undefined;
    }
  }

  async set(key: string, document: ParsedDocument): Promise<void> {
    try {
      await mkdir(join(this.directory, key.slice(0, 2)), { recursive: true });
      // Write then rename, so a concurrent reader never sees half a file.
      const temporary = `${this.file(key)}.${process.pid}.${Date.now()}.tmp`;
      await writeFile(temporary, JSON.stringify(document));
      await rename(temporary, this.file(key));
    } catch {
      // A read-only or full disk must not fail the parse.
    }
  }

  private file(key: string): string {
    return join(this.directory, key.slice(0, 2), `${key}.json`);
  }
}
