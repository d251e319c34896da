import { copyFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parseDocument } from '../src/index.js';
import { devFile, temporaryDirectory } from './helpers/fixtures.js';

describe('parse cache', () => {
  it('stores a parse by content hash and serves the same document next time', async () => {
    const cacheDir = temporaryDirectory();
    const first = await parseDocument(devFile('docx/tables.docx'), { cacheDir });
    expect(first.metadata.cached).toBeUndefined();
    expect(readdirSync(cacheDir).length).toBe(1);
    const second = await parseDocument(devFile('docx/tables.docx'), { cacheDir });
    expect(second.metadata.cached).toBe(true);
    expect(second.pages).toEqual(first.pages);
    expect(second.text).toBe(first.text);
  });

  it('keys on content, not on the path: a copy hits, a changed file misses', async () => {
    const cacheDir = temporaryDirectory();
    const directory = temporaryDirectory();
    const copy = join(directory, 'renamed.docx');
    copyFileSync(devFile('docx/tables.docx'), copy);
    await parseDocument(devFile('docx/tables.docx'), { cacheDir });
    const hit = await parseDocument(copy, { cacheDir });
    expect(hit.metadata.cached).toBe(true);
    expect(hit.source).toBe(copy);
    expect(hit.title).toBe('renamed');

    const text = join(directory, 'notes.txt');
    writeFileSync(text, 'version one');
    await parseDocument(text, { cacheDir });
    writeFileSync(text, 'version two');
    const changed = await parseDocument(text, { cacheDir });
    expect(changed.metadata.cached).toBeUndefined();
    expect(changed.text).toBe('version two');
  });

  it('separates options that change the output (maxRows)', async () => {
    const cacheDir = temporaryDirectory();
    const csv = Buffer.from(
      ['a,b', ...Array.from({ length: 20 }, (_, index) => `${index},x`)].join('\n'),
    );
    const full = await parseDocument(csv, { cacheDir, filename: 'x.csv' });
    const capped = await parseDocument(csv, { cacheDir, filename: 'x.csv', maxRows: 5 });
    expect(capped.metadata.cached).toBeUndefined();
    expect(full.metadata.warnings).toEqual([]);
    expect(capped.metadata.warnings).toHaveLength(1);
  });

  it('ignores a damaged cache entry and an unwritable cache directory', async () => {
    const cacheDir = temporaryDirectory();
    await parseDocument(devFile('md/readability-README.md'), { cacheDir });
    const [bucket] = readdirSync(cacheDir);
    const [file] = readdirSync(join(cacheDir, bucket!));
    writeFileSync(join(cacheDir, bucket!, file!), '{ not json');
    const again = await parseDocument(devFile('md/readability-README.md'), { cacheDir });
    expect(again.metadata.cached).toBeUndefined();
    expect(again.format).toBe('markdown');
    const blocked = join(temporaryDirectory(), 'file');
    writeFileSync(blocked, 'a file where a directory should be');
    const document = await parseDocument(devFile('md/readability-README.md'), {
      cacheDir: join(blocked, 'cache'),
    });
    expect(document.format).toBe('markdown');
  });
});
