import { analyse } from 'chardet';
import iconv from 'iconv-lite';

/** How the charset of a body was decided. */
export type CharsetSource = 'bom' | 'header' | 'meta' | 'utf8-valid' | 'detected' | 'default';

/** A decoded body. */
export interface DecodedText {
  text: string;
  /** The charset used, as iconv-lite names it (`utf-8`, `gb18030`, `shift_jis`, `windows-1252` …). */
  charset: string;
  source: CharsetSource;
}

// Labels that the WHATWG Encoding Standard maps onto another decoder. GBK and GB2312 are decoded
// with GB18030, their superset; Latin-1 and ASCII labels mean windows-1252 on the web.
const LABEL_ALIASES: Record<string, string> = {
  utf8: 'utf-8',
  'unicode-1-1-utf-8': 'utf-8',
  gbk: 'gb18030',
  gb2312: 'gb18030',
  'x-gbk': 'gb18030',
  gb_2312: 'gb18030',
  'gb_2312-80': 'gb18030',
  csgb2312: 'gb18030',
  chinese: 'gb18030',
  'iso-ir-58': 'gb18030',
  'iso-8859-1': 'windows-1252',
  'iso8859-1': 'windows-1252',
  latin1: 'windows-1252',
  'us-ascii': 'windows-1252',
  ascii: 'windows-1252',
  'x-sjis': 'shift_jis',
  sjis: 'shift_jis',
  'big5-hkscs': 'big5',
  'x-euc-jp': 'euc-jp',
};

/**
 * Normalise a charset label to a name iconv-lite decodes, following the WHATWG label table for
 * the common aliases.
 *
 * @returns The decoder name, or `undefined` when the label is unknown.
 */
export function normalizeCharset(label: string | undefined): string | undefined {
  if (label === undefined) return undefined;
  const cleaned = label
    .trim()
    .replace(/^["']|["']$/g, '')
    .toLowerCase();
  if (cleaned === '') return undefined;
  const name = LABEL_ALIASES[cleaned] ?? cleaned;
  return iconv.encodingExists(name) ? name : undefined;
}

/** The `charset` parameter of a `Content-Type` header, if any. */
export function charsetFromContentType(contentType: string | undefined): string | undefined {
  const match =
    contentType === undefined ? null : /;\s*charset\s*=\s*("?)([^";,\s]+)\1/i.exec(contentType);
  return match?.[2];
}

function charsetFromBom(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return undefined;
}

/**
 * The charset a document declares in its first bytes: `<meta charset>`, `<meta http-equiv=
 * "Content-Type" content="…; charset=…">`, or an XML declaration's `encoding`.
 */
export function charsetFromMarkup(bytes: Uint8Array): string | undefined {
  // The HTML prescan looks at the first 1024 bytes; real pages put long <head>s first, so we read more.
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 8192)).toString(
    'latin1',
  );
  const xml = /^\s*<\?xml[^>]*\bencoding\s*=\s*["']([^"']+)["']/i.exec(head);
  if (xml) return xml[1];
  for (const tag of head.matchAll(/<meta\b[^>]*>/gi)) {
    const text = tag[0];
    const direct = /\bcharset\s*=\s*["']?([^"'\s/>;]+)/i.exec(text);
    if (direct && !/http-equiv/i.test(text)) return direct[1];
    if (/http-equiv\s*=\s*["']?content-type/i.test(text)) {
      const content = /\bcontent\s*=\s*["']([^"']*)["']/i.exec(text);
      const fromContent = charsetFromContentType(
        `x; ${content?.[1]?.replace(/^[^;]*;?/, '') ?? ''}`,
      );
      if (fromContent !== undefined) return fromContent;
    }
  }
  return undefined;
}

function isValidUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    // A cut in the middle of a multi-byte sequence (size cap) is still UTF-8.
    for (let back = 1; back <= 3 && back < bytes.length; back += 1) {
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, bytes.length - back));
        return true;
      } catch {
        // keep trying shorter prefixes
      }
    }
    return false;
  }
}

/**
 * Decide the charset of a body and decode it: BOM first, then the `Content-Type` charset, then a
 * declaration in the markup, then "valid UTF-8?", then statistical detection (chardet), then
 * windows-1252. GBK/GB2312 pages decode through GB18030.
 *
 * @param bytes - The body.
 * @param contentType - The `Content-Type` header, if any.
 * @returns The text and how its charset was chosen.
 * @example
 * decodeBody(gbkBytes, 'text/html; charset=gbk').text; // '中文…'
 */
export function decodeBody(bytes: Uint8Array, contentType?: string): DecodedText {
  const bom = charsetFromBom(bytes);
  if (bom !== undefined) return decodeWith(bytes, bom, 'bom');
  const header = normalizeCharset(charsetFromContentType(contentType));
  if (header !== undefined) return decodeWith(bytes, header, 'header');
  const markup = normalizeCharset(charsetFromMarkup(bytes));
  if (markup !== undefined) return decodeWith(bytes, markup, 'meta');
  if (isValidUtf8(bytes)) return decodeWith(bytes, 'utf-8', 'utf8-valid');
  const sample = bytes.subarray(0, 65_536);
  const guess = analyse(sample).find(
    (match) => normalizeCharset(match.name) !== undefined && match.confidence >= 10,
  );
  if (guess !== undefined) return decodeWith(bytes, normalizeCharset(guess.name)!, 'detected');
  return decodeWith(bytes, 'windows-1252', 'default');
}

function decodeWith(bytes: Uint8Array, charset: string, source: CharsetSource): DecodedText {
  const text = iconv.decode(
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    charset,
    { stripBOM: true },
  );
  return { text, charset, source };
}
