import type { ToolArgumentError, ToolCall, ToolContext, ToolResponse } from '@quiver/core';
import type { RegisteredTool } from './toolkit-types.js';

/**
 * One tool call on its way through the middleware chain. A middleware may rewrite `name`,
 * `arguments` or `context` before calling `next`, and the tool that runs is looked up by the
 * `name` that reaches the end of the chain.
 */
export interface ToolInvocation {
  /** The call as the model made it (never changed). */
  readonly toolCall: ToolCall;
  /** The tool to run. */
  name: string;
  /**
   * The parsed arguments (leniently: JSON5, code fences, Python literals…), before validation.
   * `undefined` when they could not be parsed; `parseError` then says why.
   */
  arguments: Record<string, unknown> | undefined;
  parseError: ToolArgumentError | undefined;
  /** The registered tool `name` referred to when the call arrived, if any. */
  readonly tool: RegisteredTool | undefined;
  context: ToolContext;
}

/** Continue the chain: returns the stream of the inner layers. */
export type NextHandler = (invocation: ToolInvocation) => AsyncIterable<ToolResponse>;

/**
 * Middleware around every tool call, in onion order (the first registered is the outermost).
 * It may observe or rewrite the invocation, call `next` and transform or observe its chunks,
 * or short-circuit by returning its own response without calling `next`. An `async` middleware
 * may also resolve to `next(invocation)`'s stream. Anything it throws becomes an error response
 * for that call.
 *
 * @example
 * ```ts
 * toolkit.use(async function* logCalls(invocation, next) {
 *   const started = Date.now();
 *   yield* next(invocation);
 *   console.log(invocation.name, Date.now() - started, 'ms');
 * });
 * ```
 */
export type ToolMiddleware = (
  invocation: ToolInvocation,
  next: NextHandler,
) =>
  AsyncIterable<ToolResponse> | Promise<ToolResponse | AsyncIterable<ToolResponse>> | ToolResponse;
