import { ToolExecutionError } from '@quiver/core';

/** Error codes of this package (in `metadata.error.code` of the responses it makes). */
export const GovernanceErrorCodes = {
  duplicateRefused: 'duplicate_call_refused',
  circuitOpen: 'circuit_open',
  concurrencyQueueFull: 'concurrency_queue_full',
} as const;

/** A call was refused because the same call was already made too many times. */
export class DuplicateCallRefusedError extends ToolExecutionError {
  /** How many identical calls were made, this one included. */
  readonly count: number;

  constructor(toolName: string, count: number, earlier: string | undefined) {
    super(
      toolName,
      `You already called "${toolName}" with these same arguments ${count - 1} times; this repeat was not run.` +
        (earlier ? ` The earlier result began: ${earlier}` : '') +
        ' Use that result, change the arguments, or try another approach.',
      { code: GovernanceErrorCodes.duplicateRefused },
    );
    this.count = count;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), count: this.count };
  }
}

/** The tool failed repeatedly and its circuit breaker is open: calls fail fast until it half-opens. */
export class CircuitOpenError extends ToolExecutionError {
  constructor(toolName: string, failures: number, retryAfterMs: number) {
    super(
      toolName,
      `Tool "${toolName}" failed ${failures} times in a row, so calls to it are paused for ${Math.ceil(retryAfterMs / 1000)} s. ` +
        'Use another tool or continue without it for now.',
      { code: GovernanceErrorCodes.circuitOpen, retryAfterMs },
    );
  }
}

/** Too many calls of one tool were already waiting for a concurrency slot. */
export class ConcurrencyQueueFullError extends ToolExecutionError {
  constructor(toolName: string, limit: number, queued: number) {
    super(
      toolName,
      `Tool "${toolName}" already runs ${limit} calls with ${queued} more waiting; this call was not queued. Wait for results before calling it again.`,
      { code: GovernanceErrorCodes.concurrencyQueueFull, isRetryable: true },
    );
  }
}
