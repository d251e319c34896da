import { ToolTimeoutError, errorResponse } from '@quiver/core';
import type { ToolResponse } from '@quiver/core';
import type { GovernanceMiddleware } from './governance-middleware.js';
import { createGovernanceMiddleware, perTool } from './governance-middleware.js';

/** Options of {@link callTimeout}. */
export interface CallTimeoutOptions {
  /** Time limit of one attempt, in milliseconds. Default: none (the Toolkit's own limit applies). */
  timeoutMs?: number;
  /** Per-tool limits. */
  tools?: Record<string, number>;
}

/** The timeout middleware; see {@link callTimeout}. */
export type CallTimeoutMiddleware = GovernanceMiddleware;

/**
 * Middleware that gives each attempt of a call its own time limit. The tool sees a signal that
 * aborts at the limit (with a `ToolTimeoutError` reason) or when the call is cancelled, and the
 * call answers with a timeout error at the limit even if the tool ignores its signal. Placed
 * inside `retry`, a timed-out attempt does not spoil the signal of the next one.
 *
 * @example
 * ```ts
 * toolkit.use(callTimeout({ timeoutMs: 20_000, tools: { web_fetch: 45_000 } }));
 * ```
 */
export function callTimeout(options: CallTimeoutOptions = {}): CallTimeoutMiddleware {
  return createGovernanceMiddleware(
    'callTimeout',
    async (invocation, next) => {
      const limit = perTool<number | undefined>(invocation.name, options.tools, options.timeoutMs);
      if (limit === undefined || !(limit > 0)) return next(invocation);
      const parent = invocation.context.signal;
      const controller = new AbortController();
      const relay = () => controller.abort(parent.reason);
      if (parent.aborted) controller.abort(parent.reason);
      else parent.addEventListener('abort', relay, { once: true });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<ToolResponse>((resolve) => {
        timer = setTimeout(() => {
          const error = new ToolTimeoutError(invocation.name, limit);
          controller.abort(error);
          resolve(errorResponse(error));
        }, limit);
      });
      try {
        return await Promise.race([
          next({ ...invocation, context: { ...invocation.context, signal: controller.signal } }),
          timedOut,
        ]);
      } finally {
        clearTimeout(timer);
        parent.removeEventListener('abort', relay);
      }
    },
    {},
  );
}
