import type { ChatMessage, TokenUsage } from '@quiver/core';
import type { AgentEvent, PendingApproval, RunStatus } from './agent-events.js';
import { toOutputMessages } from './message.js';
import type { RunState } from './run-state.js';

/** What a finished (or paused) run produced. */
export interface RunResult<TMessage = ChatMessage> {
  status: RunStatus;
  /** The response messages (assistant and tool messages), in the kind the run was given. */
  messages: TMessage[];
  /** Tokens used by every model call of the run (resumed runs include the earlier part). */
  usage: TokenUsage;
  /** Model calls made. */
  llmCalls: number;
  /** Tool calls waiting for a decision (status `needs-approval`). */
  pendingApprovals: PendingApproval[];
  /** Where to resume from (status `needs-approval`). */
  state: RunState | undefined;
}

/** @internal What a run's driver produces: events, a snapshot of the response on demand, the result. */
export interface RunDriver {
  events: AsyncGenerator<AgentEvent, RunResult<ChatMessage>, undefined>;
  snapshot(): ChatMessage[];
  kind: 'plain' | 'instance';
}

/** Events after which the response list has changed. */
const CHANGES = new Set<AgentEvent['type']>([
  'model-delta',
  'model-end',
  'tool-end',
  'turn-dropped',
  'run-end',
]);

/**
 * A running agent. Iterate it for the growing list of response messages (Qwen-Agent style: each
 * item is the whole response so far, the last message growing as the model streams), or call
 * {@link AgentRun.events} for UI events, or {@link AgentRun.final} for the result. Pick one: a
 * run can be consumed once.
 *
 * @example
 * ```ts
 * for await (const response of agent.run([{ role: 'user', content: 'Hi' }])) render(response);
 * ```
 */
export class AgentRun<TMessage = ChatMessage> implements AsyncIterable<TMessage[]> {
  readonly #driver: RunDriver;
  #consumed = false;
  #result: RunResult<TMessage> | undefined;

  /** @internal */
  constructor(driver: RunDriver) {
    this.#driver = driver;
  }

  /** The result once the run has ended (`undefined` before). */
  get result(): RunResult<TMessage> | undefined {
    return this.#result;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TMessage[]> {
    const events = this.#take();
    let lastSignature = '';
    let done = false;
    try {
      for (;;) {
        const next = await events.next();
        if (next.done) {
          done = true;
          this.#finish(next.value);
          return;
        }
        if (!CHANGES.has(next.value.type)) continue;
        const snapshot = this.#driver.snapshot();
        // Tool-call fragments change nothing the user sees: do not repeat an identical list.
        const signature = signatureOf(snapshot);
        if (signature === lastSignature) continue;
        lastSignature = signature;
        yield toOutputMessages(snapshot, this.#driver.kind) as TMessage[];
      }
    } finally {
      // The consumer stopped early (break, throw): stop the model and the tools.
      if (!done) await events.return(undefined as never);
    }
  }

  /** The UI events of the run, in order (the last is `run-end`). */
  async *events(): AsyncGenerator<AgentEvent, RunResult<TMessage>, undefined> {
    const events = this.#take();
    let done = false;
    try {
      for (;;) {
        const next = await events.next();
        if (next.done) {
          done = true;
          return this.#finish(next.value);
        }
        yield next.value;
      }
    } finally {
      if (!done) await events.return(undefined as never);
    }
  }

  /** Run to the end and return the result. */
  async final(): Promise<RunResult<TMessage>> {
    const events = this.#take();
    for (;;) {
      const next = await events.next();
      if (next.done) return this.#finish(next.value);
    }
  }

  #take(): AsyncGenerator<AgentEvent, RunResult<ChatMessage>, undefined> {
    if (this.#consumed) {
      throw new TypeError(
        'This agent run is already being consumed; iterate it, call events() or final() once.',
      );
    }
    this.#consumed = true;
    return this.#driver.events;
  }

  #finish(result: RunResult<ChatMessage>): RunResult<TMessage> {
    this.#result = {
      ...result,
      messages: toOutputMessages(result.messages, this.#driver.kind) as TMessage[],
    };
    return this.#result;
  }
}

function signatureOf(messages: readonly ChatMessage[]): string {
  const last = messages[messages.length - 1];
  if (!last) return '0';
  const content =
    typeof last.content === 'string'
      ? last.content.length
      : last.content === null
        ? 0
        : last.content.length;
  const reasoning = last.role === 'assistant' ? (last.reasoning_content?.length ?? 0) : 0;
  const calls = last.role === 'assistant' ? (last.tool_calls?.length ?? 0) : 0;
  return `${messages.length}:${last.role}:${content}:${reasoning}:${calls}`;
}
