import { mkdir, readFile, readdir, rm } from 'node:fs/promises';
import writeFileAtomic from 'write-file-atomic';
import { join, resolve, sep } from 'node:path';
import { z } from 'zod';
import { ConfigurationError, ToolExecutionError } from '@quiver/core';
import type { Tool } from './define-tool.js';
import { defineTool } from './define-tool.js';

/** Options of {@link createStorageTool}. */
export interface StorageToolOptions {
  /** Folder that holds the store; created when missing. Nothing is ever written outside it. */
  root: string;
  /** Default namespace when a call names none. Default `default`. */
  namespace?: string;
  /** Largest value, in bytes (UTF-8). Default 1 MiB. */
  maxValueBytes?: number;
  /** Tool name. Default `storage`. */
  name?: string;
}

const MAX_KEY_LENGTH = 512;

/**
 * Map a key to a file name that cannot leave its folder: every character outside
 * `[A-Za-z0-9_-]` (dots and slashes included) is percent-encoded, so `../etc/passwd` becomes
 * `%2E%2E%2Fetc%2Fpasswd`, one file inside the namespace folder.
 */
export function keyToFileName(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9_-]/.test(char)
      ? char
      : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Inverse of {@link keyToFileName}. */
export function fileNameToKey(name: string): string {
  const bytes: number[] = [];
  for (let index = 0; index < name.length; index++) {
    if (name[index] === '%') {
      bytes.push(parseInt(name.slice(index + 1, index + 3), 16));
      index += 2;
    } else bytes.push(name.charCodeAt(index));
  }
  return Buffer.from(bytes).toString('utf8');
}

function checkKey(key: string, what: string): void {
  if (key.length === 0)
    throw new ToolExecutionError('storage', `The ${what} must not be empty.`, {
      code: 'invalid_key',
    });
  if (key.length > MAX_KEY_LENGTH) {
    throw new ToolExecutionError(
      'storage',
      `The ${what} is longer than ${MAX_KEY_LENGTH} characters.`,
      { code: 'invalid_key' },
    );
  }
  if (key.includes('\0'))
    throw new ToolExecutionError('storage', `The ${what} must not contain NUL characters.`, {
      code: 'invalid_key',
    });
}

/**
 * A namespaced key-value store on disk, as a tool (Qwen-Agent's Storage): `put`, `get`, `delete`
 * and `scan` (by key prefix). Writes are atomic (temp file, fsync, rename): a reader sees the old
 * value or the new one, never a torn one, and concurrent writers to one key leave one whole value.
 *
 * @throws ConfigurationError when `root` is missing
 */
export function createStorageTool(options: StorageToolOptions): Tool<StorageArguments> {
  if (!options?.root)
    throw new ConfigurationError(
      'createStorageTool needs a root folder: { root: "/path/to/store" }.',
    );
  const root = resolve(options.root);
  const maxValueBytes = options.maxValueBytes ?? 1024 * 1024;
  const defaultNamespace = options.namespace ?? 'default';

  const folder = (namespace: string): string => {
    checkKey(namespace, 'namespace');
    const dir = join(root, keyToFileName(namespace));
    // Defence in depth: the encoding already guarantees this.
    if (!dir.startsWith(root + sep))
      throw new ToolExecutionError('storage', 'The namespace escapes the storage root.', {
        code: 'invalid_key',
      });
    return dir;
  };

  return defineTool({
    name: options.name ?? 'storage',
    description: {
      en: 'A persistent key-value store. operation "put" saves value under key, "get" reads it, "delete" removes it, "scan" lists the keys (and values) starting with prefix. Use a namespace to keep separate stores apart.',
      zh: '持久化的键值存储。operation 为 "put" 时把 value 存到 key 下，"get" 读取，"delete" 删除，"scan" 列出以 prefix 开头的键（及其值）。可用 namespace 区分不同的存储。',
    },
    parameters: z.object({
      operation: z.enum(['put', 'get', 'delete', 'scan']).describe('What to do'),
      key: z.string().optional().describe('The key (put, get, delete)'),
      value: z.string().optional().describe('The value to save (put)'),
      prefix: z.string().optional().describe('Key prefix to list (scan); empty lists everything'),
      namespace: z.string().optional().describe('Separate store to use'),
    }),
    flags: { fileAccess: true, sideEffects: true },
    async execute(args) {
      const dir = folder(args.namespace ?? defaultNamespace);
      const needKey = (): string => {
        if (args.key === undefined) {
          throw new ToolExecutionError(
            'storage',
            `The "${args.operation}" operation needs a key.`,
            { code: 'invalid_key' },
          );
        }
        checkKey(args.key, 'key');
        return join(dir, keyToFileName(args.key));
      };
      switch (args.operation) {
        case 'put': {
          const file = needKey();
          if (args.value === undefined) {
            throw new ToolExecutionError('storage', 'The "put" operation needs a value.', {
              code: 'invalid_value',
            });
          }
          const bytes = Buffer.from(args.value, 'utf8');
          if (bytes.length > maxValueBytes) {
            throw new ToolExecutionError(
              'storage',
              `The value is ${bytes.length} bytes; the limit is ${maxValueBytes}. Store a shorter value or split it over several keys.`,
              {
                code: 'value_too_large',
              },
            );
          }
          await mkdir(dir, { recursive: true });
          // Temp file in the same folder, fsync, rename: a value is never torn.
          await writeFileAtomic(file, bytes, { fsync: true });
          return `Saved ${bytes.length} bytes under "${args.key}".`;
        }
        case 'get': {
          const file = needKey();
          try {
            return await readFile(file, 'utf8');
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
              throw new ToolExecutionError(
                'storage',
                `No value is stored under "${args.key}". Use "scan" to list the keys.`,
                { code: 'key_not_found' },
              );
            }
            throw error;
          }
        }
        case 'delete': {
          const file = needKey();
          try {
            await rm(file);
            return `Deleted "${args.key}".`;
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'ENOENT')
              return `Nothing was stored under "${args.key}".`;
            throw error;
          }
        }
        case 'scan': {
          const prefix = args.prefix ?? '';
          let names: string[];
          try {
            names = await readdir(dir);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'ENOENT') names = [];
            else throw error;
          }
          const keys = names
            .filter((name) => !name.includes('.')) // keys never contain a dot (it is encoded); temp files do
            .map(fileNameToKey)
            .filter((key) => key.startsWith(prefix))
            .sort();
          const entries: { key: string; value: string }[] = [];
          for (const key of keys) {
            try {
              entries.push({ key, value: await readFile(join(dir, keyToFileName(key)), 'utf8') });
            } catch {
              // Deleted between listing and reading: not part of the answer.
            }
          }
          return { prefix, count: entries.length, entries };
        }
      }
    },
  });
}

/** The arguments of the storage tool. */
export interface StorageArguments {
  operation: 'put' | 'get' | 'delete' | 'scan';
  key?: string;
  value?: string;
  prefix?: string;
  namespace?: string;
}
