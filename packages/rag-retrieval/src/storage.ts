import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import * as zlib from 'node:zlib';

/** Helpers for crash-safe files. @internal */

/** A temporary name beside `path`, unique per process and call. */
export function temporaryPath(path: string): string {
  return join(
    dirname(path),
    `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`,
  );
}

/** True for names {@link temporaryPath} produces. */
export function isTemporaryName(name: string): boolean {
  return /^\..+\.tmp-\d+-[0-9a-f]{8}$/.test(name);
}

/** Flush a file's (or directory's) data to the disk. */
export function fsyncPath(path: string): void {
  const descriptor = openSync(path, 'r');
  try {
    fsyncSync(descriptor);
  } catch (error) {
    // Some platforms (Windows) refuse to fsync a directory; the rename is still atomic there.
    if (
      (error as NodeJS.ErrnoException).code !== 'EISDIR' &&
      (error as NodeJS.ErrnoException).code !== 'EPERM'
    ) {
      throw error;
    }
  } finally {
    closeSync(descriptor);
  }
}

/**
 * Write `parts` to `path` atomically: a temporary file beside it, fsync, rename over `path`,
 * fsync the directory. A crash at any point leaves either the old file or the new one, never a mix.
 */
export function writeFileAtomic(path: string, parts: readonly Uint8Array[]): void {
  const temporary = temporaryPath(path);
  const descriptor = openSync(temporary, 'w');
  try {
    for (const part of parts) {
      let offset = 0;
      while (offset < part.byteLength)
        offset += writeSync(descriptor, part, offset, part.byteLength - offset);
    }
    fsyncSync(descriptor);
  } catch (error) {
    closeSync(descriptor);
    safeUnlink(temporary);
    throw error;
  }
  closeSync(descriptor);
  commitTemporary(temporary, path);
}

/** Rename a fully written (and fsynced) temporary file over `path`, then fsync the directory. */
export function commitTemporary(temporary: string, path: string): void {
  renameSync(temporary, path);
  fsyncPath(dirname(path));
}

/** Remove a file if it exists. */
export function safeUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone (or never written): nothing to clean up.
  }
}

const crcTable = /* @__PURE__ */ (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 of `data`: zlib's native one (Node ≥ 20.15) or a table-driven fallback. */
export function crc32(data: Uint8Array): number {
  const native = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;
  if (native) return native(data) >>> 0;
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = crcTable[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** CRC-32 of a file's bytes. */
export function fileCrc32(path: string): { crc32: number; bytes: number } {
  const data = readFileSync(path);
  return { crc32: crc32(data), bytes: data.byteLength };
}
