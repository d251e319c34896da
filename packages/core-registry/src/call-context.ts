import type { Language, Logger, ToolContext } from '@quiver/core';
import type { CallCancellation } from './call-cancellation.js';

/**
 * @internal The context of one tool call, as the toolkit makes it.
 *
 * `signal` is made on first read (most tools never read it, and an AbortSignal costs microseconds
 * on Node 20), so it is an accessor: the object's own and enumerable, so that
 * `{ ...context, signal }` in a middleware copies it like any other field. It is defined once,
 * below, and shared by every context: an object literal with accessors makes new functions for
 * each call and cost 1.2 µs to create. `onAbort` lives on the prototype: a spread copy lacks it,
 * and `onToolAbort` then falls back to the copy's `signal`, which is right for a context whose
 * signal a middleware may have replaced.
 */
export class CallToolContext implements ToolContext {
  declare signal: AbortSignal;
  callId: string;
  files: string[];
  logger: Logger;
  declare state: Map<string, unknown>;
  language: Language;
  workDir?: string;
  namespace?: string;
  streaming?: boolean;
  readonly #cancellation: CallCancellation;
  #state: Map<string, unknown> | undefined;

  static readonly #signal: PropertyDescriptor = {
    get(this: CallToolContext): AbortSignal {
      return this.#cancellation.signal;
    },
    set(this: CallToolContext, signal: AbortSignal) {
      this.#cancellation.replaceSignal(this, signal);
    },
    enumerable: true,
    configurable: true,
  };

  static readonly #stateAccessor: PropertyDescriptor = {
    get(this: CallToolContext): Map<string, unknown> {
      return (this.#state ??= new Map());
    },
    set(this: CallToolContext, value: Map<string, unknown>) {
      this.#state = value;
    },
    enumerable: true,
    configurable: true,
  };

  constructor(
    cancellation: CallCancellation,
    callId: string,
    files: string[],
    logger: Logger,
    state: Map<string, unknown> | undefined,
    language: Language,
  ) {
    this.#cancellation = cancellation;
    // The same order of fields as before (signal first): what Object.keys shows.
    Object.defineProperty(this, 'signal', CallToolContext.#signal);
    this.callId = callId;
    this.files = files;
    this.logger = logger;
    this.#state = state;
    Object.defineProperty(this, 'state', CallToolContext.#stateAccessor);
    this.language = language;
  }

  onAbort(listener: (reason: unknown) => void): () => void {
    return this.#cancellation.listen(this, listener);
  }
}
