import type { DocumentFormat } from '@quiver/core';
import { DocumentParseError } from './errors.js';
import { decodeText, looksBinary } from './text-decoding.js';
import { ZipArchive } from './zip-archive.js';

/** The result of {@link detectFormat}. */
export interface FormatDetection {
  format: DocumentFormat;
  /** How the decision was made: `magic` (signature bytes), `zip` (package entries), `content` (text sniffing), `extension`. */
  by: 'magic' | 'zip' | 'content' | 'extension' | 'option';
  /** Set when the file name's extension names a different format than the content. */
  extensionMismatch?: { extension: string; expected: DocumentFormat | undefined };
}

const EXTENSIONS: Record<string, DocumentFormat> = {
  pdf: 'pdf',
  docx: 'docx',
  docm: 'docx',
  pptx: 'pptx',
  pptm: 'pptx',
  xlsx: 'xlsx',
  xlsm: 'xlsx',
  csv: 'csv',
  tsv: 'csv',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  md: 'markdown',
  markdown: 'markdown',
  mdx: 'markdown',
  txt: 'text',
  text: 'text',
  log: 'text',
  json: 'json',
};

const BINARY_FORMATS = new Set<DocumentFormat>(['pdf', 'docx', 'pptx', 'xlsx']);

/** Signatures of formats we recognise but do not parse, with what to do instead. */
const FOREIGN_SIGNATURES: { bytes: number[]; what: string }[] = [
  { bytes: [0x89, 0x50, 0x4e, 0x47], what: 'a PNG image (run OCR to get its text)' },
  { bytes: [0xff, 0xd8, 0xff], what: 'a JPEG image (run OCR to get its text)' },
  { bytes: [0x47, 0x49, 0x46, 0x38], what: 'a GIF image' },
  { bytes: [0x49, 0x49, 0x2a, 0x00], what: 'a TIFF image (run OCR to get its text)' },
  { bytes: [0x4d, 0x4d, 0x00, 0x2a], what: 'a TIFF image (run OCR to get its text)' },
  { bytes: [0x1f, 0x8b], what: 'a gzip archive (decompress it first)' },
  { bytes: [0x37, 0x7a, 0xbc, 0xaf], what: 'a 7-Zip archive (extract it first)' },
  { bytes: [0x52, 0x61, 0x72, 0x21], what: 'a RAR archive (extract it first)' },
  { bytes: [0x7b, 0x5c, 0x72, 0x74, 0x66], what: 'an RTF document (save it as DOCX or PDF)' },
  { bytes: [0x25, 0x21, 0x50, 0x53], what: 'a PostScript file (convert it to PDF)' },
  { bytes: [0x7f, 0x45, 0x4c, 0x46], what: 'an executable' },
];

/** The lower-case extension of a file name or URL path, without the dot. */
export function extensionOf(filename: string | undefined): string | undefined {
  if (!filename) return undefined;
  const base = filename.split(/[?#]/)[0]!.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : undefined;
}

/**
 * Decide a document's format from its bytes: signatures (`%PDF-`, zip, OLE), the entries of a
 * zip package (`word/document.xml`, `ppt/presentation.xml`, `xl/workbook.xml`), then text
 * sniffing (HTML, JSON, Markdown, CSV). The file name's extension only breaks ties between
 * text formats; when it contradicts the content, the content wins and `extensionMismatch` says so.
 *
 * @param bytes - The document's content.
 * @param filename - Optional name or path, used as a hint only.
 * @returns The detected format and how it was found.
 * @throws {DocumentParseError} `empty`, `unsupported_format` (images, archives, legacy Office),
 *   `encrypted` (password-protected Office files), `corrupted` (an extension that promises a
 *   binary format on bytes that are not that format).
 * @example
 * ```ts
 * detectFormat(readFileSync('slides.bin')).format; // 'pptx'
 * ```
 */
export function detectFormat(bytes: Uint8Array, filename?: string): FormatDetection {
  const extension = extensionOf(filename);
  const expected = extension ? EXTENSIONS[extension] : undefined;
  const label = filename ? `"${filename}"` : 'The input';
  const result = (format: DocumentFormat, by: FormatDetection['by']): FormatDetection =>
    extension &&
    expected !== undefined &&
    expected !== format &&
    !(expected === 'text' && by === 'content')
      ? { format, by, extensionMismatch: { extension, expected } }
      : { format, by };

  if (bytes.byteLength === 0) {
    throw new DocumentParseError(
      'empty',
      `${label} is empty (0 bytes). Check that the file was fully written or downloaded.`,
      {
        source: filename,
      },
    );
  }
  const head = bytes.subarray(0, 1024);
  if (indexOfAscii(head, '%PDF-') >= 0) return result('pdf', 'magic');
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) || startsWith(bytes, [0x50, 0x4b, 0x05, 0x06])) {
    return result(detectZipFormat(bytes, filename, expected), 'zip');
  }
  if (startsWith(bytes, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) {
    // OLE compound file: either an encrypted OOXML package or a legacy binary Office file.
    if (indexOfUtf16(bytes, 'EncryptedPackage') >= 0) {
      throw new DocumentParseError(
        'encrypted',
        `${label} is a password-protected Office document. Open it in Office, remove the password (File > Info > Protect), save, and try again.`,
        { source: filename },
      );
    }
    throw new DocumentParseError(
      'unsupported_format',
      `${label} is a legacy binary Office file (.doc/.xls/.ppt), which is not supported. Save it as .docx/.xlsx/.pptx or PDF and try again.`,
      { source: filename },
    );
  }
  for (const signature of FOREIGN_SIGNATURES) {
    if (startsWith(bytes, signature.bytes)) {
      throw new DocumentParseError(
        'unsupported_format',
        `${label} is ${signature.what}, not a supported document format.`,
        {
          source: filename,
        },
      );
    }
  }
  if (looksBinary(bytes)) {
    if (expected && BINARY_FORMATS.has(expected)) {
      throw new DocumentParseError(
        'corrupted',
        `${label} is named like a ${expected.toUpperCase()} file but its content is not ${expected.toUpperCase()} (no valid signature). The file is damaged or mislabelled; re-export or re-download it.`,
        { source: filename, format: expected },
      );
    }
    throw new DocumentParseError(
      'unsupported_format',
      `${label} is binary data in a format that is not supported. Supported: PDF, DOCX, PPTX, XLSX, CSV, HTML, Markdown, text, JSON.`,
      { source: filename },
    );
  }
  const sample = decodeText(bytes.subarray(0, 64 * 1024)).text.replace(/^\uFEFF/, '');
  if (expected && BINARY_FORMATS.has(expected) && !/^\s*</.test(sample)) {
    throw new DocumentParseError(
      'corrupted',
      `${label} is named like a ${expected.toUpperCase()} file but contains plain text, not ${expected.toUpperCase()}. The file is damaged or mislabelled.`,
      { source: filename, format: expected },
    );
  }
  const trimmed = sample.trimStart();
  if (
    /^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<!doctype html/i.test(trimmed) ||
    /^<html[\s>]/i.test(trimmed)
  ) {
    return result('html', 'content');
  }
  if (/^[[{]/.test(trimmed) && (expected === 'json' || isJson(bytes)))
    return result('json', 'content');
  if (expected === 'html' && /<[a-z][\w-]*[\s>]/i.test(trimmed)) return result('html', 'extension');
  if (expected === 'csv' || expected === 'markdown' || expected === 'json')
    return result(expected, 'extension');
  if (/<(body|head|div|p|article|table)[\s>]/i.test(trimmed.slice(0, 4096)))
    return result('html', 'content');
  if (looksLikeMarkdown(sample)) return result('markdown', 'content');
  return result('text', 'content');
}

function detectZipFormat(
  bytes: Uint8Array,
  filename: string | undefined,
  expected: DocumentFormat | undefined,
): DocumentFormat {
  const archive = new ZipArchive(bytes, Number.POSITIVE_INFINITY, filename);
  if (archive.has('word/document.xml')) return 'docx';
  if (archive.has('ppt/presentation.xml')) return 'pptx';
  if (archive.has('xl/workbook.xml')) return 'xlsx';
  const label = filename ? `"${filename}"` : 'The input';
  if (archive.has('mimetype') && archive.names().some((name) => name === 'content.xml')) {
    throw new DocumentParseError(
      'unsupported_format',
      `${label} is an OpenDocument file (.odt/.ods/.odp), which is not supported. Save it as DOCX, XLSX, PPTX or PDF.`,
      { source: filename },
    );
  }
  if (archive.has('[Content_Types].xml') || (expected && BINARY_FORMATS.has(expected))) {
    throw new DocumentParseError(
      'corrupted',
      `${label} is a zip package without the main part of a DOCX, PPTX or XLSX file (word/document.xml, ppt/presentation.xml or xl/workbook.xml). Re-save it from Office.`,
      { source: filename, format: expected },
    );
  }
  throw new DocumentParseError(
    'unsupported_format',
    `${label} is a zip archive, not a document. Extract it and parse the files inside.`,
    { source: filename },
  );
}

function isJson(bytes: Uint8Array): boolean {
  if (bytes.byteLength > 20 * 1024 * 1024) return true;
  try {
    JSON.parse(decodeText(bytes).text.replace(/^\uFEFF/, ''));
    return true;
  } catch {
    return false;
  }
}

function looksLikeMarkdown(text: string): boolean {
  const lines = text.split(/\r?\n/).slice(0, 400);
  let signals = 0;
  for (const line of lines) {
    if (/^#{1,6}\s+\S/.test(line)) signals += 2;
    else if (/^(```|~~~)/.test(line)) signals += 2;
    else if (/^\s*\|.*\|\s*$/.test(line)) signals += 1;
    else if (/\[[^\]]+\]\([^)]+\)/.test(line)) signals += 1;
  }
  return signals >= 3;
}

function startsWith(bytes: Uint8Array, prefix: number[]): boolean {
  return prefix.every((byte, index) => bytes[index] === byte);
}

function indexOfAscii(bytes: Uint8Array, needle: string): number {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(needle, 0, 'latin1');
}

function indexOfUtf16(bytes: Uint8Array, needle: string): number {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(
    Buffer.from(needle, 'utf16le'),
  );
}
