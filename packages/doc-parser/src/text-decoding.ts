/** @internal Result of {@link decodeText}. */
export interface DecodedText {
  text: string;
  /** WHATWG name of the encoding used: `utf-8`, `utf-16le`, `utf-16be`, `gb18030`, `windows-1252`. */
  encoding: string;
}

/**
 * @internal The charset a document declares: HTTP `Content-Type` first, else an HTML
 * `<meta charset>` / `http-equiv` in the first 4 KB, else an XML declaration. Lower case.
 */
export function declaredCharset(
  bytes: Uint8Array,
  contentType: string | undefined,
): string | undefined {
  const fromHeader = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? '')?.[1];
  if (fromHeader) return fromHeader.toLowerCase();
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 4096));
  const fromMeta =
    /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1] ??
    /^<\?xml[^>]+encoding\s*=\s*["']([\w.:-]+)/i.exec(head)?.[1];
  return fromMeta?.toLowerCase();
}

/**
 * @internal Decode text bytes: a BOM wins (UTF-8, UTF-16 LE/BE); then a declared charset
 * (`declared`, from HTTP or the markup) when the bytes are not valid UTF-8; then strict UTF-8; then
 * GB18030 (a superset of GBK and GB2312) when the bytes decode cleanly and mostly to CJK
 * characters; Windows-1252 as the last resort (it never fails).
 */
export function decodeText(bytes: Uint8Array, declared?: string): DecodedText {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return { text: new TextDecoder('utf-8').decode(bytes.subarray(3)), encoding: 'utf-8' };
  }
  if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    return { text: new TextDecoder('utf-16le').decode(bytes.subarray(2)), encoding: 'utf-16le' };
  }
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    return { text: new TextDecoder('utf-16be').decode(bytes.subarray(2)), encoding: 'utf-16be' };
  }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), encoding: 'utf-8' };
  } catch {
    // Not UTF-8: a declared legacy charset (Shift_JIS, Big5, KOI8-R…) is the best guide.
    if (declared && !/^utf-?8$/.test(declared)) {
      try {
        const decoder = new TextDecoder(declared);
        return { text: decoder.decode(bytes), encoding: decoder.encoding };
      } catch {
        // Unknown label: fall through to detection.
      }
    }
    // UTF-8 cut inside its last character (a truncated file)?
    const complete = completeUtf8Length(bytes);
    if (complete < bytes.length) {
      try {
        return {
          text: new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, complete)),
          encoding: 'utf-8',
        };
      } catch {
        // Invalid before the end too: a legacy encoding.
      }
    }
  }
  try {
    const text = new TextDecoder('gb18030', { fatal: true }).decode(bytes);
    if (looksLikeChinese(text)) return { text, encoding: 'gb18030' };
  } catch {
    // Not GB18030 either.
  }
  return { text: new TextDecoder('windows-1252').decode(bytes), encoding: 'windows-1252' };
}

/** Length of `bytes` without a trailing incomplete UTF-8 sequence (1 to 3 bytes). */
function completeUtf8Length(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/** Most non-ASCII characters are CJK ideographs or CJK punctuation (true of real GBK text, rarely of mis-decoded Latin-1). */
function looksLikeChinese(text: string): boolean {
  let nonAscii = 0;
  let cjk = 0;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code < 0x80) continue;
    nonAscii += 1;
    if (
      (code >= 0x4e00 && code <= 0x9fff) ||
      (code >= 0x3000 && code <= 0x303f) ||
      (code >= 0xff00 && code <= 0xffef)
    ) {
      cjk += 1;
    }
  }
  return nonAscii > 0 && cjk / nonAscii >= 0.8;
}

/** @internal True when the bytes look like binary data rather than text (NUL bytes outside UTF-16). */
export function looksBinary(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, 8192);
  if ((sample[0] === 0xff && sample[1] === 0xfe) || (sample[0] === 0xfe && sample[1] === 0xff))
    return false;
  let control = 0;
  for (const byte of sample) {
    if (byte === 0) return true;
    if (byte < 0x09 || (byte > 0x0d && byte < 0x20 && byte !== 0x1b)) control += 1;
  }
  return sample.length > 0 && control / sample.length > 0.1;
}
