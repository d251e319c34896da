import type { ToolResponse } from '@quiver/core';
import type { ToolInvocation } from '@quiver/core-registry';
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import type { GovernanceMiddleware } from './governance-middleware.js';
import { createGovernanceMiddleware, perTool } from './governance-middleware.js';
import { annotate } from './governance-metadata.js';

/** Retry settings (globally or per tool). */
export interface RetryPolicy {
  /** Attempts in all, the first included. Default 3; 1 turns retries off. */
  maxAttempts?: number;
  /** Delay before the first retry, in milliseconds. Default 250. */
  baseDelayMs?: number;
  /** Cap of the backoff delay. Default 10 000. */
  maxDelayMs?: number;
  /** Growth factor per attempt. Default 2. */
  factor?: number;
  /**
   * A `retryAfterMs` hint longer than this is not waited for: the error is returned at once
   * (it carries the hint for the caller). Default 30 000.
   */
  maxRetryAfterMs?: number;
}

/** Options of {@link retry}. */
export interface RetryOptions extends RetryPolicy {
  /** Per-tool overrides. */
  tools?: Record<string, RetryPolicy>;
  /**
   * Which error responses to retry. Default: those whose `metadata.error.isRetryable` is true
   * (a tool throws `ToolExecutionError` with `isRetryable` for network errors, 429, 5xx).
   */
  isRetryable?: (response: ToolResponse) => boolean;
  /** Random source in [0, 1) for jitter. Default `Math.random`. */
  random?: () => number;
  clock?: Clock;
}

/** The retry middleware; see {@link retry}. */
export type RetryMiddleware = GovernanceMiddleware;

/** @internal Default retryability: the tool said so in its structured error. */
export function isTransientFailure(response: ToolResponse): boolean {
  return response.isError === true && response.metadata?.error?.isRetryable === true;
}

/**
 * Middleware that retries transient failures with exponential backoff and full jitter
 * (`delay = random × min(maxDelayMs, baseDelayMs × factor^n)`), waiting at least the error's
 * `retryAfterMs` (a `Retry-After` hint). Waits end early when the call is cancelled.
 * The number of extra attempts is recorded in `metadata.governance.retries`.
 *
 * @example
 * ```ts
 * toolkit.use(retry({ maxAttempts: 4, baseDelayMs: 500, tools: { payments: { maxAttempts: 1 } } }));
 * ```
 */
export function retry(options: RetryOptions = {}): RetryMiddleware {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const retryable = options.isRetryable ?? isTransientFailure;
  return createGovernanceMiddleware(
    'retry',
    async (invocation: ToolInvocation, next) => {
      const own = perTool<RetryPolicy | undefined>(invocation.name, options.tools, undefined);
      const maxAttempts = own?.maxAttempts ?? options.maxAttempts ?? 3;
      const base = own?.baseDelayMs ?? options.baseDelayMs ?? 250;
      const cap = own?.maxDelayMs ?? options.maxDelayMs ?? 10_000;
      const factor = own?.factor ?? options.factor ?? 2;
      const maxRetryAfter = own?.maxRetryAfterMs ?? options.maxRetryAfterMs ?? 30_000;
      let response = await next(invocation);
      let attempt = 1;
      while (attempt < maxAttempts && retryable(response)) {
        const hint = response.metadata?.error?.retryAfterMs;
        const retryAfter = typeof hint === 'number' && hint > 0 ? hint : 0;
        if (retryAfter > maxRetryAfter) break;
        const backoff = random() * Math.min(cap, base * factor ** (attempt - 1));
        try {
          await clock.sleep(Math.max(backoff, retryAfter), invocation.context.signal);
        } catch {
          break; // cancelled while waiting: return the last failure
        }
        if (invocation.context.signal.aborted) break;
        response = await next(invocation);
        attempt++;
      }
      return attempt > 1 ? annotate(response, { retries: attempt - 1 }) : response;
    },
    {},
  );
}
