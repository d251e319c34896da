import type { DocumentBlock, DocumentPage } from '@quiver/core';

/** A block before page and heading path are attached. */
export type BlockDraft =
  | { type: 'paragraph'; text: string }
  | { type: 'heading'; text: string; level: number }
  | { type: 'list'; items: string[]; ordered?: boolean }
  | { type: 'table'; rows: string[][] }
  | { type: 'code'; text: string; language?: string }
  | { type: 'image'; alt?: string; src?: string };

/**
 * @internal Collects blocks page by page and gives each its heading path: a heading of level
 * N replaces everything at level ≥ N on the stack, so blocks carry the titles they sit under.
 */
export class DocumentBuilder {
  private readonly pages = new Map<number, DocumentBlock[]>();
  private readonly headings: { level: number; text: string }[] = [];
  private currentPage = 1;

  /** Start (or continue) page `page` (1-based). Empty pages are kept so page numbers stay true. */
  page(page: number): void {
    this.currentPage = page;
    if (!this.pages.has(page)) this.pages.set(page, []);
  }

  /** Forget the heading stack (e.g. at a new slide or sheet, whose title is its own root). */
  resetHeadings(): void {
    this.headings.length = 0;
  }

  add(draft: BlockDraft): void {
    const blocks = this.pages.get(this.currentPage) ?? [];
    this.pages.set(this.currentPage, blocks);
    const headingPath = this.headings.map((heading) => heading.text);
    const page = this.currentPage;
    switch (draft.type) {
      case 'paragraph': {
        const text = cleanInline(draft.text);
        if (text) blocks.push({ type: 'paragraph', page, headingPath, text });
        return;
      }
      case 'heading': {
        const text = cleanInline(draft.text);
        if (!text) return;
        const level = Math.min(6, Math.max(1, Math.round(draft.level)));
        // A heading sits under the open headings of a higher rank only (it closes its siblings).
        while (this.headings.length > 0 && this.headings[this.headings.length - 1]!.level >= level)
          this.headings.pop();
        blocks.push({
          type: 'heading',
          page,
          headingPath: this.headings.map((heading) => heading.text),
          text,
          level,
        });
        this.headings.push({ level, text });
        return;
      }
      case 'list': {
        const items = draft.items.map(cleanInline).filter((item) => item.length > 0);
        if (items.length === 0) return;
        const text = items
          .map((item, index) => (draft.ordered ? `${index + 1}. ${item}` : `- ${item}`))
          .join('\n');
        blocks.push({
          type: 'list',
          page,
          headingPath,
          text,
          items,
          ...(draft.ordered ? { ordered: true } : {}),
        });
        return;
      }
      case 'table': {
        const rows = draft.rows
          .map((row) => row.map((cell) => cleanInline(cell)))
          .filter((row) => row.some((cell) => cell.length > 0));
        if (rows.length === 0) return;
        blocks.push({ type: 'table', page, headingPath, text: renderTable(rows), rows });
        return;
      }
      case 'code': {
        const text = draft.text.replace(/\s+$/, '');
        if (!text.trim()) return;
        blocks.push({
          type: 'code',
          page,
          headingPath,
          text,
          ...(draft.language ? { language: draft.language } : {}),
        });
        return;
      }
      case 'image': {
        const alt = draft.alt ? cleanInline(draft.alt) : undefined;
        blocks.push({
          type: 'image',
          page,
          headingPath,
          text: alt ? `[image: ${alt}]` : '[image]',
          ...(alt ? { alt } : {}),
          ...(draft.src ? { src: draft.src } : {}),
        });
        return;
      }
    }
  }

  /** The pages in order. */
  build(): DocumentPage[] {
    return [...this.pages.entries()]
      .sort(([a], [b]) => a - b)
      .map(([page, blocks]) => ({ page, blocks }));
  }
}

/** Collapse runs of spaces and tabs, trim each line, drop control characters; keep single newlines. */
export function cleanInline(text: string): string {
  return (
    text
      // Control characters (other than tab and newlines) are noise from extraction, never content.
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '')
      .replace(/\u00a0/g, ' ')
      .split(/\r?\n/)
      .map((line) => line.replace(/[ \t]+/g, ' ').trim())
      .filter(
        (line, index, lines) => line.length > 0 || (index > 0 && lines[index - 1]!.length > 0),
      )
      .join('\n')
      .trim()
  );
}

/** A table as Markdown pipe rows; the first row is taken as the header. */
export function renderTable(rows: string[][]): string {
  const width = Math.max(...rows.map((row) => row.length));
  const line = (row: string[]): string =>
    `| ${Array.from({ length: width }, (_, index) => (row[index] ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ')).join(' | ')} |`;
  const [header, ...body] = rows;
  return [line(header!), `|${' --- |'.repeat(width)}`, ...body.map(line)].join('\n');
}

/** The text of one block as it appears in `ParsedDocument.text` and in chunks. */
export function blockText(block: DocumentBlock): string {
  if (block.type === 'heading') return `${'#'.repeat(block.level)} ${block.text}`;
  if (block.type === 'code') return `\`\`\`${block.language ?? ''}\n${block.text}\n\`\`\``;
  return block.text;
}

/** Flat text of pages: blocks separated by blank lines. */
export function pagesText(pages: DocumentPage[]): string {
  return pages
    .flatMap((page) => page.blocks.map(blockText))
    .filter((text) => text.length > 0)
    .join('\n\n');
}
