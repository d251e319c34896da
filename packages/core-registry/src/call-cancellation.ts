import type { ToolContext } from '@quiver/core';

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

  /** The controller, made now if it was not yet. */
  get controller(): AbortController {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller;
  }

  get aborted(): boolean {
    return this.#controller !== undefined ? this.#controller.signal.aborted : this.#aborted;
  }

  /** Abort (once; later calls change nothing). */
  abort(reason: unknown): void {
    if (this.#controller !== undefined) {
      this.#controller.abort(reason);
    } else if (!this.#aborted) {
      this.#aborted = true;
      this.#reason = reason;
    }
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
