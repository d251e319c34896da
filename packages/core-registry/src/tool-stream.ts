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

/** @internal The empty chunk that ends a stream whose last chunk was not marked. */
export const END_CHUNK: ToolResponse = Object.freeze({ content: [], isLast: true }) as ToolResponse;

type Step = { kind: 'value'; value: unknown } | { kind: 'error'; error: unknown } | { kind: 'stop' };

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
  return new ToolExecutionError(toolName, `Tool "${toolName}" failed: ${errorMessage(error)}`, { cause: error });
}

/** @internal The last chunk of a call that failed. */
export function failure(toolName: string, error: unknown): ToolResponse {
  return asLast(errorResponse(toToolError(toolName, error)));
}

/**
 * @internal Run a tool's `execute` and stream what it produces as ToolResponse chunks, the last
 * one marked `isLast`. Never throws. At `timeoutMs` (or when `controller` aborts) it stops
 * reading, aborts the tool's signal, yields a timeout (or cancellation) error, and discards
 * anything the tool produces later.
 */
export async function* runToolStream(
  toolName: string,
  start: () => unknown,
  controller: AbortController,
  timeoutMs: number | undefined,
  postprocess?: (chunk: ToolResponse) => ToolResponse,
): AsyncGenerator<ToolResponse, void, undefined> {
  const finish = (chunk: ToolResponse): ToolResponse => (postprocess ? postprocess(chunk) : chunk);
  let result: unknown;
  try {
    result = start();
  } catch (error) {
    yield failure(toolName, error);
    return;
  }
  // Fast path: a plain value needs no timer, no listener, no race.
  if (!isThenable(result) && !isIterator(result)) {
    yield* safeFinal(toolName, () => asLast(finish(toToolResponse(result))));
    return;
  }

  let stop!: () => void;
  const stopped = new Promise<Step>((resolve) => {
    stop = () => resolve({ kind: 'stop' });
  });
  const timer =
    timeoutMs !== undefined
      ? setTimeout(() => controller.abort(new ToolTimeoutError(toolName, timeoutMs)), timeoutMs)
      : undefined;
  if (controller.signal.aborted) stop();
  else controller.signal.addEventListener('abort', stop, { once: true });
  const stopChunk = (): ToolResponse => {
    const reason: unknown = controller.signal.reason;
    return asLast(
      errorResponse(reason instanceof ToolTimeoutError ? reason : new ToolAbortedError(toolName, { cause: reason })),
    );
  };

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
        yield* safeFinal(toolName, () => asLast(finish(toToolResponse(step.value))));
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
                (item): Step => (item.done ? { kind: 'value', value: { done: true, value: item.value } } : { kind: 'value', value: item }),
                (error: unknown): Step => ({ kind: 'error', error }),
              ),
              stopped,
            ])
          : { kind: 'value', value: next };
      } catch (error) {
        step = { kind: 'error', error };
      }
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
        else yield* safeFinal(toolName, () => asLast(finish(toToolResponse(item.value))));
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
      // Stop the tool's generator without waiting for it: a tool that ignores its signal must not
      // hold the caller. Its later output goes nowhere.
      try {
        const closing = iterator.return?.();
        if (isThenable(closing)) Promise.resolve(closing).catch(() => {});
      } catch {
        // A generator that throws while closing has nothing more to tell the caller.
      }
    }
  }
}

/** Build the final chunk; if building it throws (a postprocess hook), yield an error instead. */
function* safeFinal(toolName: string, build: () => ToolResponse): Generator<ToolResponse, ToolResponse, undefined> {
  try {
    const chunk = build();
    yield chunk;
    return chunk;
  } catch (error) {
    const chunk = failure(toolName, error);
    yield chunk;
    return chunk;
  }
}
