import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isAlive } from '../src/process-tree.js';

/** Entry point of @modelcontextprotocol/server-everything (a devDependency). */
export const EVERYTHING = join(
  __dirname,
  '..',
  'node_modules',
  '@modelcontextprotocol',
  'server-everything',
  'dist',
  'index.js',
);

/** Entry point of @modelcontextprotocol/server-filesystem (a devDependency). */
export const FILESYSTEM = join(
  __dirname,
  '..',
  'node_modules',
  '@modelcontextprotocol',
  'server-filesystem',
  'dist',
  'index.js',
);

/** Our Toolkit served over stdio (see fixtures/toolkit-server.cjs). */
export const TOOLKIT_SERVER = join(__dirname, 'fixtures', 'toolkit-server.cjs');

/** A port that was free a moment ago (for servers that cannot listen on port 0 and tell). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A server-everything process speaking an HTTP transport on a free port. */
export interface HttpEverything {
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Start server-everything with `streamableHttp` or `sse`, and wait until it listens. */
export async function startEverythingHttp(
  transport: 'streamableHttp' | 'sse',
  port?: number,
): Promise<HttpEverything> {
  const chosen = port ?? (await freePort());
  const child = spawn(process.execPath, [EVERYTHING, transport], {
    env: { ...process.env, PORT: String(chosen) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${output}`)), 20_000);
    child.stderr!.on('data', (data: Buffer) => {
      output += data.toString();
      if (/listening on port|running on port/i.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${output}`));
    });
  });
  child.stderr!.resume();
  return {
    port: chosen,
    process: child,
    stop: () => stopProcess(child),
  };
}

/** Kill a child process and wait until it has exited. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

/** Wait (polling) until `condition` holds; fails the test after `timeoutMs`. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The processes among `pids` that still exist (zombies excluded). */
export function living(pids: readonly number[]): number[] {
  return pids.filter(isAlive);
}

/**
 * The params of every `notifications/progress` a client's transport receives, recorded as they
 * arrive, before the SDK dispatches them. Call after `client.connect(transport)`. The SDK runs
 * notification handlers a microtask after the message while it handles a response at once, and the
 * response retires the request's progress handler: progress that arrives in one read with the
 * result never reaches `onprogress` (modelcontextprotocol/typescript-sdk#2580). On a loaded machine
 * a whole short stream can arrive so; what the server sent is read here instead.
 */
export function recordProgress(transport: Transport): Record<string, unknown>[] {
  const seen: Record<string, unknown>[] = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if ('method' in message && message.method === 'notifications/progress') {
      seen.push(message.params as Record<string, unknown>);
    }
    deliver?.(message, extra);
  };
  return seen;
}
