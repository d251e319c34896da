import { inflateRawSync } from 'node:zlib';
import { DocumentParseError } from './errors.js';

/** @internal One entry of a zip central directory. */
export interface ZipEntry {
  name: string;
  method: number;
  encrypted: boolean;
  compressedSize: number;
  declaredSize: number;
  localHeaderOffset: number;
  crc32: number;
}

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const MAX_ENTRIES = 20_000;

/**
 * @internal A minimal read-only zip reader for OOXML packages (DOCX, PPTX, XLSX).
 *
 * Written here rather than taken from a zip library because the guard against zip bombs has to
 * sit inside decompression: each entry is inflated with zlib's `maxOutputLength` set to what is
 * left of the decompressed-size budget, so a lying size header or a 1000:1 entry stops at the
 * cap instead of filling memory. Entries are read lazily, by name.
 */
export class ZipArchive {
  private readonly entries = new Map<string, ZipEntry>();
  private inflatedBytes = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly maxDecompressedBytes: number,
    private readonly source: string | undefined,
  ) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const eocd = findEndOfCentralDirectory(view);
    if (eocd < 0)
      throw this.corrupted(
        'the zip directory at its end is missing (the file is truncated or damaged)',
      );
    const count = view.getUint16(eocd + 10, true);
    const directoryOffset = view.getUint32(eocd + 16, true);
    if (count === 0xffff || directoryOffset === 0xffffffff) {
      throw new DocumentParseError(
        'unsupported_format',
        `${this.label()} is a ZIP64 archive, which is not supported for office documents. Re-save it with Office or LibreOffice.`,
        { source },
      );
    }
    if (count > MAX_ENTRIES) {
      throw new DocumentParseError(
        'too_large',
        `${this.label()} has ${count} zip entries (limit ${MAX_ENTRIES}).`,
        { source },
      );
    }
    let offset = directoryOffset;
    for (let index = 0; index < count; index += 1) {
      if (offset + 46 > bytes.byteLength || view.getUint32(offset, true) !== CENTRAL_SIGNATURE) {
        throw this.corrupted('its zip directory is damaged');
      }
      const flags = view.getUint16(offset + 8, true);
      const nameLength = view.getUint16(offset + 28, true);
      const extraLength = view.getUint16(offset + 30, true);
      const commentLength = view.getUint16(offset + 32, true);
      const name = new TextDecoder().decode(bytes.subarray(offset + 46, offset + 46 + nameLength));
      this.entries.set(name.replace(/^\/+/, ''), {
        name,
        method: view.getUint16(offset + 10, true),
        encrypted: (flags & 1) === 1,
        compressedSize: view.getUint32(offset + 20, true),
        declaredSize: view.getUint32(offset + 24, true),
        localHeaderOffset: view.getUint32(offset + 42, true),
        crc32: view.getUint32(offset + 16, true),
      });
      offset += 46 + nameLength + extraLength + commentLength;
    }
  }

  /** Entry names, in directory order. */
  names(): string[] {
    return [...this.entries.keys()];
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** Sum of the sizes the entries declare (cheap first check; the real cap is enforced while inflating). */
  declaredTotal(): number {
    let total = 0;
    for (const entry of this.entries.values()) total += entry.declaredSize;
    return total;
  }

  /** The entry's bytes, or `undefined` when there is no such entry. */
  read(name: string): Uint8Array | undefined {
    const entry = this.entries.get(name);
    if (!entry) return undefined;
    if (entry.encrypted) {
      throw new DocumentParseError(
        'encrypted',
        `${this.label()} is password-protected (encrypted zip entry "${name}"). Remove the password and try again.`,
        { source: this.source },
      );
    }
    const view = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
    const at = entry.localHeaderOffset;
    if (at + 30 > this.bytes.byteLength || view.getUint32(at, true) !== LOCAL_SIGNATURE) {
      throw this.corrupted(`the zip entry "${name}" is damaged`);
    }
    const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
    const end = start + entry.compressedSize;
    if (end > this.bytes.byteLength)
      throw this.corrupted(`the zip entry "${name}" is cut off (the file is truncated)`);
    const data = this.bytes.subarray(start, end);
    const budget = this.maxDecompressedBytes - this.inflatedBytes;
    let output: Uint8Array;
    if (entry.method === 0) {
      output = data;
    } else if (entry.method === 8) {
      try {
        // maxOutputLength makes zlib stop (RangeError) once the budget is exceeded, whatever the header claims.
        output = inflateRawSync(data, { maxOutputLength: Math.max(1, budget) });
      } catch (error) {
        if (
          error instanceof RangeError ||
          (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE'
        ) {
          throw this.tooLarge();
        }
        throw this.corrupted(`the zip entry "${name}" does not decompress`, error);
      }
    } else {
      throw this.corrupted(
        `the zip entry "${name}" uses compression method ${entry.method}, which office files never use`,
      );
    }
    this.inflatedBytes += output.byteLength;
    if (this.inflatedBytes > this.maxDecompressedBytes) throw this.tooLarge();
    // Damaged compressed data can still inflate, to garbage: the checksum catches it.
    if (crc32(output) !== entry.crc32)
      throw this.corrupted(`the zip entry "${name}" fails its checksum (damaged data)`);
    return output;
  }

  /** The entry decoded as UTF-8 text (OOXML parts are UTF-8), or `undefined`. */
  readText(name: string): string | undefined {
    const bytes = this.read(name);
    return bytes === undefined ? undefined : new TextDecoder('utf-8').decode(bytes);
  }

  private label(): string {
    return this.source ? `"${this.source}"` : 'The document';
  }

  private corrupted(what: string, cause?: unknown): DocumentParseError {
    return new DocumentParseError(
      'corrupted',
      `${this.label()} cannot be read: ${what}. Re-export or re-download the file.`,
      { source: this.source, cause },
    );
  }

  private tooLarge(): DocumentParseError {
    const limit = Math.round(this.maxDecompressedBytes / (1024 * 1024));
    return new DocumentParseError(
      'too_large',
      `${this.label()} decompresses to more than ${limit} MiB (maxDecompressedBytes), which looks like a zip bomb or an unusually large document. Raise maxDecompressedBytes only if you trust the file.`,
      { source: this.source },
    );
  }
}

let crcTable: Uint32Array | undefined;

/** CRC-32 (zip's checksum); zlib.crc32 only exists from Node 20.15, so it is computed here. */
function crc32(data: Uint8Array): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let index = 0; index < 256; index += 1) {
      let value = index;
      for (let bit = 0; bit < 8; bit += 1)
        value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
      crcTable[index] = value >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let index = 0; index < data.length; index += 1)
    crc = crcTable[(crc ^ data[index]!) & 255]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function findEndOfCentralDirectory(view: DataView): number {
  const lowest = Math.max(0, view.byteLength - 22 - 0xffff);
  for (let offset = view.byteLength - 22; offset >= lowest; offset -= 1) {
    if (view.getUint32(offset, true) === EOCD_SIGNATURE) return offset;
  }
  return -1;
}
