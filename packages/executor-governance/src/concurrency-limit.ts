import { ToolAbortedError, errorResponse } from '@quiver/core';
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import { ConcurrencyQueueFullError } from './errors.js';
import type { GovernanceMiddleware } from './governance-middleware.js';
import { createGovernanceMiddleware, perTool } from './governance-middleware.js';
import { annotate } from './governance-metadata.js';

/** Options of {@link concurrencyLimit}. */
export interface ConcurrencyLimitOptions {
  /** Calls of one tool running at once. Default: no limit. */
  maxConcurrent?: number;
  /** Per-tool limits. */
  tools?: Record<string, number>;
  /** Calls of one tool allowed to wait for a slot; beyond it a call fails at once. Default 100. */
  maxQueue?: number;
  clock?: Clock;
}

/** The concurrency limit middleware; see {@link concurrencyLimit}. */
export interface ConcurrencyLimitMiddleware extends GovernanceMiddleware {
  /** Calls of a tool running now and waiting now. */
  load(toolName: string): { running: number; queued: number };
}

interface Lane {
  running: number;
  waiting: (() => void)[];
}

/**
 * Middleware that limits how many calls of each tool run at once; the others wait in order
 * (a cancelled call leaves the queue). Time spent waiting is recorded in
 * `metadata.governance.queuedMs`.
 *
 * @example
 * ```ts
 * toolkit.use(concurrencyLimit({ tools: { web_fetch: 4, code_interpreter: 1 } }));
 * ```
 */
export function concurrencyLimit(
  options: ConcurrencyLimitOptions = {},
): ConcurrencyLimitMiddleware {
  const clock = options.clock ?? systemClock;
  const maxQueue = options.maxQueue ?? 100;
  const lanes = new Map<string, Lane>();
  return createGovernanceMiddleware(
    'concurrencyLimit',
    async (invocation, next) => {
      const name = invocation.name;
      const limit = perTool(name, options.tools, options.maxConcurrent ?? Number.POSITIVE_INFINITY);
      if (limit === Number.POSITIVE_INFINITY) return next(invocation);
      let lane = lanes.get(name);
      if (lane === undefined) lanes.set(name, (lane = { running: 0, waiting: [] }));
      let queuedMs: number | undefined;
      if (lane.running >= limit) {
        if (lane.waiting.length >= maxQueue)
          return errorResponse(new ConcurrencyQueueFullError(name, limit, lane.waiting.length));
        const started = clock.now();
        const signal = invocation.context.signal;
        const admitted = await new Promise<boolean>((resolve) => {
          const wake = () => {
            signal.removeEventListener('abort', onAbort);
            resolve(true);
          };
          const onAbort = () => {
            const index = lane!.waiting.indexOf(wake);
            if (index >= 0) lane!.waiting.splice(index, 1);
            resolve(false);
          };
          lane!.waiting.push(wake);
          signal.addEventListener('abort', onAbort, { once: true });
        });
        if (!admitted) return errorResponse(new ToolAbortedError(name, { cause: signal.reason }));
        queuedMs = clock.now() - started;
      } else {
        lane.running++;
      }
      try {
        const response = await next(invocation);
        return queuedMs === undefined ? response : annotate(response, { queuedMs });
      } finally {
        // Hand the slot straight to the next waiter (running stays the same), or free it.
        const wake = lane.waiting.shift();
        if (wake !== undefined) wake();
        else {
          lane.running--;
          if (lane.running === 0) lanes.delete(name);
        }
      }
    },
    {
      load(toolName: string) {
        const lane = lanes.get(toolName);
        return { running: lane?.running ?? 0, queued: lane?.waiting.length ?? 0 };
      },
    },
  );
}
