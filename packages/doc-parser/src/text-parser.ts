import { DocumentBuilder } from './document-builder.js';
import { DocumentParseError } from './errors.js';
import type { FormatResult } from './format-result.js';

/** @internal Plain text: paragraphs at blank lines, pages at form feeds (as `pdftotext` writes them). */
export function parseText(text: string): FormatResult {
  const builder = new DocumentBuilder();
  text
    .replace(/\r\n?/g, '\n')
    .split('\f')
    .forEach((pageText, index) => {
      builder.page(index + 1);
      for (const paragraph of pageText.split(/\n\s*\n/))
        builder.add({ type: 'paragraph', text: paragraph });
    });
  return { pages: builder.build(), title: undefined, metadata: {} };
}

/**
 * @internal JSON: validated, then kept as one pretty-printed `json` code block (chunking splits
 * it at line boundaries). A top-level string `title` or `name` becomes the title.
 */
export function parseJson(text: string, source: string | undefined): FormatResult {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new DocumentParseError(
      'corrupted',
      `${source ? `"${source}"` : 'The input'} is not valid JSON (${(error as Error).message}). Fix the syntax, or parse it as text with format: 'text'.`,
      { source, format: 'json', cause: error },
    );
  }
  const builder = new DocumentBuilder();
  builder.page(1);
  builder.add({ type: 'code', text: JSON.stringify(value, null, 2), language: 'json' });
  const record =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  const title =
    typeof record?.title === 'string'
      ? record.title
      : typeof record?.name === 'string'
        ? record.name
        : undefined;
  return {
    pages: builder.build(),
    title,
    metadata: {
      jsonType: Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value,
      ...(Array.isArray(value) ? { items: value.length } : {}),
    },
  };
}
