import { onToolAbort, type ToolContext } from '@quiver/core';

type AbortListener = ((event: Event) => void) | { handleEvent(event: Event): void };

/**
 * @internal The cancellation of one forwarded request, in the shape the MCP SDK reads from
 * `RequestOptions.signal`.
 *
 * Why not the call's AbortSignal: on Node 20 listening to an AbortSignal costs about 2 µs in a hot
 * loop and 10–15 µs between calls (cold caches), and the SDK adds a listener to every request's
 * signal (and never removes it). Over stdio that alone was 8% of a whole round trip to a local
 * server. This object relays the toolkit's cancellation (`context.onAbort`, no AbortSignal made)
 * and offers what the SDK 1.x uses of a signal — `aborted`, `reason`, `throwIfAborted()`,
 * `addEventListener('abort')`, `removeEventListener` — plus `onabort` and `dispatchEvent`. Aborting
 * it makes the SDK send `notifications/cancelled` and reject the request, as with a real signal;
 * the bridge's tests check that against real servers.
 */
export class RequestSignal {
  aborted = false;
  reason: unknown = undefined;
  onabort: ((event: Event) => void) | null = null;
  #listeners: { listener: AbortListener; once: boolean }[] | undefined;
  #detach: (() => void) | undefined;

  /** A signal for a call run with `context`: aborted when the call is cancelled. */
  static forContext(context: ToolContext): RequestSignal {
    const signal = new RequestSignal();
    signal.#detach = onToolAbort(context, (reason) => signal.abort(reason));
    return signal;
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  addEventListener(
    type: string,
    listener: AbortListener | null,
    options?: boolean | { once?: boolean },
  ): void {
    if (type !== 'abort' || listener === null || this.aborted) return;
    const listeners = (this.#listeners ??= []);
    if (listeners.some((entry) => entry.listener === listener)) return;
    listeners.push({
      listener,
      once: typeof options === 'object' && options !== null && options.once === true,
    });
  }

  removeEventListener(type: string, listener: AbortListener | null): void {
    if (type !== 'abort' || this.#listeners === undefined) return;
    const index = this.#listeners.findIndex((entry) => entry.listener === listener);
    if (index !== -1) this.#listeners.splice(index, 1);
  }

  dispatchEvent(event: Event): boolean {
    if (event.type !== 'abort') return true;
    const entries = this.#listeners ?? [];
    this.#listeners = entries.filter((entry) => !entry.once);
    this.onabort?.call(this as unknown as AbortSignal, event);
    for (const { listener } of entries) {
      if (typeof listener === 'function') listener.call(this as unknown as AbortSignal, event);
      else listener.handleEvent(event);
    }
    return true;
  }

  /** Abort (once): listeners hear an `abort` event, as from a real signal. */
  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.detach();
    this.dispatchEvent(new Event('abort'));
    this.#listeners = undefined;
  }

  /** The request is over: stop following the call's cancellation. */
  detach(): void {
    const detach = this.#detach;
    this.#detach = undefined;
    detach?.();
  }

  /** This object where the SDK's types want an AbortSignal (it reads only the members above). */
  get asAbortSignal(): AbortSignal {
    return this as unknown as AbortSignal;
  }
}
