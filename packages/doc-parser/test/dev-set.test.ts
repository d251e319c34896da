import { describe, expect, it } from '@jest/globals';
import type { ParsedDocument } from '@quiver/core';
import { parseDocument } from '../src/index.js';
import { devFile, manifest, norm } from './helpers/fixtures.js';

const formatNames: Record<string, string> = { md: 'markdown' };

describe('dev set: every file parses and every snippet is extracted', () => {
  const parsed = new Map<string, ParsedDocument>();

  it.each(manifest.files.map((entry) => [entry.file, entry] as const))(
    '%s',
    async (_name, entry) => {
      const document = await parseDocument(devFile(entry.file), { cacheDir: false });
      parsed.set(entry.file, document);
      expect(document.format).toBe(formatNames[entry.format] ?? entry.format);
      const text = norm(document.text);
      const missing = entry.snippets.filter((snippet) => !text.includes(norm(snippet)));
      expect(missing).toEqual([]);
      expect(document.tokenCount).toBeGreaterThan(0);
      for (const page of document.pages)
        for (const block of page.blocks) expect(block.page).toBe(page.page);
    },
  );

  it('reads the 3-column Federal Register page column by column, with 15 pages', async () => {
    const document =
      parsed.get('pdf/federal-register-2020-17221.pdf') ??
      (await parseDocument(devFile('pdf/federal-register-2020-17221.pdf'), { cacheDir: false }));
    expect(document.pages).toHaveLength(15);
    const text = norm(document.text);
    // The first column's sentence continues across three lines; interleaved columns would break it.
    expect(text).toContain(
      norm(
        'The purpose of these notices is to give interested persons an opportunity to participate in the rule making prior to the adoption of the final rules.',
      ),
    );
    // The snippet on page 1 is found on page 1 (pages are real page numbers).
    const page1 = norm(document.pages[0]!.blocks.map((block) => block.text).join(' '));
    expect(page1).toContain('Docket No. FAA–2020–0686');
  });

  it('drops the running header and page numbers, and puts footnotes after the body text', async () => {
    const document =
      parsed.get('pdf/federal-register-2020-17221.pdf') ??
      (await parseDocument(devFile('pdf/federal-register-2020-17221.pdf'), { cacheDir: false }));
    expect(document.text).not.toContain(
      'Federal Register / Vol. 85, No. 152 / Thursday, August 6, 2020 / Proposed Rules',
    );
    const page2 = document.pages[1]!.blocks;
    expect(page2[0]!.text.startsWith('Hatta International Airport')).toBe(true);
    const firstNote = page2.findIndex((block) => block.text.startsWith('1 Preliminary KNKT'));
    expect(firstNote).toBeGreaterThan(
      page2.findIndex((block) => block.text.startsWith('Following the Lion Air Flight 610')),
    );
  });

  it('keeps each NICS table row on one row: Alabama ends with 71,137, Wyoming with 5,017', async () => {
    const document =
      parsed.get('pdf/nics-background-checks-2015-11.pdf') ??
      (await parseDocument(devFile('pdf/nics-background-checks-2015-11.pdf'), { cacheDir: false }));
    const tables = document.pages
      .flatMap((page) => page.blocks)
      .filter((block) => block.type === 'table');
    expect(tables.length).toBeGreaterThan(0);
    const rows = tables.flatMap((table) => (table.type === 'table' ? table.rows : []));
    const alabama = rows.find((row) => row[0] === 'Alabama');
    const wyoming = rows.find((row) => row[0] === 'Wyoming');
    expect(alabama?.at(-1)).toBe('71,137');
    expect(wyoming?.at(-1)).toBe('5,017');
    expect(alabama!.length).toBeGreaterThanOrEqual(20);
  });

  it('finds headings by font size in the Federal Register and gives blocks their heading path', async () => {
    const document =
      parsed.get('pdf/federal-register-2020-17221.pdf') ??
      (await parseDocument(devFile('pdf/federal-register-2020-17221.pdf'), { cacheDir: false }));
    const blocks = document.pages.flatMap((page) => page.blocks);
    const headings = blocks.filter((block) => block.type === 'heading');
    expect(headings.length).toBeGreaterThan(0);
    const under = blocks.find(
      (block) => block.type === 'paragraph' && block.headingPath.length > 0,
    );
    expect(under).toBeDefined();
    expect(headings.map((heading) => heading.text)).toContain(
      under!.headingPath[under!.headingPath.length - 1],
    );
  });
});
