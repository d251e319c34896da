import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Deadline } from './deadline.js';
import { DocumentBuilder } from './document-builder.js';
import { DocumentParseError } from './errors.js';
import type { FormatResult } from './format-result.js';

import type * as PdfJsModule from 'pdfjs-dist';

type PdfJs = typeof PdfJsModule;
type PdfDocumentProxy = Awaited<ReturnType<PdfJs['getDocument']>['promise']>;

/** One run of text on a page, in content-stream order. */
interface TextRun {
  text: string;
  x: number;
  y: number;
  width: number;
  size: number;
  endOfLine: boolean;
}

/** A visual line: runs on one baseline, left to right. `cells` splits it at wide gaps (table columns). */
interface Line {
  text: string;
  cells: string[];
  /** Horizontal extent of each cell. */
  cellBounds: { x0: number; x1: number }[];
  x0: number;
  x1: number;
  y: number;
  size: number;
  page: number;
}

let pdfjsPromise: Promise<PdfJs> | undefined;

/**
 * Load pdf.js once. pdfjs-dist 3.11's legacy build is CommonJS (it loads under jest and on
 * Node 20 without a DOM), but it bundles core-js, which on load replaces built-ins it judges
 * non-compliant on Node 20 — `Array.prototype.push` and `structuredClone` among them — with
 * much slower JavaScript versions, for the whole process (measured: 2.6x slower on a table-heavy
 * page, and every other library in the process pays too). The built-ins are snapshotted before
 * the load and every replaced one is put back afterwards (pdf.js works with the native ones, as
 * its modern build does). Its "Cannot polyfill DOMMatrix/Path2D" warnings, about the optional
 * `canvas` package that text extraction never needs, are kept off the user's console.
 */
/**
 * Load a CommonJS module: with `require` where there is one (the CommonJS build, and test runners
 * such as jest, which cannot run a dynamic `import()` without experimental flags), else `import()`.
 */
async function loadCommonJs(id: string): Promise<unknown> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- see above: jest cannot import()
  if (typeof require === 'function') return require(id) as unknown;
  return import(id);
}

function loadPdfjs(): Promise<PdfJs> {
  pdfjsPromise ??= (async () => {
    const snapshot = snapshotBuiltIns();
    const originalLog = console.log;
    console.log = (...data: unknown[]) => {
      if (typeof data[0] === 'string' && data[0].startsWith('Warning: Cannot polyfill')) return;
      originalLog(...data);
    };
    try {
      const module = (await loadCommonJs('pdfjs-dist/legacy/build/pdf.js')) as PdfJs & {
        default?: PdfJs;
      };
      // The worker bundle (run in-process by pdf.js's "fake worker" on Node) carries its own
      // core-js: load it now, inside the snapshot window. It registers itself as
      // `globalThis.pdfjsWorker`, which pdf.js then uses instead of loading it again.
      const workerModule = 'pdfjs-dist/legacy/build/pdf.worker.js';
      await loadCommonJs(workerModule);
      // From ESM, Node exposes this CommonJS bundle as the default export.
      return module.default ?? module;
    } finally {
      console.log = originalLog;
      restoreBuiltIns(snapshot);
    }
  })();
  return pdfjsPromise;
}

type BuiltInSnapshot = Map<object, Map<PropertyKey, PropertyDescriptor>>;

/** Objects whose members core-js may replace. */
function builtInTargets(): object[] {
  const typedArray = Object.getPrototypeOf(Uint8Array.prototype) as object;
  return [
    globalThis,
    Object,
    Object.prototype,
    Array,
    Array.prototype,
    Promise,
    Promise.prototype,
    String,
    String.prototype,
    Number,
    Map.prototype,
    Set.prototype,
    WeakMap.prototype,
    ArrayBuffer.prototype,
    typedArray,
    Object.getPrototypeOf(typedArray) as object,
    Error,
    JSON,
    Math,
    Reflect,
    Symbol,
    URL,
    URLSearchParams.prototype,
  ];
}

function snapshotBuiltIns(): BuiltInSnapshot {
  const snapshot: BuiltInSnapshot = new Map();
  for (const target of builtInTargets()) {
    const descriptors = new Map<PropertyKey, PropertyDescriptor>();
    for (const key of Reflect.ownKeys(target)) {
      const descriptor = Object.getOwnPropertyDescriptor(target, key);
      if (descriptor) descriptors.set(key, descriptor);
    }
    snapshot.set(target, descriptors);
  }
  return snapshot;
}

function restoreBuiltIns(snapshot: BuiltInSnapshot): void {
  for (const [target, descriptors] of snapshot) {
    for (const [key, original] of descriptors) {
      const current = Object.getOwnPropertyDescriptor(target, key);
      if (
        current &&
        current.value === original.value &&
        current.get === original.get &&
        current.set === original.set
      )
        continue;
      try {
        Object.defineProperty(target, key, original);
      } catch {
        // Non-configurable: it cannot have been replaced either.
      }
    }
  }
}

/** CMaps and standard fonts read once per process: a CJK PDF otherwise re-reads ~100 KB of CMaps each time. */
const resourceCache = new Map<string, Promise<Uint8Array>>();

function readResource(path: string): Promise<Uint8Array> {
  let cached = resourceCache.get(path);
  if (!cached) {
    cached = readFile(path).then(
      (buffer) => new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength),
    );
    // A failed read is not cached, so a transient error does not stick.
    cached.catch(() => resourceCache.delete(path));
    resourceCache.set(path, cached);
  }
  return cached;
}

/** pdf.js `CMapReaderFactory` over {@link readResource} (binary, packed CMaps from pdfjs-dist). */
class CachedCMapReaderFactory {
  private readonly baseUrl: string;
  constructor(options: { baseUrl?: string }) {
    this.baseUrl = options.baseUrl ?? '';
  }
  async fetch({
    name,
  }: {
    name: string;
  }): Promise<{ cMapData: Uint8Array; compressionType: number }> {
    // A copy: pdf.js may transfer (detach) the buffer it is given. 1 = CMapCompressionType.BINARY.
    return {
      cMapData: (await readResource(`${this.baseUrl}${name}.bcmap`)).slice(),
      compressionType: 1,
    };
  }
}

/** pdf.js `StandardFontDataFactory` over {@link readResource}. */
class CachedStandardFontDataFactory {
  private readonly baseUrl: string;
  constructor(options: { baseUrl?: string }) {
    this.baseUrl = options.baseUrl ?? '';
  }
  async fetch({ filename }: { filename: string }): Promise<Uint8Array> {
    return (await readResource(`${this.baseUrl}${filename}`)).slice();
  }
}

/** Directory of pdfjs-dist (its `cmaps/` are needed for CJK fonts, `standard_fonts/` for the base 14). */
function pdfjsDirectory(): string {
  const localRequire = createRequire(__filename);
  return dirname(localRequire.resolve('pdfjs-dist/package.json'));
}

/** @internal Options the PDF reader needs. */
export interface PdfOptions {
  password: string | undefined;
  maxPages: number;
  source: string | undefined;
}

/**
 * @internal PDF through pdf.js: the text layer of each page in reading order (content-stream
 * order, which typesetters write column by column; pages whose stream interleaves columns line
 * by line are re-ordered column by column), lines joined into paragraphs (de-hyphenated),
 * headings where the font is clearly larger than the body text, runs of aligned multi-cell
 * lines as table rows, running headers/footers dropped, and pages without a text layer but
 * with images reported as scanned.
 */
export async function parsePdf(
  bytes: Uint8Array,
  deadline: Deadline,
  options: PdfOptions,
): Promise<FormatResult> {
  const label = options.source ? `"${options.source}"` : 'The PDF';
  const tail = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).subarray(
    Math.max(0, bytes.byteLength - 4096),
  );
  if (tail.indexOf('%%EOF', 0, 'latin1') < 0) {
    throw new DocumentParseError(
      'corrupted',
      `${label} is truncated (no %%EOF marker at its end). Download or export it again.`,
      {
        source: options.source,
        format: 'pdf',
      },
    );
  }
  const pdfjs = await deadline.race(loadPdfjs());
  const directory = pdfjsDirectory();
  // pdf.js takes ownership of (and detaches) the buffer it is given: pass a copy.
  const open = (stopAtErrors: boolean): ReturnType<PdfJs['getDocument']> =>
    pdfjs.getDocument({
      data: new Uint8Array(bytes),
      password: options.password,
      cMapUrl: join(directory, 'cmaps') + '/',
      cMapPacked: true,
      standardFontDataUrl: join(directory, 'standard_fonts') + '/',
      CMapReaderFactory: CachedCMapReaderFactory,
      StandardFontDataFactory: CachedStandardFontDataFactory,
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      verbosity: 0,
      stopAtErrors,
    });
  // Strict first: pdf.js then rejects a page whose content cannot be decoded instead of quietly
  // returning what it could recover. Such pages are retried leniently (a second, lazily opened
  // copy) and, if that recovers text, kept with a warning that they may be incomplete.
  const task = open(true);
  let lenientTask: ReturnType<PdfJs['getDocument']> | undefined;
  const stop = (): void => {
    void task.destroy();
    void lenientTask?.destroy();
  };
  deadline.signal.addEventListener('abort', stop, { once: true });
  let document: PdfDocumentProxy | undefined;
  try {
    document = await deadline.race(task.promise).catch((error: unknown) => {
      throw mapPdfError(error, label, options);
    });
    const pageCount = Math.min(document.numPages, options.maxPages);
    const warnings: string[] = [];
    if (document.numPages > options.maxPages) {
      warnings.push(
        `Only the first ${options.maxPages} of ${document.numPages} pages were read (maxPages).`,
      );
    }
    const pageLines: Line[][] = [];
    const pageSizes: { width: number; height: number }[] = [];
    const scannedPages: number[] = [];
    const damagedPages: number[] = [];
    const pdf = document;
    for (let number = 1; number <= pageCount; number += 1) {
      await deadline.tick();
      const page = await deadline.race(pdf.getPage(number)).catch((error: unknown) => {
        throw mapPdfError(error, label, options);
      });
      const [x0 = 0, y0 = 0, x1 = 612, y1 = 792] = page.view;
      pageSizes.push({ width: x1 - x0, height: y1 - y0 });
      let content: Awaited<ReturnType<typeof page.getTextContent>>;
      try {
        content = await deadline.race(page.getTextContent());
      } catch (error) {
        if (DocumentParseError.isInstance(error)) throw error;
        damagedPages.push(number);
        lenientTask ??= open(false);
        const lenientDocument = lenientTask.promise;
        try {
          content = await deadline.race(
            lenientDocument.then(async (lenient) =>
              (await lenient.getPage(number)).getTextContent(),
            ),
          );
        } catch (retryError) {
          if (DocumentParseError.isInstance(retryError)) throw retryError;
          content = { items: [], styles: {} };
        }
      }
      const runs: TextRun[] = [];
      for (const item of content.items) {
        if (!('str' in item)) continue;
        const [a = 1, b = 0, c = 0, d = 1, e = 0, f = 0] = item.transform as number[];
        runs.push({
          text: item.str,
          x: e,
          y: f,
          width: item.width,
          size: Math.hypot(c, d) || Math.hypot(a, b) || 1,
          endOfLine: item.hasEOL,
        });
      }
      const lines = buildLines(runs, number);
      if (lines.length === 0 && !damagedPages.includes(number) && (await hasImages(pdfjs, page)))
        scannedPages.push(number);
      pageLines.push(reorderInterleavedColumns(splitProseColumns(lines), x1 - x0));
      page.cleanup();
    }
    const textPages = pageLines.filter((lines) => lines.length > 0).length;
    if (textPages === 0 && damagedPages.length > 0) {
      throw new DocumentParseError(
        'corrupted',
        `${label} is damaged: ${damagedPages.length === pageCount ? (pageCount === 1 ? 'its page' : `all ${pageCount} pages`) : `${damagedPages.length} of ${pageCount} pages`} cannot be decoded and no page has readable text. Re-export or re-download it.`,
        { source: options.source, format: 'pdf' },
      );
    }
    for (const number of damagedPages) {
      warnings.push(
        pageLines[number - 1]!.length > 0
          ? `Page ${number} has damaged content; its text was recovered as far as possible and may be incomplete.`
          : `Page ${number} could not be decoded (damaged content) and was skipped.`,
      );
    }
    if (textPages === 0) {
      if (scannedPages.length > 0) {
        throw new DocumentParseError(
          'scanned',
          `${label} is a scanned document: its ${scannedPages.length === 1 ? 'page is an image' : `${scannedPages.length} pages are images`} without a text layer. Run OCR on it (e.g. ocrmypdf) and parse the result.`,
          { source: options.source, format: 'pdf' },
        );
      }
      throw new DocumentParseError('empty', `${label} has no text on any page.`, {
        source: options.source,
        format: 'pdf',
      });
    }
    if (scannedPages.length > 0) {
      const which =
        scannedPages.length === 1
          ? `Page ${scannedPages[0]} is a scanned image`
          : `Pages ${scannedPages.join(', ')} are scanned images`;
      warnings.push(`${which} without a text layer; its content is missing (run OCR to read it).`);
    }
    removeRunningHeaders(pageLines, pageSizes);
    const builder = new DocumentBuilder();
    const bodySize = dominantSize(pageLines.flat());
    pageLines.forEach((lines, index) => {
      pageLines[index] = moveFootnotesLast(lines, pageSizes[index]!.height, bodySize);
    });
    const headingLevels = headingSizes(pageLines.flat(), bodySize);
    pageLines.forEach((lines, index) => {
      builder.page(index + 1);
      if (scannedPages.includes(index + 1)) {
        builder.add({
          type: 'image',
          alt: `Scanned page ${index + 1} without a text layer (OCR needed)`,
        });
      }
      emitBlocks(builder, lines, bodySize, headingLevels);
    });
    const info = (await deadline.race(pdf.getMetadata()).catch(() => undefined))?.info as
      Record<string, unknown> | undefined;
    const metadataTitle = typeof info?.Title === 'string' ? info.Title.trim() : '';
    const pages = builder.build();
    const firstHeading = pages
      .flatMap((page) => page.blocks)
      .find((block) => block.type === 'heading')?.text;
    return {
      pages,
      title:
        metadataTitle && !/^(untitled|microsoft word|document\d*$)/i.test(metadataTitle)
          ? metadataTitle
          : firstHeading,
      metadata: {
        pageCount: document.numPages,
        ...(typeof info?.Author === 'string' && info.Author ? { author: info.Author } : {}),
        ...(typeof info?.Producer === 'string' && info.Producer ? { producer: info.Producer } : {}),
        ...(typeof info?.CreationDate === 'string' ? { created: info.CreationDate } : {}),
        ...(scannedPages.length > 0 ? { scannedPages } : {}),
        ...(damagedPages.length > 0 ? { damagedPages } : {}),
      },
      warnings,
    };
  } finally {
    deadline.signal.removeEventListener('abort', stop);
    await task.destroy().catch(() => undefined);
    await lenientTask?.destroy().catch(() => undefined);
  }
}

function mapPdfError(error: unknown, label: string, options: PdfOptions): unknown {
  if (DocumentParseError.isInstance(error)) return error;
  const name = (error as { name?: string }).name;
  const message = (error as { message?: string }).message ?? String(error);
  if (name === 'PasswordException') {
    return new DocumentParseError(
      'encrypted',
      options.password
        ? `${label} is encrypted and the password given is wrong. Pass the correct \`password\` option.`
        : `${label} is password-protected. Pass its password as the \`password\` option, or remove the protection and try again.`,
      { source: options.source, format: 'pdf', cause: error },
    );
  }
  return new DocumentParseError(
    'corrupted',
    `${label} is damaged and cannot be read (${message}). Re-export or re-download it.`,
    {
      source: options.source,
      format: 'pdf',
      cause: error,
    },
  );
}

async function hasImages(
  pdfjs: PdfJs,
  page: Awaited<ReturnType<PdfDocumentProxy['getPage']>>,
): Promise<boolean> {
  const operators = await page.getOperatorList().catch(() => undefined);
  if (!operators) return false;
  const imageOps = new Set(
    [
      pdfjs.OPS.paintImageXObject,
      pdfjs.OPS.paintInlineImageXObject,
      pdfjs.OPS.paintImageMaskXObject,
    ].filter((op) => op !== undefined),
  );
  return operators.fnArray.some((op) => imageOps.has(op));
}

/** Group runs (content-stream order) into lines; split a line into cells where the gap is wider than ~1.2 em. */
function buildLines(runs: TextRun[], page: number): Line[] {
  const lines: Line[] = [];
  let current:
    | {
        text: string;
        cells: string[];
        bounds: { x0: number; x1: number }[];
        x0: number;
        x1: number;
        y: number;
        size: number;
        chars: number;
      }
    | undefined;
  let pendingSpace = false;
  let breakBefore = false;
  const finish = (): void => {
    if (current) {
      const text = current.text.replace(/\s+/g, ' ').trim();
      if (text) {
        const cells = current.cells.map((cell) => cell.replace(/\s+/g, ' ').trim());
        const kept = cells.map((cell, index) => (cell ? index : -1)).filter((index) => index >= 0);
        lines.push({
          text,
          cells: kept.map((index) => cells[index]!),
          cellBounds: kept.map((index) => current!.bounds[index]!),
          x0: current.x0,
          x1: current.x1,
          y: current.y,
          size: current.size,
          page,
        });
      }
    }
    current = undefined;
  };
  for (const run of runs) {
    if (run.text.trim() === '') {
      // A zero-width "space" item is an artefact of the producer, not a gap in the text.
      pendingSpace = pendingSpace || (run.text.length > 0 && run.width > run.size * 0.1);
      if (run.endOfLine) breakBefore = true;
      continue;
    }
    let separator = '';
    if (current) {
      const size = Math.max(current.size, run.size);
      const sameBaseline = Math.abs(run.y - current.y) <= size * 0.5;
      const gap = run.x - current.x1;
      const sizeJump = Math.abs(run.size - current.size) > size * 0.2;
      // A wide gap to text of another size is a separate element (a masthead beside a title), not a cell.
      if (breakBefore || !sameBaseline || gap < -size || (gap > size * 1.2 && sizeJump)) finish();
      else if (gap > size * 1.2) {
        separator = ' ';
        current.cells.push('');
        current.bounds.push({ x0: run.x, x1: run.x });
      } else if (pendingSpace || gap > run.size * 0.15) separator = ' ';
    }
    if (!current)
      current = {
        text: '',
        cells: [''],
        bounds: [{ x0: run.x, x1: run.x }],
        x0: run.x,
        x1: run.x,
        y: run.y,
        size: run.size,
        chars: 0,
      };
    current.text += separator + run.text;
    const last = current.cells.length - 1;
    current.cells[last] += (current.cells[last] ? separator : '') + run.text;
    current.x1 = Math.max(current.x1, run.x + run.width);
    current.bounds[last]!.x1 = Math.max(current.bounds[last]!.x1, run.x + run.width);
    // The line's size is that of its longest run (a drop cap or a superscript does not decide it).
    if (run.text.length > current.chars) {
      current.size = run.size;
      current.chars = run.text.length;
    }
    pendingSpace = false;
    breakBefore = run.endOfLine;
  }
  finish();
  return lines;
}

/**
 * A "line" whose wide gaps separate runs of prose (every piece several words long) is really
 * side-by-side column lines written on one baseline: split it, so columns can be re-ordered.
 * Table rows (short cells, numbers) stay whole.
 */
function splitProseColumns(lines: Line[]): Line[] {
  return lines.flatMap((line) => {
    const prose =
      line.cells.length >= 2 &&
      line.cells.every((cell) => cell.split(' ').length >= 3 && cell.length >= 15);
    if (!prose) return [line];
    return line.cells.map((cell, index) => ({
      ...line,
      text: cell,
      cells: [cell],
      cellBounds: [line.cellBounds[index]!],
      x0: line.cellBounds[index]!.x0,
      x1: line.cellBounds[index]!.x1,
    }));
  });
}

/**
 * Content streams usually hold a multi-column page column by column. Some producers write it
 * line by line across columns instead; detect that (most consecutive lines jump to another
 * column at about the same height) and re-order: column by column, top to bottom.
 */
function reorderInterleavedColumns(lines: Line[], pageWidth: number): Line[] {
  if (lines.length < 6) return lines;
  let jumps = 0;
  for (let index = 1; index < lines.length; index += 1) {
    const previous = lines[index - 1]!;
    const line = lines[index]!;
    // Only jumps to the right count: vertical CJK text moves right-to-left line after line at one height.
    if (line.x0 > previous.x1 && Math.abs(line.y - previous.y) < line.size * 0.5) jumps += 1;
  }
  if (jumps / lines.length < 0.3) return lines;
  const starts = [...new Set(lines.map((line) => Math.round(line.x0)))].sort((a, b) => a - b);
  const columnStarts: number[] = [];
  for (const start of starts) {
    if (
      columnStarts.length === 0 ||
      start - columnStarts[columnStarts.length - 1]! > pageWidth * 0.15
    )
      columnStarts.push(start);
  }
  const columnOf = (line: Line): number => {
    let column = 0;
    columnStarts.forEach((start, index) => {
      if (line.x0 >= start - 2) column = index;
    });
    return column;
  };
  return [...lines].sort((a, b) => columnOf(a) - columnOf(b) || b.y - a.y || a.x0 - b.x0);
}

/**
 * Footnotes (small print in the lower part of the page) that the content stream holds before
 * the body text go after it, where a reader meets them.
 */
function moveFootnotesLast(lines: Line[], pageHeight: number, body: number): Line[] {
  if (lines.length < 4) return lines;
  const small = (line: Line): boolean => line.size < body * 0.92;
  // Highest body line from each position on: small print below a later body line is out of order.
  const highestBodyAfter: number[] = new Array<number>(lines.length + 1).fill(
    Number.NEGATIVE_INFINITY,
  );
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const line = lines[index]!;
    highestBodyAfter[index] = Math.max(
      highestBodyAfter[index + 1]!,
      small(line) ? Number.NEGATIVE_INFINITY : line.y,
    );
  }
  const notes = new Set<Line>();
  lines.forEach((line, index) => {
    if (
      small(line) &&
      line.y < pageHeight * 0.55 &&
      highestBodyAfter[index + 1]! > line.y + line.size
    )
      notes.add(line);
  });
  return notes.size === 0
    ? lines
    : [...lines.filter((line) => !notes.has(line)), ...lines.filter((line) => notes.has(line))];
}

/** Drop lines near the top or bottom edge that repeat (digits aside) on at least half of the pages. */
function removeRunningHeaders(
  pageLines: Line[][],
  sizes: { width: number; height: number }[],
): void {
  if (pageLines.length < 3) return;
  // Numbers (page numbers, which may share the header's line on alternate pages) are not part of the key.
  const key = (line: Line): string =>
    `${Math.round(line.y / 2)}|${line.text.replace(/\d+/g, '').replace(/\s+/g, ' ').trim()}`;
  const counts = new Map<string, number>();
  pageLines.forEach((lines, index) => {
    const height = sizes[index]!.height;
    const seen = new Set<string>();
    for (const line of lines) {
      if (line.y < height * 0.1 || line.y > height * 0.9) seen.add(key(line));
    }
    for (const entry of seen) counts.set(entry, (counts.get(entry) ?? 0) + 1);
  });
  const threshold = Math.max(3, Math.ceil(pageLines.length / 2));
  pageLines.forEach((lines, index) => {
    const height = sizes[index]!.height;
    pageLines[index] = lines.filter(
      (line) =>
        !(
          (line.y < height * 0.1 || line.y > height * 0.9) &&
          (counts.get(key(line)) ?? 0) >= threshold
        ),
    );
  });
}

/** The font size carrying the most characters: the body text. */
function dominantSize(lines: Line[]): number {
  const weights = new Map<number, number>();
  for (const line of lines) {
    const size = Math.round(line.size * 2) / 2;
    weights.set(size, (weights.get(size) ?? 0) + line.text.length);
  }
  let best = 10;
  let bestWeight = -1;
  for (const [size, weight] of weights) {
    if (weight > bestWeight) {
      best = size;
      bestWeight = weight;
    }
  }
  return best;
}

/** Sizes clearly above the body size, largest first: index + 1 is the heading level. */
function headingSizes(lines: Line[], bodySize: number): number[] {
  const sizes = new Set<number>();
  for (const line of lines)
    if (isHeadingCandidate(line, bodySize)) sizes.add(Math.round(line.size * 2) / 2);
  return [...sizes].sort((a, b) => b - a).slice(0, 6);
}

function isHeadingCandidate(line: Line, bodySize: number): boolean {
  return line.size >= bodySize * 1.2 && line.text.length <= 150 && /\p{L}/u.test(line.text);
}

const CJK = /[\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/;

/** Join wrapped lines: de-hyphenate "exam-\nple", no space between CJK characters. */
function joinLines(lines: string[]): string {
  let text = '';
  for (const line of lines) {
    if (!text) text = line;
    else if (/\p{Ll}-$/u.test(text) && /^\p{Ll}/u.test(line)) text = text.slice(0, -1) + line;
    else if (CJK.test(text.at(-1) ?? '') && CJK.test(line[0] ?? '')) text += line;
    else text += ` ${line}`;
  }
  return text;
}

function emitBlocks(
  builder: DocumentBuilder,
  lines: Line[],
  bodySize: number,
  headingLevels: number[],
): void {
  let paragraph: Line[] = [];
  let tableRows: Line[] = [];
  const flushParagraph = (): void => {
    if (paragraph.length > 0)
      builder.add({ type: 'paragraph', text: joinLines(paragraph.map((line) => line.text)) });
    paragraph = [];
  };
  const flushTable = (): void => {
    if (tableRows.length >= 2)
      builder.add({ type: 'table', rows: tableRows.map((line) => line.cells) });
    else if (tableRows.length === 1) paragraph.push(tableRows[0]!);
    tableRows = [];
  };
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    const next = lines[index + 1];
    // Table rows: lines split into 3+ cells, or 2+ cells next to such lines.
    if (
      line.cells.length >= 3 ||
      (line.cells.length >= 2 && (tableRows.length > 0 || (next?.cells.length ?? 0) >= 3))
    ) {
      if (tableRows.length === 0) flushParagraph();
      tableRows.push(line);
      continue;
    }
    flushTable();
    if (isHeadingCandidate(line, bodySize)) {
      flushParagraph();
      const level =
        headingLevels.indexOf(Math.round(line.size * 2) / 2) + 1 || headingLevels.length;
      let text = line.text;
      // A heading wrapped over several lines of the same size is one heading.
      while (index + 1 < lines.length) {
        const following = lines[index + 1]!;
        if (
          Math.abs(following.size - line.size) > 0.25 ||
          !isHeadingCandidate(following, bodySize) ||
          following.y > line.y ||
          line.y - following.y > line.size * 2
        )
          break;
        text = joinLines([text, following.text]);
        index += 1;
      }
      builder.add({ type: 'heading', text, level: Math.max(1, level) });
      continue;
    }
    const previous = paragraph[paragraph.length - 1];
    if (previous) {
      const verticalGap = previous.y - line.y;
      const newColumn = verticalGap < -previous.size || line.x0 > previous.x1;
      const spaced = verticalGap > Math.max(previous.size, line.size) * 1.75;
      const sizeChange =
        Math.abs(previous.size - line.size) > Math.max(previous.size, line.size) * 0.15;
      const widest = Math.max(...paragraph.map((item) => item.x1));
      const endedShort =
        /[.!?:。！？：]["')\]”’]?$/.test(previous.text) && previous.x1 < widest - previous.size * 3;
      if (newColumn || spaced || sizeChange || endedShort) flushParagraph();
    }
    paragraph.push(line);
  }
  flushTable();
  flushParagraph();
}
