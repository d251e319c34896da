import type { ToolResponse } from '@quiver/core';
import type { ToolInvocation, ToolMiddleware } from '@quiver/core-registry';
import { mergeResponses } from '@quiver/core-registry';

/** The inner layers of a governance stage, as one awaited response. */
export type CallNext = (invocation: ToolInvocation) => Promise<ToolResponse>;

/**
 * A Toolkit middleware that works on whole responses. Use it with `toolkit.use(middleware)`;
 * `governed()` composes several through their `handle` methods into one middleware, which is
 * cheaper than one Toolkit layer each.
 *
 * Governance stages see the complete result (a stream is gathered into one response first):
 * caching, retrying, judging and truncating all need the whole result.
 */
export interface GovernanceMiddleware extends ToolMiddleware {
  /** The stage's name, used in logs and error messages. */
  readonly stageName: string;
  /** Handle one call with `next` running the inner layers. Never throws for a tool's failure. */
  handle(invocation: ToolInvocation, next: CallNext): Promise<ToolResponse>;
}

/** @internal Gather a stream of chunks into one response (one chunk passes through as is). */
export async function collect(stream: AsyncIterable<ToolResponse>): Promise<ToolResponse> {
  let first: ToolResponse | undefined;
  let rest: ToolResponse[] | undefined;
  for await (const chunk of stream) {
    if (first === undefined) first = chunk;
    else (rest ??= [first]).push(chunk);
  }
  if (rest !== undefined) return mergeResponses(rest);
  return first ?? { content: [], isLast: true };
}

/**
 * @internal Build a GovernanceMiddleware from a stage's `handle` and extra members (stats,
 * reset…). The middleware function is named after the stage, so the Toolkit's error message
 * for a failing middleware names it.
 */
export function createGovernanceMiddleware<TMiddleware extends GovernanceMiddleware>(
  stageName: string,
  handle: (invocation: ToolInvocation, next: CallNext) => Promise<ToolResponse>,
  extra: Omit<TMiddleware, keyof GovernanceMiddleware>,
): TMiddleware {
  const holder = {
    [stageName]: (
      invocation: ToolInvocation,
      next: (invocation: ToolInvocation) => AsyncIterable<ToolResponse>,
    ) => handle(invocation, (inner) => collect(next(inner))),
  };
  const middleware = holder[stageName]!;
  return Object.assign(middleware, extra, { stageName, handle }) as unknown as TMiddleware;
}

/** @internal The namespace of a call, for per-namespace counters. */
export function namespaceOf(invocation: ToolInvocation): string {
  return invocation.context.namespace ?? 'default';
}

/** @internal Per-tool setting lookup: a tool's own value, else the default. */
export function perTool<T>(
  name: string,
  perToolValues: Record<string, T> | undefined,
  fallback: T,
): T {
  if (perToolValues !== undefined && Object.prototype.hasOwnProperty.call(perToolValues, name)) {
    return perToolValues[name]!;
  }
  return fallback;
}
