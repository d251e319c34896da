import type {
  AssistantMessage,
  ChatMessage,
  ChatModel,
  ContentPart,
  Language,
  LocalizedText,
  Logger,
  TokenUsage,
} from '@quiver/core';
import { errorMessage, localize, silentLogger } from '@quiver/core';
import type { AgentEvent, PendingApproval, RunStatus } from './agent-events.js';
import type { RunDriver, RunResult } from './agent-run.js';
import { AgentRun } from './agent-run.js';
import { detectLanguage } from './language.js';
import type { MessageInput, MessageOutput } from './message.js';
import { normaliseMessages } from './message.js';
import { mergeSystemMessage } from './system-message.js';
import type { RunState } from './run-state.js';

/** The system message an agent uses when none is configured. */
export const DEFAULT_SYSTEM_MESSAGE: LocalizedText = {
  en: 'You are a helpful assistant.',
  zh: '你是一个乐于助人的助手。',
};

/** Options every agent takes. */
export interface AgentOptions {
  /** The chat model (e.g. `new OpenAIChatModel()`). */
  model: ChatModel;
  /** Stamped on the agent's messages; also the tools' namespace. */
  name?: string;
  /** What the agent is for (shown to routers and other agents). */
  description?: LocalizedText;
  /** Put before the caller's own system message. Default {@link DEFAULT_SYSTEM_MESSAGE}; `''` for none. */
  systemMessage?: LocalizedText;
  /** Sampling defaults for every model call. */
  temperature?: number;
  maxTokens?: number;
  seed?: number;
  logger?: Logger;
}

/** Options of one run. */
export interface RunOptions {
  /** Language of prompts and notes; detected from the user's messages when left out. */
  language?: Language;
  /** Stops the model stream and running tools; the run ends with status `aborted`. */
  signal?: AbortSignal;
  /** Called with every UI event, in order (errors it throws are logged, not raised). */
  onEvent?: (event: AgentEvent) => void;
  /** Sampling for this run (wins over the agent's defaults). */
  temperature?: number;
  maxTokens?: number;
  seed?: number;
}

/**
 * The state of one run, shared by an agent's loop and the run's consumer. Agent subclasses use
 * it; callers never see it.
 */
export class RunSession {
  readonly runId: string;
  readonly language: Language;
  readonly options: RunOptions;
  /** Aborted by the caller's signal, or when the consumer stops iterating. */
  readonly signal: AbortSignal;
  readonly kind: 'plain' | 'instance';
  /** The conversation as the model sees it (system message merged in). */
  conversation: ChatMessage[];
  /** Response messages so far. */
  readonly response: ChatMessage[];
  /** The assistant message being streamed, if any. */
  draft: AssistantMessage | undefined;
  usage: TokenUsage;
  llmCalls: number;
  rollbacks: number;
  /** Files attached to user messages (paths or URLs), for tools and retrieval. */
  readonly files: string[];
  /** Per-run tool state (`ToolContext.state`). */
  readonly toolState = new Map<string, unknown>();
  /** Set when the run pauses for approval. */
  pause: { approvals: PendingApproval[]; state: RunState } | undefined;
  readonly #agentName: string | undefined;
  readonly #controller: AbortController;

  /** @internal */
  constructor(init: {
    runId: string;
    language: Language;
    options: RunOptions;
    kind: 'plain' | 'instance';
    conversation: ChatMessage[];
    response?: ChatMessage[];
    usage?: TokenUsage;
    llmCalls?: number;
    rollbacks?: number;
    agentName: string | undefined;
    controller: AbortController;
  }) {
    this.runId = init.runId;
    this.language = init.language;
    this.options = init.options;
    this.kind = init.kind;
    this.conversation = init.conversation;
    this.response = init.response ?? [];
    this.usage = init.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    this.llmCalls = init.llmCalls ?? 0;
    this.rollbacks = init.rollbacks ?? 0;
    this.#agentName = init.agentName;
    this.#controller = init.controller;
    this.signal = init.controller.signal;
    this.files = attachedFiles(init.conversation);
  }

  /** The whole history for the next model call: conversation, then the response so far. */
  history(): ChatMessage[] {
    return this.response.length === 0
      ? this.conversation
      : [...this.conversation, ...this.response];
  }

  /** Append a response message, stamping the agent's name on assistant messages. */
  append(message: ChatMessage): void {
    if (
      message.role === 'assistant' &&
      this.#agentName !== undefined &&
      message.name === undefined
    ) {
      message = { ...message, name: this.#agentName };
    }
    this.response.push(message);
  }

  /** Add a model call's usage. */
  addUsage(usage: TokenUsage | undefined): void {
    if (!usage) return;
    this.usage = {
      promptTokens: this.usage.promptTokens + usage.promptTokens,
      completionTokens: this.usage.completionTokens + usage.completionTokens,
      totalTokens: this.usage.totalTokens + usage.totalTokens,
    };
  }

  /** The response so far, the streaming draft last. */
  snapshot(): ChatMessage[] {
    return this.draft ? [...this.response, this.draft] : [...this.response];
  }

  /** @internal Stop everything the run started (the consumer went away). */
  abort(): void {
    if (!this.#controller.signal.aborted) this.#controller.abort();
  }
}

/**
 * The base of every agent: input handling shared by all of them. `run` deep-copies and
 * validates the messages, detects the language, merges the agent's system message into the
 * caller's, stamps the agent's name on its messages, and links the AbortSignal; subclasses
 * implement {@link Agent.execute}.
 */
export abstract class Agent {
  readonly model: ChatModel;
  readonly name: string | undefined;
  readonly description: LocalizedText | undefined;
  readonly systemMessage: LocalizedText;
  readonly logger: Logger;
  protected readonly defaults: Pick<AgentOptions, 'temperature' | 'maxTokens' | 'seed'>;

  constructor(options: AgentOptions) {
    this.model = options.model;
    this.name = options.name;
    this.description = options.description;
    this.systemMessage = options.systemMessage ?? DEFAULT_SYSTEM_MESSAGE;
    this.logger = options.logger ?? silentLogger;
    this.defaults = {
      temperature: options.temperature,
      maxTokens: options.maxTokens,
      seed: options.seed,
    };
  }

  /**
   * Run the agent on a conversation.
   *
   * @param messages - plain chat messages or `Message` instances (never modified)
   * @param options - language, AbortSignal, event callback, sampling
   * @returns a run: iterate it for the growing response, or call `events()` / `final()`
   * @throws InvalidMessagesError (synchronously) when a message is not a chat message
   */
  run<TInput extends MessageInput>(
    messages: readonly TInput[],
    options: RunOptions = {},
  ): AgentRun<MessageOutput<TInput>> {
    const { messages: copied, kind } = normaliseMessages(messages);
    const language = options.language ?? detectLanguage(copied);
    const controller = new AbortController();
    const session = new RunSession({
      runId: newRunId(),
      language,
      options,
      kind,
      conversation: mergeSystemMessage(copied, localize(this.systemMessage, language)),
      agentName: this.name,
      controller,
    });
    return new AgentRun<MessageOutput<TInput>>(this.drive(session, options.signal, controller));
  }

  /**
   * The agent's loop: yield events, append to `session.response`, return how the run ended.
   * Set `session.pause` before returning `needs-approval`.
   */
  protected abstract execute(session: RunSession): AsyncGenerator<AgentEvent, RunStatus, undefined>;

  /** @internal Wrap `execute` with the run's bookkeeping: events to `onEvent`, abort linking, the result. */
  protected drive(
    session: RunSession,
    signal: AbortSignal | undefined,
    controller: AbortController,
  ): RunDriver {
    const onEvent = session.options.onEvent;
    const logger = this.logger;
    const emit = (event: AgentEvent): AgentEvent => {
      if (onEvent) {
        try {
          onEvent(event);
        } catch (error) {
          logger.warn('an onEvent callback threw; the run goes on', { error: errorMessage(error) });
        }
      }
      return event;
    };
    const execute = (): AsyncGenerator<AgentEvent, RunStatus, undefined> => this.execute(session);
    async function* events(): AsyncGenerator<AgentEvent, RunResult<ChatMessage>, undefined> {
      const relay = () => controller.abort(signal?.reason);
      if (signal?.aborted) controller.abort(signal.reason);
      else signal?.addEventListener('abort', relay, { once: true });
      const inner = execute();
      let finished = false;
      try {
        yield emit({ type: 'run-start', runId: session.runId, language: session.language });
        let status: RunStatus;
        for (;;) {
          const next = await inner.next();
          if (next.done) {
            status = next.value;
            break;
          }
          yield emit(next.value);
        }
        finished = true;
        session.draft = undefined;
        yield emit({
          type: 'run-end',
          runId: session.runId,
          status,
          usage: session.usage,
          llmCalls: session.llmCalls,
        });
        return {
          status,
          messages: session.response.slice(),
          usage: session.usage,
          llmCalls: session.llmCalls,
          pendingApprovals: session.pause?.approvals ?? [],
          state: session.pause?.state,
        };
      } finally {
        signal?.removeEventListener('abort', relay);
        if (!finished) {
          // The consumer stopped early or the loop threw: stop the model stream and the tools.
          session.abort();
          await inner.return(undefined as never).catch(() => undefined);
        }
      }
    }
    return { events: events(), snapshot: () => session.snapshot(), kind: session.kind };
  }
}

let runCounter = 0;

/** @internal A run id unique within the process and unlikely to repeat across processes. */
export function newRunId(): string {
  runCounter = (runCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `run_${Date.now().toString(36)}${runCounter.toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

function attachedFiles(messages: readonly ChatMessage[]): string[] {
  const files: string[] = [];
  for (const message of messages) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    for (const part of message.content as ContentPart[]) {
      if (part.type !== 'file') continue;
      const location = part.file.path ?? part.file.url;
      if (location !== undefined && !files.includes(location)) files.push(location);
    }
  }
  return files;
}
