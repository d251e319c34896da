import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DocumentInput } from '@quiver/core';
import type { Deadline } from './deadline.js';
import { DocumentParseError } from './errors.js';

/** @internal Bytes of the input plus where they came from. */
export interface LoadedInput {
  bytes: Uint8Array;
  /** Path or URL, when the input was one. */
  source: string | undefined;
  /** File name (for hints and the title). */
  filename: string | undefined;
  /** `Content-Type` of a download. */
  contentType: string | undefined;
}

/** @internal */
export interface LoadOptions {
  maxBytes: number;
  filename: string | undefined;
  fetch: typeof fetch;
}

const MIB = 1024 * 1024;

/** @internal Turn a path, a URL or bytes into bytes, within `maxBytes` and the deadline. */
export async function loadInput(
  input: DocumentInput,
  options: LoadOptions,
  deadline: Deadline,
): Promise<LoadedInput> {
  if (input instanceof Uint8Array) {
    if (input.byteLength > options.maxBytes)
      throw tooLarge(options.filename, input.byteLength, options.maxBytes);
    return { bytes: input, source: undefined, filename: options.filename, contentType: undefined };
  }
  const text = input instanceof URL ? input.href : input;
  if (/^https?:\/\//i.test(text)) return download(new URL(text), options, deadline);
  const path = text.startsWith('file:') ? fileURLToPath(text) : text;
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) {
      throw new DocumentParseError(
        'not_found',
        `"${path}" is not a file (it is a directory or a device).`,
        { source: path },
      );
    }
    size = info.size;
  } catch (error) {
    if (DocumentParseError.isInstance(error)) throw error;
    throw new DocumentParseError(
      'not_found',
      `Cannot read "${path}": ${(error as NodeJS.ErrnoException).code ?? 'error'}. Check the path and its permissions.`,
      {
        source: path,
        cause: error,
      },
    );
  }
  // Checked before reading, so a huge file is refused without loading it.
  if (size > options.maxBytes) throw tooLarge(path, size, options.maxBytes);
  const bytes = await deadline.race(readFile(path, { signal: deadline.signal }));
  return {
    bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    source: path,
    filename: options.filename ?? basename(path),
    contentType: undefined,
  };
}

async function download(url: URL, options: LoadOptions, deadline: Deadline): Promise<LoadedInput> {
  const source = url.href;
  let response: Response;
  try {
    response = await deadline.race(
      options.fetch(url, { signal: deadline.signal, redirect: 'follow' }),
    );
  } catch (error) {
    if (DocumentParseError.isInstance(error)) throw error;
    throw new DocumentParseError(
      'fetch_failed',
      `Could not download ${source}: ${(error as Error).message}. Check the URL and the network.`,
      {
        source,
        cause: error,
        isRetryable: true,
      },
    );
  }
  if (!response.ok) {
    const retryable = response.status === 408 || response.status === 429 || response.status >= 500;
    await response.body?.cancel().catch(() => undefined);
    throw new DocumentParseError(
      'fetch_failed',
      `Downloading ${source} failed with HTTP ${response.status} ${response.statusText}.${retryable ? ' Try again later.' : ' Check the URL.'}`,
      {
        source,
        isRetryable: retryable,
      },
    );
  }
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > options.maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge(source, declared, options.maxBytes);
  }
  // Stream the body and stop at the cap: Content-Length may be missing or wrong.
  const parts: Uint8Array[] = [];
  let received = 0;
  if (response.body) {
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await deadline.race(reader.read());
        if (done) break;
        received += value.byteLength;
        if (received > options.maxBytes) throw tooLarge(source, received, options.maxBytes, true);
        parts.push(value);
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }
  const bytes = new Uint8Array(received);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  const finalUrl = response.url ? new URL(response.url) : url;
  const disposition = response.headers.get('content-disposition') ?? '';
  const named = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition)?.[1];
  const fromPath = decodeURIComponent(finalUrl.pathname.split('/').pop() ?? '');
  return {
    bytes,
    source,
    filename:
      options.filename ?? (named ? decodeURIComponent(named) : fromPath || finalUrl.hostname),
    contentType: response.headers.get('content-type') ?? undefined,
  };
}

function tooLarge(
  source: string | undefined,
  size: number,
  limit: number,
  streaming = false,
): DocumentParseError {
  const what = source ? `"${source}"` : 'The input';
  const amount = streaming
    ? `more than ${(limit / MIB).toFixed(1)} MiB`
    : `${(size / MIB).toFixed(1)} MiB`;
  return new DocumentParseError(
    'too_large',
    `${what} is ${amount}, above the ${(limit / MIB).toFixed(1)} MiB limit (maxBytes). Split the document, or raise maxBytes.`,
    {
      source,
    },
  );
}
