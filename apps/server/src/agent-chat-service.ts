import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AgentEvent, AssistantOptions, RunResult } from '@quiver/agent-loop';
import { Assistant, RunState } from '@quiver/agent-loop';
import type { ChatMessage, ChatModel, Retriever } from '@quiver/core';
import { ConfigurationError } from '@quiver/core';
import type { Toolkit } from '@quiver/core-registry';
import type { ChatEvent, ChatService } from './services.js';

/** Options of {@link AgentChatService}. */
export interface AgentChatServiceOptions {
  /** The model; absent means chat is unavailable and `unavailableReason` says why. */
  model?: ChatModel;
  /** Why there is no model (shown in the UI banner). Required when `model` is absent. */
  unavailableReason?: string;
  toolkit: Toolkit;
  /** Knowledge from uploaded files (e.g. `@quiver/rag-retrieval`'s `DocumentRetriever`). */
  retriever?: Retriever;
  /**
   * Whether a run retrieves even with no file attached (e.g. while browsing-history pages are
   * selected). Asked at the start of every run. Default: only with files.
   */
  alwaysRetrieve?: () => boolean;
  /** Agent settings passed to every `Assistant` (name, system message, limits…). */
  agent?: Omit<AssistantOptions, 'model' | 'toolkit' | 'tools' | 'retriever' | 'files'>;
  /**
   * Key that signs the run state sent to the browser for approvals, so a client cannot forge
   * tool calls or tool-group changes into a resumed run. Default: random per process (a state
   * does not survive a server restart).
   */
  stateKey?: Uint8Array;
}

/** The run state as the browser holds it: the agent's state and its signature. */
interface SignedState {
  data: unknown;
  signature: string;
}

/**
 * The chat behind `/v1/chat`: an agent-loop `Assistant` (function calling, plus retrieval over the
 * files the user uploaded) on the configured model, with its UI events mapped to the web UI's
 * server-sent events: `text-delta`, `tool-start` / `tool-chunk` / `tool-end`, `retrieval`,
 * `approval-required` (with a signed, serialisable state the UI sends back in `resume`), and
 * `messages` (the whole conversation once the run ends).
 */
export class AgentChatService implements ChatService {
  readonly unavailableReason: string | undefined;
  readonly #options: AgentChatServiceOptions;
  readonly #key: Uint8Array;

  constructor(options: AgentChatServiceOptions) {
    if (!options.model && !options.unavailableReason) {
      throw new ConfigurationError(
        'AgentChatService needs a model, or an unavailableReason that tells the user what to set.',
      );
    }
    this.#options = options;
    this.unavailableReason = options.model ? undefined : options.unavailableReason;
    this.#key = options.stateKey ?? randomBytes(32);
  }

  async *run(request: Parameters<ChatService['run']>[0]): AsyncIterable<ChatEvent> {
    const model = this.#options.model;
    if (!model) throw new ConfigurationError(this.unavailableReason ?? 'No chat model.');
    const assistant = new Assistant({
      name: 'quiver',
      ...this.#options.agent,
      model,
      toolkit: this.#options.toolkit,
      ...(this.#options.retriever ? { retriever: this.#options.retriever } : {}),
      files: request.files,
      alwaysRetrieve: this.#options.alwaysRetrieve?.() ?? false,
    });
    let run;
    if (request.resume) {
      const state = RunState.fromJSON(this.#verify(request.resume.state));
      for (const decision of request.resume.decisions) {
        const options = decision.message !== undefined ? { message: decision.message } : {};
        if (decision.approved) state.approve(decision.toolCallId, options);
        else state.reject(decision.toolCallId, options);
      }
      run = assistant.resume(state, { signal: request.signal });
    } else {
      run = assistant.run(request.messages, { signal: request.signal });
    }
    const events = run.events();
    let result: RunResult<ChatMessage> | undefined;
    for (;;) {
      const next = await events.next();
      if (next.done) {
        result = next.value as RunResult<ChatMessage>;
        break;
      }
      const mapped = toChatEvent(next.value);
      if (mapped) yield mapped;
    }
    if (result.status === 'needs-approval' && result.state) {
      yield {
        type: 'approval-required',
        pending: result.pendingApprovals.map((approval) => ({
          toolCallId: approval.callId,
          name: approval.toolName,
          arguments: approval.arguments,
        })),
        state: this.#sign(result.state.toJSON()),
      };
      return;
    }
    // A resumed run's messages include the paused turn, so the browser's history (as it was when
    // the run started) plus the run's messages is the whole conversation.
    yield { type: 'messages', messages: [...request.messages, ...result.messages] };
    yield { type: 'run-end', status: result.status, usage: result.usage };
  }

  #sign(data: unknown): SignedState {
    return { data, signature: this.#mac(JSON.stringify(data)) };
  }

  #verify(state: unknown): unknown {
    const signed = state as Partial<SignedState> | null;
    if (
      typeof signed === 'object' &&
      signed !== null &&
      typeof signed.signature === 'string' &&
      signed.data !== undefined
    ) {
      const expected = Buffer.from(this.#mac(JSON.stringify(signed.data)), 'hex');
      const given = Buffer.from(signed.signature, 'hex');
      if (given.length === expected.length && timingSafeEqual(given, expected)) return signed.data;
    }
    throw new ConfigurationError(
      'The run state to resume is not one this server issued (or the server restarted): send the message again.',
    );
  }

  #mac(text: string): string {
    return createHmac('sha256', this.#key).update(text).digest('hex');
  }
}

/** The web UI's event for an agent event; undefined for events the UI does not show. */
function toChatEvent(event: AgentEvent): ChatEvent | undefined {
  switch (event.type) {
    case 'model-delta':
      return event.delta.type === 'text-delta'
        ? { type: 'text-delta', text: event.delta.text }
        : undefined;
    case 'tool-start':
      return { type: 'tool-start', id: event.callId, name: event.name, arguments: event.arguments };
    case 'tool-chunk':
      return { type: 'tool-chunk', id: event.callId, name: event.name, chunk: event.chunk };
    case 'tool-end':
      return { type: 'tool-end', id: event.callId, name: event.name, response: event.response };
    case 'retrieval':
      return {
        type: 'retrieval',
        sources: event.chunks.map((chunk) => ({ source: chunk.source, page: chunk.page })),
        warnings: event.warnings,
        ...(event.error !== undefined ? { error: event.error } : {}),
      };
    default:
      return undefined;
  }
}
