/** What {@link sniffImage} recognised: the format from the magic bytes, the size from the header. */
export interface ImageSniff {
  mimeType: 'image/png' | 'image/jpeg' | 'image/webp';
  /** File extension without the dot: `png`, `jpg`, `webp`. */
  extension: 'png' | 'jpg' | 'webp';
  /** Pixel width, when the header says (always for PNG and WebP; JPEG when a frame header is found). */
  width?: number;
  height?: number;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
// JPEG start-of-frame markers that carry the image size (not DHT C4, JPG C8, DAC CC).
const JPEG_FRAME_MARKERS = new Set([
  0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf,
]);

/**
 * Recognise PNG, JPEG and WebP bytes by their magic numbers, and read the pixel size from the
 * header. Content types and file names lie (an expired image link answers an HTML page with
 * status 200); the first bytes do not.
 *
 * @param bytes - The file's bytes (the first few hundred are enough for the format).
 * @returns The format and size, or `undefined` when the bytes are not one of the three formats.
 * @example
 * sniffImage(readFileSync('cat.png')); // { mimeType: 'image/png', extension: 'png', width: 1024, height: 1024 }
 */
export function sniffImage(bytes: Uint8Array): ImageSniff | undefined {
  if (startsWith(bytes, PNG_SIGNATURE, 0)) {
    const size =
      bytes.length >= 24 && ascii(bytes, 12, 4) === 'IHDR'
        ? { width: uint32be(bytes, 16), height: uint32be(bytes, 20) }
        : {};
    return { mimeType: 'image/png', extension: 'png', ...size };
  }
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    return { mimeType: 'image/jpeg', extension: 'jpg', ...jpegSize(bytes) };
  }
  if (bytes.length >= 16 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') {
    return { mimeType: 'image/webp', extension: 'webp', ...webpSize(bytes) };
  }
  return undefined;
}

function jpegSize(bytes: Uint8Array): { width?: number; height?: number } {
  let offset = 2;
  while (offset + 3 < bytes.length) {
    if (bytes[offset] !== 0xff) return {};
    const marker = bytes[offset + 1]!;
    // Fill bytes (0xFF 0xFF …) may pad between segments.
    if (marker === 0xff) {
      offset += 1;
      continue;
    }
    // Markers without a length field: TEM, RST0-7, SOI, EOI.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd9)) {
      offset += 2;
      continue;
    }
    if (marker === 0xda) return {}; // start of scan: no frame header before the image data
    if (JPEG_FRAME_MARKERS.has(marker) && offset + 9 <= bytes.length) {
      return { height: uint16be(bytes, offset + 5), width: uint16be(bytes, offset + 7) };
    }
    offset += 2 + uint16be(bytes, offset + 2);
  }
  return {};
}

function webpSize(bytes: Uint8Array): { width?: number; height?: number } {
  const chunk = ascii(bytes, 12, 4);
  if (chunk === 'VP8X' && bytes.length >= 30) {
    return { width: 1 + uint24le(bytes, 24), height: 1 + uint24le(bytes, 27) };
  }
  if (chunk === 'VP8 ' && bytes.length >= 30 && startsWith(bytes, [0x9d, 0x01, 0x2a], 23)) {
    return {
      width: (bytes[26]! | (bytes[27]! << 8)) & 0x3fff,
      height: (bytes[28]! | (bytes[29]! << 8)) & 0x3fff,
    };
  }
  if (chunk === 'VP8L' && bytes.length >= 25 && bytes[20] === 0x2f) {
    const [b1, b2, b3, b4] = [bytes[21]!, bytes[22]!, bytes[23]!, bytes[24]!];
    return {
      width: 1 + (b1 | ((b2 & 0x3f) << 8)),
      height: 1 + ((b2 >> 6) | (b3 << 2) | ((b4 & 0x0f) << 10)),
    };
  }
  return {};
}

function startsWith(bytes: Uint8Array, prefix: readonly number[], offset: number): boolean {
  return (
    bytes.length >= offset + prefix.length &&
    prefix.every((value, index) => bytes[offset + index] === value)
  );
}

function ascii(bytes: Uint8Array, offset: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + length));
}

function uint16be(bytes: Uint8Array, offset: number): number {
  return (bytes[offset]! << 8) | bytes[offset + 1]!;
}

function uint24le(bytes: Uint8Array, offset: number): number {
  return bytes[offset]! | (bytes[offset + 1]! << 8) | (bytes[offset + 2]! << 16);
}

function uint32be(bytes: Uint8Array, offset: number): number {
  return (
    ((bytes[offset]! << 24) >>> 0) +
    (bytes[offset + 1]! << 16) +
    (bytes[offset + 2]! << 8) +
    bytes[offset + 3]!
  );
}
