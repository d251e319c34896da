import type { ToolResponse } from '@quiver/core';
import {
  QuiverError,
  ToolAbortedError,
  ToolExecutionError,
  ToolTimeoutError,
  errorMessage,
  errorResponse,
  toToolResponse,
} from '@quiver/core';
import type { CallCancellation } from './call-cancellation.js';

/** @internal The empty chunk that ends a stream whose last chunk was not marked. */
export const END_CHUNK: ToolResponse = Object.freeze({ content: [], isLast: true }) as ToolResponse;

type Step =
  { kind: 'value'; value: unknown } | { kind: 'error'; error: unknown } | { kind: 'stop' };

/** @internal True for what a tool returns that needs no streaming: not a promise, not an iterator. */
export function isPlainResult(value: unknown): boolean {
  return !isThenable(value) && !isIterator(value);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

function isIterator(value: unknown): value is Iterator<unknown> | AsyncIterator<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { next?: unknown }).next === 'function' &&
    (Symbol.asyncIterator in value || Symbol.iterator in value)
  );
}

/** @internal Mark a chunk as the last one (a copy when it is not already). */
export function asLast(chunk: ToolResponse): ToolResponse {
  return chunk.isLast === true ? chunk : { ...chunk, isLast: true };
}

/** @internal Turn anything thrown by a tool into a typed error. */
export function toToolError(toolName: string, error: unknown): QuiverError {
  if (QuiverError.isInstance(error)) return error;
  return new ToolExecutionError(toolName, `Tool "${toolName}" failed: ${errorMessage(error)}`, {
    cause: error,
  });
}

/** @internal The last chunk of a call that failed. */
export function failure(toolName: string, error: unknown): ToolResponse {
  return asLast(errorResponse(toToolError(toolName, error)));
}

/**
 * @internal Run a tool's `execute` and stream what it produces as ToolResponse chunks, the last
 * one marked `isLast`. Never throws. A plain value (the common case) is answered without a
 * timer, a listener or an AbortController; a Promise or a generator goes to {@link streamResult}.
 */
export async function* runToolStream(
  toolName: string,
  start: () => unknown,
  cancellation: CallCancellation,
  timeoutMs: number | undefined,
  postprocess?: (chunk: ToolResponse) => ToolResponse,
): AsyncGenerator<ToolResponse, void, undefined> {
  try {
    if (cancellation.aborted) {
      // Cancelled before it started (the caller's signal was already aborted): do not run it.
      yield stoppedChunk(toolName, cancellation.controller.signal);
      return;
    }
    let result: unknown;
    try {
      result = start();
    } catch (error) {
      yield failure(toolName, error);
      return;
    }
    const finish = (chunk: ToolResponse): ToolResponse =>
      postprocess ? postprocess(chunk) : chunk;
    if (!isThenable(result) && !isIterator(result)) {
      yield lastChunk(toolName, result, finish);
      return;
    }
    yield* streamResult(toolName, result, cancellation, timeoutMs, finish);
  } finally {
    cancellation.release();
  }
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * @internal A stream of exactly one chunk, marked last. A small class rather than a generator:
 * it is what most calls return, and it allocates nothing but itself and its one result.
 */
class SingleChunk implements AsyncIterableIterator<ToolResponse> {
  #chunk: ToolResponse | undefined;

  constructor(chunk: ToolResponse) {
    this.#chunk = chunk;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<ToolResponse> {
    return this;
  }

  next(): Promise<IteratorResult<ToolResponse, undefined>> {
    const chunk = this.#chunk;
    if (chunk === undefined) return Promise.resolve(DONE);
    this.#chunk = undefined;
    return Promise.resolve({ done: false, value: chunk });
  }

  return(): Promise<IteratorResult<ToolResponse, undefined>> {
    this.#chunk = undefined;
    return Promise.resolve(DONE);
  }
}

/** @internal A stream of exactly one chunk, marked last. */
export function single(response: ToolResponse): AsyncIterable<ToolResponse> {
  return new SingleChunk(asLast(response));
}

/**
 * Stream a Promise or a (sync or async) generator a tool returned. At `timeoutMs` (or when
 * `cancellation` aborts) it stops reading, aborts the tool's signal, yields a timeout (or
 * cancellation) error, and discards anything the tool produces later.
 */
async function* streamResult(
  toolName: string,
  started: unknown,
  cancellation: CallCancellation,
  timeoutMs: number | undefined,
  finish: (chunk: ToolResponse) => ToolResponse,
): AsyncGenerator<ToolResponse, void, undefined> {
  let result = started;
  const controller = cancellation.controller;
  let stop!: () => void;
  const stopped = new Promise<Step>((resolve) => {
    stop = () => resolve({ kind: 'stop' });
  });
  const timeOut =
    timeoutMs !== undefined
      ? () => controller.abort(new ToolTimeoutError(toolName, timeoutMs))
      : undefined;
  const timer = timeOut !== undefined ? setTimeout(timeOut, timeoutMs) : undefined;
  // A generator that never awaits (and a reader that never does either) starves the event loop,
  // so the timer would never fire: each step also checks the clock.
  const deadline = timeoutMs !== undefined ? Date.now() + timeoutMs : Infinity;
  if (controller.signal.aborted) stop();
  else controller.signal.addEventListener('abort', stop, { once: true });
  const stopChunk = (): ToolResponse => stoppedChunk(toolName, controller.signal);

  let iterator: Iterator<unknown> | AsyncIterator<unknown> | undefined;
  let done = false;
  try {
    if (isThenable(result)) {
      const step = await Promise.race([
        Promise.resolve(result).then(
          (value): Step => ({ kind: 'value', value }),
          (error: unknown): Step => ({ kind: 'error', error }),
        ),
        stopped,
      ]);
      if (step.kind === 'stop') {
        yield stopChunk();
        return;
      }
      if (step.kind === 'error') {
        yield failure(toolName, step.error);
        return;
      }
      if (!isIterator(step.value)) {
        yield lastChunk(toolName, step.value, finish);
        return;
      }
      result = step.value;
    }
    iterator = result as Iterator<unknown> | AsyncIterator<unknown>;
    for (;;) {
      let step: Step;
      try {
        const next = iterator.next();
        step = isThenable(next)
          ? await Promise.race([
              Promise.resolve(next).then(
                (item): Step =>
                  item.done
                    ? { kind: 'value', value: { done: true, value: item.value } }
                    : { kind: 'value', value: item },
                (error: unknown): Step => ({ kind: 'error', error }),
              ),
              stopped,
            ])
          : { kind: 'value', value: next };
      } catch (error) {
        step = { kind: 'error', error };
      }
      if (timeOut !== undefined && !controller.signal.aborted && Date.now() >= deadline) timeOut();
      if (controller.signal.aborted) step = { kind: 'stop' };
      if (step.kind === 'stop') {
        yield stopChunk();
        return;
      }
      if (step.kind === 'error') {
        done = true;
        yield failure(toolName, step.error);
        return;
      }
      const item = step.value as IteratorResult<unknown>;
      if (item.done) {
        done = true;
        if (item.value === undefined) yield END_CHUNK;
        else yield lastChunk(toolName, item.value, finish);
        return;
      }
      let chunk: ToolResponse;
      try {
        chunk = finish(toToolResponse(item.value));
      } catch (error) {
        yield failure(toolName, error);
        return;
      }
      yield chunk;
      if (chunk.isLast === true) return;
    }
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    controller.signal.removeEventListener('abort', stop);
    if (iterator !== undefined && !done) {
      // The reader stopped before the tool's generator finished: abort its signal (for work it
      // started alongside) and stop the generator without waiting for it: a tool that ignores
      // its signal must not hold the caller. Its later output goes nowhere.
      if (!controller.signal.aborted) controller.abort(new ToolAbortedError(toolName));
      try {
        const closing = iterator.return?.();
        if (isThenable(closing)) Promise.resolve(closing).catch(() => {});
      } catch {
        // A generator that throws while closing has nothing more to tell the caller.
      }
    }
  }
}

/** The last chunk of a call stopped through its signal: a timeout, or a cancellation. */
function stoppedChunk(toolName: string, signal: AbortSignal): ToolResponse {
  const reason: unknown = signal.reason;
  return asLast(
    errorResponse(
      reason instanceof ToolTimeoutError
        ? reason
        : new ToolAbortedError(toolName, { cause: reason }),
    ),
  );
}

/**
 * The final chunk made from what the tool returned, marked last; if that throws (a postprocess
 * hook), the error chunk instead.
 */
function lastChunk(
  toolName: string,
  value: unknown,
  finish: (chunk: ToolResponse) => ToolResponse,
): ToolResponse {
  try {
    const response = toToolResponse(value);
    const chunk = finish(response);
    // A response toToolResponse just made belongs to nobody else: mark it in place, not by copy.
    if (chunk === response && response !== value) {
      response.isLast = true;
      return response;
    }
    return asLast(chunk);
  } catch (error) {
    return failure(toolName, error);
  }
}
