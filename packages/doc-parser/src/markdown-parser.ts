import { DocumentBuilder } from './document-builder.js';
import type { FormatResult } from './format-result.js';

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)?.*$/;
const ATX_HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_DIVIDER = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;
const THEMATIC_BREAK = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const IMAGE_LINE = /^\s*!\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)\s*$/;

/**
 * @internal Markdown (CommonMark/GFM block structure): ATX and setext headings, fenced and
 * indented code, bullet and numbered lists, pipe tables, block quotes, images, front matter
 * (kept in `metadata.frontMatter`). Inline markup is reduced to its text (links keep their
 * label, images their alt text).
 */
export function parseMarkdown(source: string): FormatResult {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const builder = new DocumentBuilder();
  builder.page(1);
  const metadata: Record<string, unknown> = {};
  let index = 0;
  if (lines[0] === '---') {
    const end = lines.indexOf('---', 1);
    if (end > 0) {
      metadata.frontMatter = lines.slice(1, end).join('\n');
      index = end + 1;
    }
  }
  let title: string | undefined;
  let paragraph: string[] = [];
  const flushParagraph = (): void => {
    if (paragraph.length > 0)
      builder.add({ type: 'paragraph', text: inlineMarkdown(paragraph.join('\n')) });
    paragraph = [];
  };
  const heading = (text: string, level: number): void => {
    const clean = inlineMarkdown(text);
    if (level === 1 && !title) title = clean;
    builder.add({ type: 'heading', text: clean, level });
  };

  while (index < lines.length) {
    const line = lines[index]!;
    const fence = FENCE.exec(line);
    if (fence) {
      flushParagraph();
      const marker = fence[1]!;
      const body: string[] = [];
      index += 1;
      while (index < lines.length && !lines[index]!.trimStart().startsWith(marker))
        body.push(lines[index++]!);
      index += 1;
      builder.add({ type: 'code', text: body.join('\n'), language: fence[2] || undefined });
      continue;
    }
    if (!line.trim()) {
      flushParagraph();
      index += 1;
      continue;
    }
    const atx = ATX_HEADING.exec(line);
    if (atx) {
      flushParagraph();
      heading(atx[2] ?? '', atx[1]!.length);
      index += 1;
      continue;
    }
    const next = lines[index + 1];
    if (
      paragraph.length === 0 &&
      next !== undefined &&
      /^ {0,3}(=+|-+)\s*$/.test(next) &&
      !LIST_ITEM.test(line)
    ) {
      heading(line, next.trim().startsWith('=') ? 1 : 2);
      index += 2;
      continue;
    }
    if (THEMATIC_BREAK.test(line)) {
      flushParagraph();
      index += 1;
      continue;
    }
    if (paragraph.length === 0 && /^( {4}|\t)/.test(line)) {
      const body: string[] = [];
      while (index < lines.length && (/^( {4}|\t)/.test(lines[index]!) || !lines[index]!.trim())) {
        body.push(lines[index]!.replace(/^( {4}|\t)/, ''));
        index += 1;
      }
      builder.add({ type: 'code', text: body.join('\n') });
      continue;
    }
    if (line.includes('|') && next !== undefined && TABLE_DIVIDER.test(next)) {
      flushParagraph();
      const rows = [splitTableRow(line)];
      index += 2;
      while (index < lines.length && lines[index]!.includes('|') && lines[index]!.trim())
        rows.push(splitTableRow(lines[index++]!));
      builder.add({ type: 'table', rows: rows.map((row) => row.map(inlineMarkdown)) });
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (item && (paragraph.length === 0 || !/^\d/.test(item[2]!) || item[2]!.startsWith('1'))) {
      flushParagraph();
      const ordered = /^\d/.test(item[2]!);
      const items: string[] = [];
      let current: string[] = [];
      while (index < lines.length) {
        const text = lines[index]!;
        const match = LIST_ITEM.exec(text);
        if (match) {
          if (current.length > 0) items.push(current.join('\n'));
          current = [match[3]!];
        } else if (
          text.trim() &&
          (/^\s/.test(text) || current.length > 0) &&
          !ATX_HEADING.test(text) &&
          !FENCE.test(text)
        ) {
          if (!/^\s/.test(text) && lines[index - 1]!.trim() === '') break;
          current.push(text.trim());
        } else if (!text.trim()) {
          const following = lines[index + 1];
          if (
            following === undefined ||
            !(LIST_ITEM.test(following) || /^\s{2,}\S/.test(following))
          )
            break;
        } else break;
        index += 1;
      }
      if (current.length > 0) items.push(current.join('\n'));
      builder.add({ type: 'list', items: items.map(inlineMarkdown), ordered });
      continue;
    }
    const image = IMAGE_LINE.exec(line);
    if (image && paragraph.length === 0) {
      builder.add({ type: 'image', alt: image[1], src: image[2] });
      index += 1;
      continue;
    }
    paragraph.push(line.replace(/^ {0,3}>\s?/, ''));
    index += 1;
  }
  flushParagraph();
  return { pages: builder.build(), title, metadata };
}

function splitTableRow(line: string): string[] {
  const trimmed = line
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '');
  return trimmed.split(/(?<!\\)\|/).map((cell) => cell.replace(/\\\|/g, '|').trim());
}

/** @internal Markdown inline syntax reduced to plain text. */
export function inlineMarkdown(text: string): string {
  return text
    .replace(/^ {0,3}>\s?/gm, '')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
    .replace(/<(https?:\/\/[^>\s]+)>/g, '$1')
    .replace(/<\/?[a-zA-Z][^>]*>/g, '')
    .replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_, _ticks, code: string) => code.trim())
    .replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, '$2')
    .replace(/(^|[^\w*])\*(?=\S)([^*]*?\S)\*(?!\w)/g, '$1$2')
    .replace(/(^|[^\w])_(?=\S)([^_]*?\S)_(?!\w)/g, '$1$2')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '$1')
    .replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, '$1');
}
