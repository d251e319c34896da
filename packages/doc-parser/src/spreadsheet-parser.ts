import type { Element } from 'domhandler';
import type { Deadline } from './deadline.js';
import { readCoreProperties } from './docx-parser.js';
import { DocumentBuilder } from './document-builder.js';
import { DocumentParseError } from './errors.js';
import type { FormatResult } from './format-result.js';
import {
  child,
  childElements,
  descendants,
  parseRelationships,
  parseXml,
  path,
  textContent,
} from './xml.js';
import type { ZipArchive } from './zip-archive.js';

/**
 * @internal XLSX: one page per sheet (in workbook order), the sheet name as a heading and its
 * used range as one table whose first non-empty row is the header. Cells give their cached
 * values (formulas are not recomputed). At most `maxRows` rows per sheet; a cut is noted.
 */
export async function parseXlsx(
  archive: ZipArchive,
  deadline: Deadline,
  maxRows: number,
): Promise<FormatResult> {
  const workbook = parseXml(archive.readText('xl/workbook.xml') ?? '').find(
    (element) => element.name === 'workbook',
  );
  const relationships = parseRelationships(archive.readText('xl/_rels/workbook.xml.rels'), 'xl');
  const sharedStrings = readSharedStrings(archive.readText('xl/sharedStrings.xml'));
  const dates: DateContext = {
    styles: readDateStyles(archive.readText('xl/styles.xml')),
    date1904: ['1', 'true'].includes(path(workbook, 'workbookPr')?.attribs.date1904 ?? ''),
  };
  const sheets = childElements(path(workbook, 'sheets') ?? workbook!, 'sheet');
  const builder = new DocumentBuilder();
  const warnings: string[] = [];
  const sheetNames: string[] = [];
  for (const [index, sheet] of sheets.entries()) {
    await deadline.tick();
    const name = sheet.attribs.name ?? `Sheet ${index + 1}`;
    sheetNames.push(name);
    builder.page(index + 1);
    builder.resetHeadings();
    builder.add({ type: 'heading', text: name, level: 1 });
    const target = relationships.get(sheet.attribs['r:id'] ?? '')?.target;
    const xml = target ? archive.readText(target) : undefined;
    if (!xml) continue;
    const rows = await readSheetRows(xml, sharedStrings, dates, deadline);
    const kept = rows.slice(0, maxRows);
    if (kept.length > 0) builder.add({ type: 'table', rows: kept });
    if (rows.length > maxRows) {
      const note = `Sheet "${name}": showing the first ${maxRows} of ${rows.length} rows (maxRows).`;
      warnings.push(note);
      builder.add({ type: 'paragraph', text: `[${note}]` });
    }
  }
  const properties = readCoreProperties(archive.readText('docProps/core.xml'));
  return {
    pages: builder.build(),
    title: properties.title,
    metadata: { ...properties.metadata, sheets: sheetNames },
    warnings,
  };
}

function readSharedStrings(xml: string | undefined): string[] {
  if (!xml) return [];
  const root = parseXml(xml).find((element) => element.name === 'sst');
  if (!root) return [];
  // Phonetic runs (rPh) are reading aids for Japanese, not cell text.
  return childElements(root, 'si').map((item) =>
    descendants(item, 't', (element) => element.name === 'rPh')
      .map(textContent)
      .join(''),
  );
}

async function readSheetRows(
  xml: string,
  sharedStrings: string[],
  dates: DateContext,
  deadline: Deadline,
): Promise<string[][]> {
  const worksheet = parseXml(xml).find((element) => element.name === 'worksheet');
  const data = child(worksheet, 'sheetData');
  if (!data) return [];
  const grid: { cells: Map<number, string> }[] = [];
  let minColumn = Number.POSITIVE_INFINITY;
  let maxColumn = -1;
  for (const row of childElements(data, 'row')) {
    await deadline.tick();
    const cells = new Map<number, string>();
    let nextColumn = 0;
    for (const cell of childElements(row, 'c')) {
      const column = cell.attribs.r ? columnIndex(cell.attribs.r) : nextColumn;
      nextColumn = column + 1;
      const value = cellValue(cell, sharedStrings, dates);
      if (value === '') continue;
      cells.set(column, value);
      minColumn = Math.min(minColumn, column);
      maxColumn = Math.max(maxColumn, column);
    }
    if (cells.size > 0) grid.push({ cells });
  }
  return grid.map(({ cells }) =>
    Array.from(
      { length: maxColumn - minColumn + 1 },
      (_, offset) => cells.get(minColumn + offset) ?? '',
    ),
  );
}

function cellValue(cell: Element, sharedStrings: string[], dates: DateContext): string {
  const type = cell.attribs.t;
  if (type === 'inlineStr') return descendants(cell, 't').map(textContent).join('');
  const value = child(cell, 'v');
  const raw = value ? textContent(value) : '';
  if (type === 's') return sharedStrings[Number(raw)] ?? '';
  if (type === 'b') return raw === '1' ? 'TRUE' : raw === '0' ? 'FALSE' : raw;
  if (
    (type === undefined || type === 'n') &&
    raw !== '' &&
    dates.styles.has(Number(cell.attribs.s ?? -1))
  ) {
    return serialToDate(Number(raw), dates.date1904) ?? raw;
  }
  return raw;
}

interface DateContext {
  /** Indexes of cell formats (`cellXfs`) that show a date or time. */
  styles: Set<number>;
  date1904: boolean;
}

/** Built-in number formats that are dates or times (ECMA-376 18.8.30, incl. the CJK locale ones). */
const BUILT_IN_DATE_FORMATS = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51,
  52, 53, 54, 55, 56, 57, 58,
]);

function readDateStyles(xml: string | undefined): Set<number> {
  const result = new Set<number>();
  if (!xml) return result;
  const root = parseXml(xml).find((element) => element.name === 'styleSheet');
  if (!root) return result;
  const custom = new Set<number>();
  for (const format of childElements(path(root, 'numFmts') ?? root, 'numFmt')) {
    // Strip quoted text, escapes and [colour]/[locale] sections; what is left decides.
    const code = (format.attribs.formatCode ?? '').replace(/"[^"]*"|\\.|\[[^\]]*\]/g, '');
    if (/[dmyhs]/i.test(code) && !/^general$/i.test(code))
      custom.add(Number(format.attribs.numFmtId));
  }
  childElements(path(root, 'cellXfs') ?? root, 'xf').forEach((xf, index) => {
    const id = Number(xf.attribs.numFmtId ?? 0);
    if (BUILT_IN_DATE_FORMATS.has(id) || custom.has(id)) result.add(index);
  });
  return result;
}

/** Excel serial date → ISO 8601 (date, date and time, or time only). */
function serialToDate(serial: number, date1904: boolean): string | undefined {
  if (!Number.isFinite(serial) || serial < 0 || serial > 2_958_465) return undefined;
  const epoch = date1904 ? Date.UTC(1904, 0, 1) : Date.UTC(1899, 11, 30);
  const date = new Date(epoch + Math.round(serial * 86_400_000));
  const iso = date.toISOString();
  if (serial < 1 && !date1904) return iso.slice(11, 19);
  return Number.isInteger(serial) ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

/** "BC12" → 54 (0-based column of the cell reference). */
function columnIndex(reference: string): number {
  let index = 0;
  for (const char of reference) {
    const code = char.charCodeAt(0);
    if (code < 65 || code > 90) break;
    index = index * 26 + (code - 64);
  }
  return index - 1;
}

/**
 * @internal CSV/TSV: RFC 4180 quoting, delimiter sniffed from the first lines (comma,
 * semicolon, tab or pipe), one table with the header row, at most `maxRows` rows.
 */
export function parseCsv(
  text: string,
  filename: string | undefined,
  maxRows: number,
): FormatResult {
  const delimiter = filename?.toLowerCase().endsWith('.tsv') ? '\t' : sniffDelimiter(text);
  const rows: string[][] = [];
  let total = 0;
  for (const row of csvRows(text, delimiter, filename)) {
    if (row.every((cell) => cell.trim() === '')) continue;
    total += 1;
    if (rows.length < maxRows) rows.push(row);
  }
  const builder = new DocumentBuilder();
  builder.page(1);
  const warnings: string[] = [];
  if (rows.length > 0) builder.add({ type: 'table', rows });
  if (total > maxRows) {
    const note = `Showing the first ${maxRows} of ${total} rows (maxRows).`;
    warnings.push(note);
    builder.add({ type: 'paragraph', text: `[${note}]` });
  }
  return {
    pages: builder.build(),
    title: undefined,
    metadata: { delimiter, rows: total, columns: rows[0]?.length ?? 0 },
    warnings,
  };
}

function sniffDelimiter(text: string): string {
  const lines = text.split(/\r?\n/, 20).filter((line) => line.trim());
  let best = ',';
  let bestScore = 0;
  for (const candidate of [',', ';', '\t', '|']) {
    const counts = lines.map((line) => line.split(candidate).length - 1);
    const first = counts[0] ?? 0;
    if (first === 0) continue;
    const consistent = counts.filter((count) => count === first).length / counts.length;
    const score = first * consistent;
    if (score > bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}

function* csvRows(
  text: string,
  delimiter: string,
  source: string | undefined,
): Generator<string[]> {
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let rowNumber = 1;
  let index = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (; index < text.length; index += 1) {
    const char = text[index]!;
    if (quoted) {
      if (char === '"') {
        if (text[index + 1] === '"') {
          field += '"';
          index += 1;
        } else quoted = false;
      } else field += char;
    } else if (char === '"' && field.trim() === '') {
      quoted = true;
      field = '';
    } else if (char === delimiter) {
      row.push(field);
      field = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[index + 1] === '\n') index += 1;
      row.push(field);
      yield row;
      rowNumber += 1;
      row = [];
      field = '';
    } else field += char;
  }
  if (quoted) {
    throw new DocumentParseError(
      'corrupted',
      `${source ? `"${source}"` : 'The CSV'} ends inside a quoted field (row ${rowNumber}): the file is truncated or a quote is unbalanced. Fix the quoting or re-export the file.`,
      { source, format: 'csv' },
    );
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    yield row;
  }
}
