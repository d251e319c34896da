import type { Logger, ToolResponse } from '@quiver/core';
import type { Toolkit } from '@quiver/core-registry';
import type { Clock } from '../src/index.js';

/** A clock whose sleeps return at once and move time forward; it records every sleep. */
export class FakeClock implements Clock {
  time = 1_000;
  readonly sleeps: number[] = [];
  now(): number {
    return this.time;
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    this.sleeps.push(ms);
    this.time += ms;
  }
  advance(ms: number): void {
    this.time += ms;
  }
}

/** A logger that keeps what it was told. */
export function recordingLogger(): Logger & {
  entries: { level: string; message: string; fields?: Record<string, unknown> }[];
} {
  const entries: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    entries.push({ level, message, ...(fields ? { fields } : {}) });
  };
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

let counter = 0;
/** Call a tool by name with arguments given as an object. */
export function call(
  toolkit: Toolkit,
  name: string,
  args: Record<string, unknown> | string,
  context: Parameters<Toolkit['callToCompletion']>[1] = {},
): Promise<ToolResponse> {
  counter++;
  return toolkit.callToCompletion(
    {
      id: `call_${counter}`,
      name,
      arguments: typeof args === 'string' ? args : JSON.stringify(args),
    },
    context,
  );
}

/** The text of a response's text blocks. */
export function textOf(response: ToolResponse): string {
  return response.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

/** A promise plus its resolve function. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** Deep-freeze an object so any mutation throws (in strict mode). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

/** Wait until `predicate` holds, checking every 5 ms; fail after `timeoutMs`. */
export async function waitFor(predicate: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('waitFor: condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
