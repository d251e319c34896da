import type { ToolResponse } from '@quiver/core';
import { errorResponse } from '@quiver/core';
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import { CircuitOpenError } from './errors.js';
import type { GovernanceMiddleware } from './governance-middleware.js';
import { createGovernanceMiddleware, perTool } from './governance-middleware.js';
import { annotate } from './governance-metadata.js';

/** Circuit breaker settings (globally or per tool). */
export interface CircuitBreakerPolicy {
  /** Consecutive failures that open the circuit. Default 5. */
  failureThreshold?: number;
  /** How long the circuit stays open before one trial call is let through. Default 30 000 ms. */
  cooldownMs?: number;
}

/** Options of {@link circuitBreaker}. */
export interface CircuitBreakerOptions extends CircuitBreakerPolicy {
  tools?: Record<string, CircuitBreakerPolicy>;
  /**
   * Which responses count as failures of the tool. Default: error responses except the
   * caller's mistakes (unknown tool, invalid arguments), cancellations, and this package's
   * own refusals.
   */
  isFailure?: (response: ToolResponse) => boolean;
  clock?: Clock;
}

/** State of one tool's circuit. */
export type CircuitState = 'closed' | 'open' | 'half-open';

/** The circuit breaker middleware; see {@link circuitBreaker}. */
export interface CircuitBreakerMiddleware extends GovernanceMiddleware {
  /** The state of a tool's circuit. */
  state(toolName: string): CircuitState;
  /** Close a tool's circuit (or every circuit) and forget its failures. */
  reset(toolName?: string): void;
}

interface Circuit {
  failures: number;
  openedAt: number | undefined;
  trial: boolean;
}

const NOT_THE_TOOLS_FAULT = new Set([
  'tool_not_found',
  'tool_argument_invalid',
  'tool_aborted',
  'circuit_open',
  'duplicate_call_refused',
  'concurrency_queue_full',
]);

/** @internal Default failure test of the circuit breaker. */
export function isToolFailure(response: ToolResponse): boolean {
  if (!response.isError) return false;
  const code = response.metadata?.error?.code;
  return typeof code !== 'string' || !NOT_THE_TOOLS_FAULT.has(code);
}

/**
 * Middleware with one circuit breaker per tool: after `failureThreshold` failures in a row the
 * circuit opens and calls fail fast with a {@link CircuitOpenError} (code `circuit_open`) for
 * `cooldownMs`; then it half-opens and lets one trial call through — success closes it, failure
 * opens it again. Calls arriving while the trial runs fail fast.
 *
 * @example
 * ```ts
 * const breaker = circuitBreaker({ failureThreshold: 3, cooldownMs: 60_000 });
 * toolkit.use(breaker);
 * breaker.state('web_search'); // 'closed' | 'open' | 'half-open'
 * ```
 */
export function circuitBreaker(options: CircuitBreakerOptions = {}): CircuitBreakerMiddleware {
  const clock = options.clock ?? systemClock;
  const isFailure = options.isFailure ?? isToolFailure;
  const circuits = new Map<string, Circuit>();
  const settings = (name: string) => {
    const own = perTool<CircuitBreakerPolicy | undefined>(name, options.tools, undefined);
    return {
      threshold: own?.failureThreshold ?? options.failureThreshold ?? 5,
      cooldown: own?.cooldownMs ?? options.cooldownMs ?? 30_000,
    };
  };
  const stateOf = (name: string): CircuitState => {
    const circuit = circuits.get(name);
    if (circuit?.openedAt === undefined) return 'closed';
    return clock.now() - circuit.openedAt >= settings(name).cooldown ? 'half-open' : 'open';
  };

  return createGovernanceMiddleware(
    'circuitBreaker',
    async (invocation, next) => {
      const name = invocation.name;
      if (invocation.tool === undefined) return next(invocation); // unknown tools have no circuit
      let circuit = circuits.get(name);
      let trial = false;
      if (circuit?.openedAt !== undefined) {
        const { cooldown } = settings(name);
        const elapsed = clock.now() - circuit.openedAt;
        if (elapsed < cooldown || circuit.trial) {
          const wait = Math.max(0, cooldown - elapsed);
          return annotate(
            errorResponse(new CircuitOpenError(name, circuit.failures, wait || cooldown)),
            { circuit: 'open' },
          );
        }
        circuit.trial = trial = true;
      }
      let response: ToolResponse;
      try {
        response = await next(invocation);
      } finally {
        if (trial) circuit!.trial = false;
      }
      circuit = circuits.get(name);
      if (isFailure(response)) {
        if (circuit === undefined)
          circuits.set(name, (circuit = { failures: 0, openedAt: undefined, trial: false }));
        circuit.failures++;
        if (trial || circuit.failures >= settings(name).threshold) circuit.openedAt = clock.now();
      } else if (circuit !== undefined && !response.isError) {
        circuits.delete(name);
      }
      return trial ? annotate(response, { circuit: 'half-open' }) : response;
    },
    {
      state: stateOf,
      reset(toolName?: string): void {
        if (toolName === undefined) circuits.clear();
        else circuits.delete(toolName);
      },
    },
  );
}
