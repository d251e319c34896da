/** How a model client retries transient failures (429, 5xx, timeouts, dropped connections). */
export interface RetryPolicy {
  /** Retries after the first attempt. Default 3. */
  maxRetries?: number;
  /** Delay before the first retry, in milliseconds; doubles each time. Default 500. */
  initialDelayMs?: number;
  /** Upper bound of one delay (also caps a server's `Retry-After`). Default 8000. */
  maxDelayMs?: number;
}

/** @internal The filled-in policy. */
export type ResolvedRetryPolicy = Required<RetryPolicy>;

/** @internal */
export function resolveRetryPolicy(policy: RetryPolicy | undefined): ResolvedRetryPolicy {
  return {
    maxRetries: Math.max(0, policy?.maxRetries ?? 3),
    initialDelayMs: Math.max(0, policy?.initialDelayMs ?? 500),
    maxDelayMs: Math.max(0, policy?.maxDelayMs ?? 8000),
  };
}

/**
 * Delay before retry number `attempt` (0-based): the server's `Retry-After` when it gave one,
 * otherwise exponential backoff with "full jitter" (a random delay up to the exponential step, so
 * many clients hitting one rate limit do not retry in lock-step). Always capped at `maxDelayMs`.
 *
 * @param attempt - 0 for the first retry
 * @param policy - the retry policy
 * @param retryAfterMs - what the server asked for, if anything
 * @param random - a number in [0, 1); injectable for tests
 * @returns milliseconds to wait
 */
export function retryDelay(
  attempt: number,
  policy: ResolvedRetryPolicy,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) {
    return Math.min(retryAfterMs, policy.maxDelayMs);
  }
  const step = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** attempt);
  // Never below half the step: full jitter can pick ~0 ms, which hammers a struggling server.
  return Math.round(step / 2 + (random() * step) / 2);
}

/**
 * Parse `retry-after-ms` / `retry-after` (seconds or an HTTP date) into milliseconds.
 * @internal
 */
export function parseRetryAfter(
  headers: { get(name: string): string | null } | undefined,
  now = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds !== null && milliseconds.trim() !== '' && Number.isFinite(Number(milliseconds)))
    return Number(milliseconds);
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** @internal Wait `ms`, or reject with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** @internal The error to throw for an aborted signal. */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const error = new Error(typeof reason === 'string' ? reason : 'The operation was aborted.');
  error.name = 'AbortError';
  return error;
}
