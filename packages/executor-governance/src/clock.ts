import { ToolAbortedError } from '@quiver/core';

/**
 * Time as the governance middlewares see it. Inject a fake one in tests to drive backoff,
 * cooldowns and TTLs without waiting.
 */
export interface Clock {
  /** Milliseconds since an arbitrary origin; only differences are used. */
  now(): number;
  /**
   * Resolve after `ms` milliseconds; reject with the signal's reason (or a ToolAbortedError)
   * as soon as `signal` aborts.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock: `performance.now()` and `setTimeout`. */
export const systemClock: Clock = Object.freeze({
  now: () => performance.now(),
  sleep: (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortReason(signal!));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
});

/** @internal The reason a signal was aborted, as something throwable. */
export function abortReason(signal: AbortSignal, toolName = ''): unknown {
  return signal.reason ?? new ToolAbortedError(toolName);
}
