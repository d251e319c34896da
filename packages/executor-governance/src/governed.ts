import type { ToolResponse } from '@quiver/core';
import { ToolExecutionError, errorMessage, errorResponse } from '@quiver/core';
import type { NextHandler, ToolInvocation, Toolkit, ToolMiddleware } from '@quiver/core-registry';
import type { ArgumentRepairMiddleware, ArgumentRepairOptions } from './argument-repair.js';
import { argumentRepair } from './argument-repair.js';
import type { CallLogMiddleware, CallLogOptions, CallRecord, MemorySink } from './call-log.js';
import { callLog, memorySink } from './call-log.js';
import type { CallTimeoutMiddleware, CallTimeoutOptions } from './call-timeout.js';
import { callTimeout } from './call-timeout.js';
import type { CircuitBreakerMiddleware, CircuitBreakerOptions } from './circuit-breaker.js';
import { circuitBreaker } from './circuit-breaker.js';
import type { Clock } from './clock.js';
import type { ConcurrencyLimitMiddleware, ConcurrencyLimitOptions } from './concurrency-limit.js';
import { concurrencyLimit } from './concurrency-limit.js';
import type {
  DuplicateDetectionMiddleware,
  DuplicateDetectionOptions,
} from './duplicate-detection.js';
import { duplicateDetection } from './duplicate-detection.js';
import type { CallNext, GovernanceMiddleware } from './governance-middleware.js';
import { collect } from './governance-middleware.js';
import type { ResultCacheMiddleware, ResultCacheOptions } from './result-cache.js';
import { resultCache } from './result-cache.js';
import type { ResultQualityMiddleware, ResultQualityOptions } from './quality-rules.js';
import { resultQuality } from './quality-rules.js';
import type { ResultSizeMiddleware, ResultSizeOptions } from './result-size.js';
import { resultSizeLimit } from './result-size.js';
import type { RetryMiddleware, RetryOptions } from './retry.js';
import { retry } from './retry.js';

/**
 * What `governed` installs. Each entry takes the options of its middleware, or `false` to
 * leave that stage out. The defaults listed apply to every option an entry leaves undefined.
 */
export interface GovernancePolicy {
  /** Call log; default: one in-memory sink (see `Governance.records`). */
  log?: CallLogOptions | false;
  /** Argument repair; default: schema-driven, no aliases. */
  repair?: ArgumentRepairOptions | false;
  /** Duplicate detection; default `{ action: 'warn', refuseAfter: 3 }`. */
  duplicates?: DuplicateDetectionOptions | false;
  /** Result cache; default: tools flagged `deterministic`, 5 min TTL, 32 MiB. */
  cache?: ResultCacheOptions | false;
  /** Result size; default `{ maxChars: 20_000 }`. */
  size?: ResultSizeOptions | false;
  /** Result quality rules; default: the built-in rules, `maxConsecutiveRollbacks: 3`. */
  quality?: ResultQualityOptions | false;
  /** Retries of transient failures; default 3 attempts, 250 ms base delay. */
  retry?: RetryOptions | false;
  /** Circuit breaker per tool; default 5 failures, 30 s cooldown. */
  circuitBreaker?: CircuitBreakerOptions | false;
  /** Concurrency limits; default none. */
  concurrency?: ConcurrencyLimitOptions | false;
  /** Per-attempt time limits; default none (the Toolkit's limits apply). */
  timeout?: CallTimeoutOptions | false;
  /** Clock shared by every stage that has none of its own (for tests). */
  clock?: Clock;
}

/** The stages `governed` installed, to read statistics and state from. */
export interface GovernanceStages {
  log?: CallLogMiddleware;
  repair?: ArgumentRepairMiddleware;
  duplicates?: DuplicateDetectionMiddleware;
  cache?: ResultCacheMiddleware;
  size?: ResultSizeMiddleware;
  quality?: ResultQualityMiddleware;
  retry?: RetryMiddleware;
  circuitBreaker?: CircuitBreakerMiddleware;
  concurrency?: ConcurrencyLimitMiddleware;
  timeout?: CallTimeoutMiddleware;
}

/** What `governed` returns. */
export interface Governance {
  readonly toolkit: Toolkit;
  /** The one middleware `governed` added to the toolkit. */
  readonly middleware: ToolMiddleware;
  readonly stages: GovernanceStages;
  /** Records of the default in-memory sink (empty when the policy names its own sinks). */
  readonly records: readonly CallRecord[];
  /** Forget duplicate history and rollback streaks (of one namespace, or all): a new conversation. */
  reset(namespace?: string): void;
  /** Close the call log's sinks (flushes a JSONL file). */
  close(): Promise<void>;
}

/** The order `governed` nests its stages in, outermost first. */
export const GOVERNANCE_ORDER = [
  'log',
  'repair',
  'duplicates',
  'cache',
  'size',
  'quality',
  'retry',
  'circuitBreaker',
  'concurrency',
  'timeout',
] as const satisfies readonly (keyof GovernanceStages)[];

/**
 * Install a governance stack on a toolkit as one middleware, in this order (outermost first):
 *
 * 1. `log` — one record per call, so it sees everything below, including refusals;
 * 2. `repair` — every later stage sees repaired arguments (so duplicate and cache keys match);
 * 3. `duplicates` — counts what the model asked for, including calls the cache answers;
 * 4. `cache` — a hit skips everything below; it stores results already cut to size;
 * 5. `size` — cuts results after they were judged on their full text;
 * 6. `quality` — judges the final result of the retries, marking `rollback`;
 * 7. `retry` — each attempt passes the breaker, waits for a slot and has its own time limit;
 * 8. `circuitBreaker`, 9. `concurrency`, 10. `timeout`.
 *
 * @param toolkit - the toolkit to govern (tools registered later are governed too)
 * @param policy - stage options; `false` leaves a stage out
 * @returns the installed stages and the call records
 * @example
 * ```ts
 * const governance = governed(toolkit, { duplicates: { action: 'cache' }, size: { maxTokens: 6_000 } });
 * const response = await toolkit.callToCompletion(call);
 * governance.records.at(-1); // { tool, outcome, durationMs, retries, … }
 * ```
 */
export function governed(toolkit: Toolkit, policy: GovernancePolicy = {}): Governance {
  const clock = policy.clock;
  const withClock = <T extends object>(options: T | undefined): T =>
    (clock !== undefined && (options as { clock?: Clock } | undefined)?.clock === undefined
      ? { ...options, clock }
      : { ...options }) as T;
  let memory: MemorySink | undefined;
  const stages: GovernanceStages = {};
  if (policy.log !== false) {
    const options = withClock(policy.log);
    if (options.sinks === undefined) options.sinks = [(memory = memorySink())];
    stages.log = callLog(options);
  }
  if (policy.repair !== false) stages.repair = argumentRepair(policy.repair ?? {});
  if (policy.duplicates !== false)
    stages.duplicates = duplicateDetection({
      action: 'warn',
      refuseAfter: 3,
      ...policy.duplicates,
    });
  if (policy.cache !== false)
    stages.cache = resultCache(withClock({ deterministicTools: true, ...policy.cache }));
  if (policy.size !== false)
    stages.size = resultSizeLimit(
      policy.size?.maxChars !== undefined || policy.size?.maxTokens !== undefined
        ? policy.size
        : { ...policy.size, maxChars: 20_000 },
    );
  if (policy.quality !== false) stages.quality = resultQuality(policy.quality ?? {});
  if (policy.retry !== false) stages.retry = retry(withClock(policy.retry));
  if (policy.circuitBreaker !== false)
    stages.circuitBreaker = circuitBreaker(withClock(policy.circuitBreaker));
  if (policy.concurrency !== false)
    stages.concurrency = concurrencyLimit(withClock(policy.concurrency));
  if (policy.timeout !== false && policy.timeout !== undefined)
    stages.timeout = callTimeout(policy.timeout);

  const chain: GovernanceMiddleware[] = GOVERNANCE_ORDER.map((name) => stages[name]).filter(
    (stage): stage is NonNullable<typeof stage> => stage !== undefined,
  );
  const middleware = composeMiddleware(chain);
  toolkit.use(middleware);
  return {
    toolkit,
    middleware,
    stages,
    records: memory?.records ?? [],
    reset(namespace?: string) {
      stages.duplicates?.reset(namespace);
      stages.quality?.reset(namespace);
    },
    async close() {
      await stages.log?.close();
    },
  };
}

/**
 * Compose governance middlewares into one Toolkit middleware (the first is the outermost).
 * One Toolkit layer instead of one per stage: stages pass whole responses by promise, which
 * costs far less than a streaming layer each.
 *
 * @param stages - the stages, outermost first
 * @returns a middleware for `toolkit.use`
 */
export function composeMiddleware(stages: readonly GovernanceMiddleware[]): ToolMiddleware {
  const count = stages.length;
  return function governed(invocation: ToolInvocation, next: NextHandler): Promise<ToolResponse> {
    const terminal: CallNext = (inner) => collect(next(inner));
    const step = (index: number, current: ToolInvocation): Promise<ToolResponse> => {
      if (index === count) return terminal(current);
      const stage = stages[index]!;
      // A stage that fails (a bug, or a user callback such as `isRetryable` throwing) becomes an
      // error response at that stage, so the outer stages (the call log) still see the call.
      return stage
        .handle(current, (inner) => step(index + 1, inner))
        .catch((error: unknown) =>
          errorResponse(
            new ToolExecutionError(
              current.name,
              `Governance stage "${stage.stageName}" failed while handling "${current.name}": ${errorMessage(error)}`,
              { cause: error },
            ),
          ),
        );
    };
    return step(0, invocation);
  };
}
