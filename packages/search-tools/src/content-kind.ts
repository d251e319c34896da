/** What a response body is, as far as the web extractor is concerned. */
export type ContentKind =
  | { kind: 'html' }
  | { kind: 'text'; format: 'text' | 'markdown' | 'json' | 'xml' }
  | { kind: 'document'; format: 'pdf' | 'docx' | 'pptx' | 'xlsx' | 'csv'; filename: string }
  | { kind: 'binary'; mimeType: string };

const DOCUMENT_TYPES: Record<string, 'pdf' | 'docx' | 'pptx' | 'xlsx' | 'csv'> = {
  'application/pdf': 'pdf',
  'application/x-pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/csv': 'csv',
  'application/csv': 'csv',
};
const EXTENSIONS: Record<string, 'pdf' | 'docx' | 'pptx' | 'xlsx' | 'csv'> = {
  pdf: 'pdf',
  docx: 'docx',
  pptx: 'pptx',
  xlsx: 'xlsx',
  csv: 'csv',
};

/** The media type of a `Content-Type` header, lower-cased, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** @internal The document format a media type names, if it names one. */
export function documentFormatOf(
  type: string,
): 'pdf' | 'docx' | 'pptx' | 'xlsx' | 'csv' | undefined {
  return DOCUMENT_TYPES[type];
}

/** @internal True for media types whose bodies the extractor never needs to download. */
export function isSkippableMediaType(type: string): boolean {
  return /^(image|audio|video|font)\//.test(type) || type === 'application/wasm';
}

function looksBinary(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, 1024);
  let control = 0;
  for (const byte of sample) {
    if (byte === 0) return true;
    if (byte < 9 || (byte > 13 && byte < 32)) control += 1;
  }
  return sample.length > 0 && control / sample.length > 0.1;
}

function startsWith(bytes: Uint8Array, signature: number[]): boolean {
  return signature.every((byte, index) => bytes[index] === byte);
}

/**
 * Decide how to read a body from its `Content-Type`, its first bytes and the URL's file extension.
 * A declared type wins when specific; `application/octet-stream` or a missing type is sniffed.
 *
 * @internal
 */
export function classifyContent(
  contentType: string | undefined,
  bytes: Uint8Array,
  url: string,
): ContentKind {
  const type = mediaType(contentType);
  const path = safePath(url);
  const filename = safeDecode(path.split('/').pop() || 'document');
  const extension = /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase();

  const documentFormat = DOCUMENT_TYPES[type];
  if (documentFormat !== undefined) return { kind: 'document', format: documentFormat, filename };
  if (type === 'text/html' || type === 'application/xhtml+xml') return { kind: 'html' };
  if (type === 'text/markdown' || type === 'text/x-markdown')
    return { kind: 'text', format: 'markdown' };
  if (type === 'application/json' || type.endsWith('+json'))
    return { kind: 'text', format: 'json' };
  if (type === 'text/xml' || type === 'application/xml' || type.endsWith('+xml'))
    return { kind: 'text', format: 'xml' };
  if (type.startsWith('text/'))
    return { kind: 'text', format: extension === 'md' ? 'markdown' : 'text' };

  // Unknown or generic type: trust magic numbers, then the extension, then the bytes themselves.
  if (startsWith(bytes, [0x25, 0x50, 0x44, 0x46]))
    return { kind: 'document', format: 'pdf', filename };
  if (
    startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) &&
    extension !== undefined &&
    EXTENSIONS[extension] !== undefined
  ) {
    return { kind: 'document', format: EXTENSIONS[extension], filename };
  }
  if (type === '' || type === 'application/octet-stream' || type === 'binary/octet-stream') {
    if (!looksBinary(bytes)) {
      const head = new TextDecoder('latin1')
        .decode(bytes.subarray(0, 512))
        .trimStart()
        .toLowerCase();
      if (
        head.startsWith('<!doctype html') ||
        head.startsWith('<html') ||
        /<(head|body|title)[\s>]/.test(head)
      ) {
        return { kind: 'html' };
      }
      return { kind: 'text', format: extension === 'md' ? 'markdown' : 'text' };
    }
  }
  return { kind: 'binary', mimeType: type === '' ? 'application/octet-stream' : type };
}

function safePath(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
