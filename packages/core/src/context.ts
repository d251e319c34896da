import type { Logger } from './logger.js';
import { silentLogger } from './logger.js';
import type { Language } from './tool.js';

/** Everything a tool receives besides its arguments. */
export interface ToolContext {
  /** Aborted when the call is cancelled or times out; long-running tools must honour it. */
  signal: AbortSignal;
  /** The id of the tool call (the model's `tool_call.id`). */
  callId: string;
  /** Directory the tool may write its outputs to. */
  workDir?: string;
  /** Files the user attached to the conversation (paths or URLs). */
  files: string[];
  logger: Logger;
  /** Per-agent state shared across calls of one agent run (e.g. a kernel session id). */
  state: Map<string, unknown>;
  /** Conversation language, for tools that answer in words. */
  language?: Language;
  /** Who is calling, e.g. `main` or a sub-agent's name; used to count duplicate calls separately. */
  namespace?: string;
  /**
   * `false` when the caller gathers the call into one response (e.g. `Toolkit.callToCompletion`)
   * and never sees partial chunks: a tool may then skip producing progress updates. Absent or
   * `true`: partial chunks may reach the user.
   */
  streaming?: boolean;
  /**
   * Call `listener` once when the call is cancelled (its timeout, the caller's abort, the toolkit
   * closing), with the reason — at once if it already is. Returns a function that removes the
   * listener. It tells the same thing as `signal`, without making an AbortSignal: on Node 20 making
   * one and listening to it costs several microseconds, as much as a whole local tool call, so a
   * tool that only hands cancellation on (to a remote request, say) can use this instead.
   * Optional: a context made elsewhere may not have it; {@link onToolAbort} falls back to `signal`.
   */
  onAbort?(listener: (reason: unknown) => void): () => void;
}

/**
 * Call `listener` once when the call of `context` is cancelled, with the reason (at once if it
 * already is): through `context.onAbort` where the context has it, else through `context.signal`.
 * @returns a function that removes the listener
 */
export function onToolAbort(
  context: Pick<ToolContext, 'signal' | 'onAbort'>,
  listener: (reason: unknown) => void,
): () => void {
  if (typeof context.onAbort === 'function') return context.onAbort(listener);
  const signal = context.signal;
  if (signal.aborted) {
    listener(signal.reason);
    return () => {};
  }
  const relay = () => listener(signal.reason);
  signal.addEventListener('abort', relay, { once: true });
  return () => signal.removeEventListener('abort', relay);
}

/** Build a complete {@link ToolContext} from the parts a caller has; everything else gets a default. */
export function createToolContext(partial: Partial<ToolContext> = {}): ToolContext {
  return {
    signal: partial.signal ?? new AbortController().signal,
    callId: partial.callId ?? '',
    files: partial.files ?? [],
    logger: partial.logger ?? silentLogger,
    state: partial.state ?? new Map(),
    ...(partial.workDir !== undefined ? { workDir: partial.workDir } : {}),
    ...(partial.language !== undefined ? { language: partial.language } : {}),
    ...(partial.namespace !== undefined ? { namespace: partial.namespace } : {}),
    ...(partial.streaming !== undefined ? { streaming: partial.streaming } : {}),
  };
}
