import type { ToolResponse } from '@quiver/core';
import type { ArgumentRepair } from './argument-repair.js';

/** What each governance stage did to a call, kept in `response.metadata.governance`. */
export interface GovernanceAnnotations {
  /** Argument repairs applied before the tool ran. */
  repairs?: ArgumentRepair[];
  /** The arguments after repair (only when something was repaired). */
  repairedArguments?: Record<string, unknown>;
  /** This call repeated an earlier identical one (`count` is how many times it was made, this one included). */
  duplicate?: { count: number; action: 'allowed' | 'warned' | 'cached' | 'refused' };
  /** Result cache outcome; `coalesced` means the call waited for an identical call in flight. */
  cache?: 'hit' | 'miss' | 'coalesced';
  /** The reason a rollback was not signalled because `maxConsecutiveRollbacks` was reached. */
  rollbackSuppressed?: string;
  /** The result was cut to its size budget. */
  truncated?: { unit: 'chars' | 'tokens'; before: number; after: number };
  /** Extra attempts made after transient failures. */
  retries?: number;
  /** The circuit breaker refused the call (`open`) or let it through as a trial (`half-open`). */
  circuit?: 'open' | 'half-open';
  /** Time spent waiting for a concurrency slot, in milliseconds. */
  queuedMs?: number;
}

/** The metadata key governance annotations live under. */
export const GOVERNANCE_KEY = 'governance';

/** Read the governance annotations of a response (an empty object when there are none). */
export function governanceOf(response: ToolResponse): GovernanceAnnotations {
  const value = response.metadata?.[GOVERNANCE_KEY];
  return typeof value === 'object' && value !== null ? (value as GovernanceAnnotations) : {};
}

/** @internal A copy of `response` with `patch` merged into its governance annotations. */
export function annotate(response: ToolResponse, patch: GovernanceAnnotations): ToolResponse {
  return {
    ...response,
    metadata: {
      ...response.metadata,
      [GOVERNANCE_KEY]: { ...governanceOf(response), ...patch },
    },
  };
}

/**
 * @internal A stored response made fit to be served again for another call: annotations that
 * described the earlier call (repairs, retries, cache, duplicate…) are dropped; `truncated`
 * stays, since it describes the content itself.
 */
export function replayable(response: ToolResponse): ToolResponse {
  const governance = response.metadata?.[GOVERNANCE_KEY] as GovernanceAnnotations | undefined;
  if (governance === undefined) return response;
  const metadata = { ...response.metadata };
  if (governance.truncated !== undefined)
    metadata[GOVERNANCE_KEY] = { truncated: governance.truncated };
  else delete metadata[GOVERNANCE_KEY];
  return { ...response, metadata };
}
