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
