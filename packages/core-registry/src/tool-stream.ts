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
import { addDeadline, cancelDeadline, type Deadline } from './deadlines.js';
import { mergeResponses } from './responses.js';

const identity = (chunk: ToolResponse): ToolResponse => chunk;

/** @internal The empty chunk that ends a stream whose last chunk was not marked. */
export const END_CHUNK: ToolResponse = Object.freeze({ content: [], isLast: true }) as ToolResponse;

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
 * timer, a listener or an AbortController; a Promise or a generator goes to {@link ToolRun}.
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
      yield stoppedChunk(toolName, cancellation.reason);
      return;
    }
    let result: unknown;
    try {
      result = start();
    } catch (error) {
      yield failure(toolName, error);
      return;
    }
    if (isPlainResult(result)) {
      yield lastChunk(toolName, result, postprocess ?? identity);
      return;
    }
    yield* new ToolRun(toolName, result, cancellation, timeoutMs, postprocess);
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

/** The last chunk of a call stopped by its cancellation: a timeout, or an abort. */
function stoppedChunk(toolName: string, reason: unknown): ToolResponse {
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

type RunStep = IteratorResult<ToolResponse, undefined>;

/**
 * @internal The stream of a tool that started something asynchronous: a Promise, or a sync or
 * async iterator. It enforces the timeout (also between steps of a generator that never awaits),
 * ends at the cancellation (the caller's signal, `toolkit.close()`), marks exactly one chunk
 * last, and stops the tool when the reader stops early; what the tool produces after that is
 * discarded. On the toolkit's direct path (no middleware) it is the whole stream, and also links
 * the caller's signal and the toolkit's in-flight set (what `#drive` does on the general path).
 * One small iterator, with no generator, no `Promise.race` and no AbortController of its own:
 * a call to a remote tool (an MCP server) should cost about what the remote call costs.
 */
export class ToolRun implements AsyncIterableIterator<ToolResponse> {
  readonly #name: string;
  readonly #cancellation: CallCancellation;
  readonly #timeoutMs: number | undefined;
  /** The tool's postprocess hook for each chunk (identity when it has none). */
  readonly #finish: (chunk: ToolResponse) => ToolResponse;
  readonly #callerSignal: AbortSignal | undefined;
  readonly #inFlight: Set<CallCancellation> | undefined;
  /** What the tool returned, until the first read: a thenable, or an iterator. */
  #started: unknown;
  #iterator: Iterator<unknown> | AsyncIterator<unknown> | undefined;
  #iteratorDone = false;
  #begun = false;
  #ended = false;
  /** The last chunk of a run that ended while no read was waiting: the next read gets it. */
  #final: ToolResponse | undefined;
  #deadline = Infinity;
  #timer: Deadline | undefined;
  /** Answers the read in progress. */
  #waiter: ((step: RunStep | Promise<RunStep>) => void) | undefined;
  #reading: Promise<RunStep> | undefined;
  #relay: (() => void) | undefined;
  /** Answers `complete()` while it waits for the tool's Promise. */
  #answerWhole: ((response: ToolResponse | Promise<ToolResponse>) => void) | undefined;

  constructor(
    name: string,
    started: unknown,
    cancellation: CallCancellation,
    timeoutMs: number | undefined,
    postprocess: ((chunk: ToolResponse) => ToolResponse) | undefined,
    callerSignal?: AbortSignal,
    inFlight?: Set<CallCancellation>,
  ) {
    this.#name = name;
    this.#started = started;
    this.#cancellation = cancellation;
    this.#timeoutMs = timeoutMs;
    this.#finish = postprocess ?? identity;
    this.#callerSignal = callerSignal;
    this.#inFlight = inFlight;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<ToolResponse> {
    return this;
  }

  next(): Promise<RunStep> {
    // A read while another is pending waits for it (as with an async generator).
    if (this.#reading !== undefined) return this.#reading.then(() => this.next());
    if (!this.#begun) this.#begin();
    if (!this.#ended && this.#cancellation.aborted) this.#stop();
    if (this.#ended) {
      const final = this.#final;
      this.#final = undefined;
      return Promise.resolve(final !== undefined ? { done: false, value: final } : DONE);
    }
    const started = this.#started;
    if (started !== undefined) {
      this.#started = undefined;
      if (isThenable(started)) return this.#wait(started, (value) => this.#onResult(value));
      this.#iterator = started as Iterator<unknown> | AsyncIterator<unknown>;
    }
    return this.#pull();
  }

  return(): Promise<RunStep> {
    if (!this.#ended) {
      // The reader stopped before the call ended: tell whatever is still running to stop.
      if (!this.#cancellation.aborted) this.#cancellation.abort(new ToolAbortedError(this.#name));
      this.#end();
    }
    this.#final = undefined;
    return Promise.resolve(DONE);
  }

  /** First read: start the clock; listen for the caller's abort and the toolkit's close. */
  #begin(): void {
    this.#begun = true;
    this.#inFlight?.add(this.#cancellation);
    const timeoutMs = this.#timeoutMs;
    if (timeoutMs !== undefined) {
      this.#timer = addDeadline(timeoutMs, () => this.#timeOut());
      this.#deadline = this.#timer.at;
    }
    this.#cancellation.onAbort = () => this.#stop();
    const callerSignal = this.#callerSignal;
    if (callerSignal !== undefined) {
      if (callerSignal.aborted) this.#cancellation.abort(callerSignal.reason);
      else {
        this.#relay = () => this.#cancellation.abort(callerSignal.reason);
        callerSignal.addEventListener('abort', this.#relay, { once: true });
      }
    }
  }

  #timeOut(): void {
    if (this.#timeoutMs !== undefined)
      this.#cancellation.abort(new ToolTimeoutError(this.#name, this.#timeoutMs));
  }

  /** Aborted (timeout, caller, close): end now; the stop chunk answers the pending or next read. */
  #stop(): void {
    if (this.#ended) return;
    const chunk = this.#stoppedChunk();
    this.#end();
    const answerWhole = this.#answerWhole;
    if (answerWhole !== undefined) {
      this.#answerWhole = undefined;
      answerWhole(mergeResponses([chunk]));
      return;
    }
    const waiter = this.#take();
    if (waiter !== undefined) waiter({ done: false, value: chunk });
    else this.#final = chunk;
  }

  /** Read the next item of the tool's iterator. */
  #pull(): Promise<RunStep> {
    let next: unknown;
    try {
      next = this.#iterator!.next();
    } catch (error) {
      this.#iteratorDone = true;
      return Promise.resolve(this.#last(failure(this.#name, error)));
    }
    if (isThenable(next)) {
      return this.#wait(next, (item) => this.#onItem(item as IteratorResult<unknown>));
    }
    return Promise.resolve(this.#onItem(next as IteratorResult<unknown>));
  }

  /**
   * The whole call as one response (what `callToCompletion` wants). A Promise the tool returned
   * is answered in one turn, without the iterator protocol in between; a stop meanwhile (timeout,
   * abort, close) answers at once with the stop's error.
   */
  complete(): Promise<ToolResponse> {
    const started = this.#started;
    if (this.#begun || !isThenable(started)) return this.#gather([]);
    this.#begin();
    if (this.#cancellation.aborted) return this.#gather([]);
    this.#started = undefined;
    return new Promise<ToolResponse>((resolve) => {
      this.#answerWhole = resolve;
      const onValue = (value: unknown) => {
        const answer = this.#answerWhole;
        if (answer === undefined) return; // stopped meanwhile: what came late goes nowhere
        this.#answerWhole = undefined;
        if (isIterator(value)) {
          this.#iterator = value;
          answer(this.#gather([]));
          return;
        }
        const whole = this.#wholeResponse(value);
        this.#end();
        answer(whole);
      };
      const onError = (error: unknown) => {
        const answer = this.#answerWhole;
        if (answer === undefined) return;
        this.#answerWhole = undefined;
        this.#end();
        answer(mergeResponses([failure(this.#name, error)]));
      };
      (started instanceof Promise ? started : Promise.resolve(started)).then(onValue, onError);
    });
  }

  /**
   * What a Promise tool resolved to, as the whole response of a gathered call: made once, not
   * marked last by one copy and then merged into another (as the stream's chunks are).
   */
  #wholeResponse(value: unknown): ToolResponse {
    let chunk: ToolResponse;
    try {
      const response = toToolResponse(value);
      chunk = this.#finish(response);
      if (chunk === response && response !== value) {
        // Made here from a plain value: nobody else holds it, so mark it in place.
        response.isLast = true;
        return response;
      }
    } catch (error) {
      chunk = failure(this.#name, error);
    }
    // The tool's (or its hook's) own object: the caller gets a copy it may change.
    return mergeResponses([chunk]);
  }

  async #gather(chunks: ToolResponse[]): Promise<ToolResponse> {
    for (;;) {
      const step = await this.next();
      if (step.done) break;
      chunks.push(step.value);
      if (step.value.isLast === true) break;
    }
    return mergeResponses(chunks);
  }

  /** Wait for `thenable`; a stop meanwhile answers the read at once (see #stop). */
  #wait(
    thenable: PromiseLike<unknown>,
    onValue: (value: unknown) => RunStep | Promise<RunStep>,
  ): Promise<RunStep> {
    const reading = new Promise<RunStep>((resolve) => {
      this.#waiter = resolve;
    });
    this.#reading = reading;
    const settle = (step: () => RunStep | Promise<RunStep>) => {
      // Answered already (stopped, or the reader left): what came late goes nowhere.
      const waiter = this.#take();
      if (waiter === undefined) return;
      let result: RunStep | Promise<RunStep>;
      try {
        result = step();
      } catch (error) {
        result = this.#last(failure(this.#name, error));
      }
      waiter(result);
    };
    const onRejected = (error: unknown) =>
      settle(() => {
        this.#iteratorDone = true;
        return this.#last(failure(this.#name, error));
      });
    try {
      (thenable instanceof Promise ? thenable : Promise.resolve(thenable)).then(
        (value) => settle(() => onValue(value)),
        onRejected,
      );
    } catch (error) {
      onRejected(error);
    }
    return reading;
  }

  /** Take the pending read's resolver (undefined when none is pending). */
  #take(): ((step: RunStep | Promise<RunStep>) => void) | undefined {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    this.#reading = undefined;
    return waiter;
  }

  /** The tool's Promise resolved: its value is the answer, or an iterator to read. */
  #onResult(value: unknown): RunStep | Promise<RunStep> {
    if (this.#ended) return this.next();
    if (!isIterator(value)) return this.#last(lastChunk(this.#name, value, this.#finish));
    this.#iterator = value;
    return this.#pull();
  }

  #onItem(item: IteratorResult<unknown>): RunStep {
    // A generator that never awaits starves the event loop, so the timer could never fire: each
    // step also checks the clock.
    if (
      this.#deadline !== Infinity &&
      !this.#cancellation.aborted &&
      performance.now() >= this.#deadline
    )
      this.#timeOut();
    if (this.#ended || this.#cancellation.aborted) {
      if (!this.#ended) this.#stop();
      const final = this.#final ?? this.#stoppedChunk();
      this.#final = undefined;
      return { done: false, value: final };
    }
    if (item.done) {
      this.#iteratorDone = true;
      return this.#last(
        item.value === undefined ? END_CHUNK : lastChunk(this.#name, item.value, this.#finish),
      );
    }
    let chunk: ToolResponse;
    try {
      chunk = this.#finish(toToolResponse(item.value));
    } catch (error) {
      return this.#last(failure(this.#name, error));
    }
    if (chunk.isLast === true) return this.#last(chunk);
    return { done: false, value: chunk };
  }

  #stoppedChunk(): ToolResponse {
    return stoppedChunk(this.#name, this.#cancellation.reason);
  }

  /** The final chunk: end the run, then hand the chunk out. */
  #last(chunk: ToolResponse): RunStep {
    this.#end();
    return { done: false, value: chunk };
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#timer !== undefined) cancelDeadline(this.#timer);
    this.#cancellation.onAbort = undefined;
    if (this.#relay !== undefined) this.#callerSignal?.removeEventListener('abort', this.#relay);
    this.#cancellation.release();
    this.#inFlight?.delete(this.#cancellation);
    const iterator = this.#iterator;
    if (iterator !== undefined && !this.#iteratorDone) {
      // Stopped before the tool's generator finished: abort its signal (for work it started
      // alongside) and stop the generator without waiting for it; its later output goes nowhere.
      if (!this.#cancellation.aborted) this.#cancellation.abort(new ToolAbortedError(this.#name));
      try {
        const closing = iterator.return?.();
        if (isThenable(closing)) Promise.resolve(closing).catch(() => {});
      } catch {
        // A generator that throws while closing has nothing more to tell the caller.
      }
    }
  }
}
