import { onToolAbort, type ToolContext } from '@quiver/core';

/**
 * A few controllers made ahead, while the process waits: on Node 20, making an AbortSignal costs
 * 3–7 µs, as much as the rest of a call's dispatch, and a tool that reads `context.signal` (to
 * pass it on to a request, say) would otherwise pay it before it can start. A controller is
 * taken from here fresh (never handed out before, never aborted); the stock is refilled on a
 * later turn of the event loop, off the path of the call that emptied it.
 */
const SPARE_CONTROLLERS = 4;
const noop = (): void => {};
const spares: AbortController[] = [];
let refilling = false;
const schedule: (callback: () => void) => unknown =
  typeof setImmediate === 'function' ? setImmediate : (callback) => setTimeout(callback, 0);

function makeController(): AbortController {
  const controller = new AbortController();
  void controller.signal; // the signal is the costly part: make it now
  return controller;
}

function refill(): void {
  refilling = false;
  while (spares.length < SPARE_CONTROLLERS) spares.push(makeController());
}

/** @internal A never-used AbortController: a spare when there is one, else a new one. */
export function freshController(): AbortController {
  const spare = spares.pop();
  if (!refilling) {
    refilling = true;
    const handle = schedule(refill);
    // A pending refill must not keep a process alive that has nothing else to do.
    (handle as { unref?: () => void } | undefined)?.unref?.();
  }
  return spare ?? makeController();
}

/**
 * @internal The cancellation of one tool call: what `context.signal` reports, what a timeout, the
 * caller's signal and `toolkit.close()` abort.
 *
 * Its AbortController is made on first use (a tool reading `context.signal`, a call that needs a
 * timer), not per call: on Node 20 creating an AbortController costs more than the whole rest of
 * a trivial call (see bench/dispatch.mjs). An abort that comes before is remembered and applied
 * when the controller is made, so nobody can tell the difference.
 */
export class CallCancellation {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  /** The context whose `signal` reads this cancellation, until a middleware replaces that signal. */
  #context: ToolContext | undefined;
  #unfollow: (() => void) | undefined;
  /** Told of the first abort: the run that streams this call (see ToolRun), which needs no signal. */
  onAbort: ((reason: unknown) => void) | undefined;
  /** What tools asked to be told through `context.onAbort` (made on first use). */
  #listeners: ((reason: unknown) => void)[] | undefined;

  /** The controller, made now if it was not yet. */
  get controller(): AbortController {
    if (this.#controller === undefined) {
      this.#controller = freshController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller;
  }

  get aborted(): boolean {
    return this.#controller !== undefined ? this.#controller.signal.aborted : this.#aborted;
  }

  /** Why it was aborted (undefined while it is not). */
  get reason(): unknown {
    return this.#controller !== undefined ? this.#controller.signal.reason : this.#reason;
  }

  /** Abort (once; later calls change nothing). */
  abort(reason: unknown): void {
    if (this.aborted) return;
    if (this.#controller !== undefined) {
      this.#controller.abort(reason);
    } else {
      this.#aborted = true;
      this.#reason = reason;
    }
    const listener = this.onAbort;
    this.onAbort = undefined;
    listener?.(reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners !== undefined) for (const each of listeners) each(reason);
  }

  /**
   * `context.onAbort`: tell `listener` of the abort (at once when it has happened) while `context`
   * still carries this call's signal; once a middleware has put another signal there, listen to
   * that signal instead. No AbortSignal is made either way.
   */
  listen(context: ToolContext, listener: (reason: unknown) => void): () => void {
    if (context !== this.#context && !(this.#controller?.signal === context.signal)) {
      // Another signal: listen to it as core does for a context without onAbort.
      return onToolAbort({ signal: context.signal }, listener);
    }
    if (this.aborted) {
      listener(this.reason);
      return noop;
    }
    const listeners = (this.#listeners ??= []);
    listeners.push(listener);
    return () => {
      const index = this.#listeners?.indexOf(listener) ?? -1;
      if (index !== -1) this.#listeners!.splice(index, 1);
    };
  }

  /** The signal (the controller is made now if it was not yet). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Make `context` the call's context. Its `signal` must be an accessor that reads
   * {@link CallCancellation.signal} and whose setter calls {@link CallCancellation.replaceSignal}:
   * the signal is then only made when a tool reads it.
   */
  attach(context: ToolContext): ToolContext {
    this.#context = context;
    return context;
  }

  /** A middleware put another signal on `context`: store it there, and stop owning that context. */
  replaceSignal(context: ToolContext, signal: AbortSignal): void {
    if (this.#context === context) this.#context = undefined;
    Object.defineProperty(context, 'signal', {
      value: signal,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }

  /**
   * The cancellation a tool running with `context` must use: this one while the context still
   * carries this call's signal, else a new one that follows the signal a middleware put there.
   */
  for(context: ToolContext): CallCancellation {
    if (context === this.#context) return this;
    if (this.#controller !== undefined && context.signal === this.#controller.signal) return this;
    return CallCancellation.following(context.signal);
  }

  /** A cancellation aborted whenever `signal` is, until {@link CallCancellation.release}. */
  static following(signal: AbortSignal): CallCancellation {
    const cancellation = new CallCancellation();
    if (signal.aborted) {
      cancellation.abort(signal.reason);
    } else {
      const follow = () => cancellation.abort(signal.reason);
      signal.addEventListener('abort', follow, { once: true });
      // A middleware may hand every call the same long-lived signal: do not pile up listeners.
      cancellation.#unfollow = () => signal.removeEventListener('abort', follow);
    }
    return cancellation;
  }

  /** The run that used this cancellation is over: stop following another signal, if any. */
  release(): void {
    this.#unfollow?.();
    this.#unfollow = undefined;
  }
}
