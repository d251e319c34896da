import type {
  AssistantMessage,
  ChatMessage,
  ChatModel,
  ChatRequest,
  ChatStreamEvent,
  ToolCall,
  ToolMessage,
  ToolResponse,
} from '@quiver/core';
import { errorMessage, responseText } from '@quiver/core';
import type { Tool, ToolSpec } from '@quiver/core-registry';
import { Toolkit, mergeResponses } from '@quiver/core-registry';
import type { AgentOptions, RunOptions } from './agent.js';
import { Agent, RunSession } from './agent.js';
import { appendToSystemMessage } from './system-message.js';
import type { AgentEvent, PendingApproval, RunStatus } from './agent-events.js';
import { AgentRun } from './agent-run.js';
import { AsyncQueue } from './async-queue.js';
import { fitToContextWindow } from './context-budget.js';
import { ApprovalPendingError } from './errors.js';
import type { Message } from './message.js';
import type { ApprovalDecision } from './run-state.js';
import { RunState } from './run-state.js';
import type { TextToolProtocol } from './text-protocol.js';
import { TextProtocolChatModel } from './text-protocol.js';
import type { TokenCounter } from './token-counter.js';

/** How tools reach the model: the API's native tool calls, or a text protocol in the prompt. */
export type ToolProtocol = 'native' | TextToolProtocol;

/** Options of {@link FnCallAgent}. */
export interface FnCallAgentOptions extends AgentOptions {
  /** The tools (with any middleware, e.g. governance). Default: a new toolkit holding `tools`. */
  toolkit?: Toolkit;
  /** Tools to register into the toolkit. */
  // `any`: a list mixes tools whose argument types differ; each was checked where it was defined.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  tools?: (Tool<any> | ToolSpec<any>)[];
  /** Model calls per run before the agent stops with a final message. Default 10. */
  maxLlmCalls?: number;
  /** Tool calls of one turn that run at the same time. Default 4. */
  maxConcurrentTools?: number;
  /** Times a turn may be dropped and re-asked because a result was marked `rollback`. Default 2. */
  maxRollbacks?: number;
  /** `native` (default), or `qwen` / `hermes` text protocols for models without tool calling. */
  toolProtocol?: ToolProtocol;
  /** Context window in tokens; default the model's. Longer histories are trimmed. */
  contextWindow?: number;
  /** Tokens kept free for the answer when trimming. Default `maxTokens` or 1024. */
  reserveTokens?: number;
  /** Token counter for trimming. Default o200k_base. */
  tokenCounter?: TokenCounter;
  /** Directory tools may write to (`ToolContext.workDir`). */
  workDir?: string;
}

/** The outcome of one tool call. */
interface ToolOutcome {
  call: ToolCall;
  response: ToolResponse;
  message: ToolMessage;
}

/** A turn to resume: the paused calls and the decisions about them. */
interface ResumeTurn {
  turnId: string;
  calls: ToolCall[];
  decisions: Record<string, ApprovalDecision>;
}

const resumes = new WeakMap<RunSession, ResumeTurn>();

const TEXT = {
  limit: {
    en: (count: number) =>
      `I stopped because this run reached its limit of ${count} model calls before I could finish. Ask me to continue, or raise maxLlmCalls.`,
    zh: (count: number) =>
      `本次运行已达到 ${count} 次模型调用的上限，任务尚未完成，因此我先停在这里。请让我继续，或调高 maxLlmCalls。`,
  },
  rollback: {
    en: (reason: string) =>
      `Note: your previous attempt was discarded because its tool results were not useful (${reason}). Try a different approach.`,
    zh: (reason: string) => `注意：上一次尝试的工具结果无效，已被丢弃（${reason}）。请换一种方法。`,
  },
  rejected: {
    en: (name: string, message?: string) =>
      `The user rejected this call to "${name}", so it did not run.${message ? ` The user said: ${message}` : ''} Do not call it again unless the user asks.`,
    zh: (name: string, message?: string) =>
      `用户拒绝了对“${name}”的调用，该调用未执行。${message ? `用户说明：${message}` : ''}除非用户要求，不要再次调用。`,
  },
  approvedNote: {
    en: (message: string) => `\n\n[The user approved this call and said: ${message}]`,
    zh: (message: string) => `\n\n[用户批准了此调用，并说明：${message}]`,
  },
  empty: { en: '(the tool returned no output)', zh: '（工具没有输出）' },
} as const;

/**
 * An agent that calls tools (Qwen-Agent's `FnCallAgent`): it asks the model, runs the tool calls
 * the model makes through the {@link Toolkit} (several at once, up to a limit; results go back in
 * the order the model asked), feeds the results back, and repeats until the model answers, up to
 * `maxLlmCalls`. Tools marked `needsApproval` pause the run for a human; results marked
 * `rollback` drop the turn and re-ask the model.
 *
 * @example
 * ```ts
 * const agent = new FnCallAgent({ model: new OpenAIChatModel(), tools: [weatherTool] });
 * const result = await agent.run([{ role: 'user', content: 'Weather in Paris?' }]).final();
 * console.log(result.messages.at(-1)?.content);
 * ```
 */
export class FnCallAgent extends Agent {
  readonly toolkit: Toolkit;
  readonly maxLlmCalls: number;
  readonly maxConcurrentTools: number;
  readonly maxRollbacks: number;
  readonly toolProtocol: ToolProtocol;
  readonly #contextWindow: number | undefined;
  readonly #reserveTokens: number | undefined;
  readonly #tokenCounter: TokenCounter | undefined;
  readonly #workDir: string | undefined;
  /** The model requests go to (the text-protocol wrapper in text mode). */
  readonly #transport: ChatModel;

  constructor(options: FnCallAgentOptions) {
    super(options);
    this.toolkit = options.toolkit ?? new Toolkit({ logger: this.logger });
    for (const tool of options.tools ?? []) this.toolkit.register(tool);
    this.maxLlmCalls = positive(options.maxLlmCalls, 10);
    this.maxConcurrentTools = positive(options.maxConcurrentTools, 4);
    this.maxRollbacks = Math.max(0, options.maxRollbacks ?? 2);
    this.toolProtocol = options.toolProtocol ?? 'native';
    this.#transport =
      this.toolProtocol === 'native'
        ? this.model
        : new TextProtocolChatModel(this.model, { protocol: this.toolProtocol });
    this.#contextWindow = options.contextWindow ?? this.model.contextWindow;
    this.#reserveTokens = options.reserveTokens;
    this.#tokenCounter = options.tokenCounter;
    this.#workDir = options.workDir;
  }

  /**
   * Continue a run that paused for approval, once every pending call is approved or rejected.
   * Works in another process too: pass `RunState.fromJSON(storedJson)`.
   *
   * @param state - the paused run's state, with decisions
   * @param options - signal, events, sampling (the language is the paused run's)
   * @returns a run whose response includes the messages from before the pause
   * @throws ApprovalPendingError when a call still waits for a decision
   */
  resume<TMessage extends ChatMessage | Message = ChatMessage>(
    state: RunState,
    options: Omit<RunOptions, 'language'> = {},
  ): AgentRun<TMessage> {
    const restored = RunState.fromJSON(state);
    const pending = restored.pendingApprovals;
    if (pending.length > 0)
      throw new ApprovalPendingError(pending.map((approval) => approval.callId));
    const data = restored.data();
    if (data.toolkitState) {
      const missing = this.toolkit.importState(data.toolkitState);
      if (missing.length > 0)
        this.logger.warn('resumed run names tool groups this toolkit lacks', { groups: missing });
    }
    const controller = new AbortController();
    const session = new RunSession({
      runId: data.runId,
      language: data.language,
      options: { ...options, language: data.language },
      kind: data.outputKind,
      conversation: data.conversation,
      response: data.response,
      usage: data.usage,
      llmCalls: data.llmCalls,
      rollbacks: data.rollbacks,
      agentName: this.name,
      controller,
    });
    resumes.set(session, {
      turnId: `${data.runId}:${data.llmCalls}`,
      calls: data.pendingCalls,
      decisions: data.decisions,
    });
    return new AgentRun<TMessage>(this.drive(session, options.signal, controller));
  }

  /**
   * Called once before the first model call of a run (not when resuming): a subclass may edit
   * `session.conversation` here, as the Assistant does to add retrieved knowledge.
   */
  protected async *prepare(_session: RunSession): AsyncGenerator<AgentEvent, void, undefined> {}

  protected async *execute(session: RunSession): AsyncGenerator<AgentEvent, RunStatus, undefined> {
    const resume = resumes.get(session);
    let rollbackNote: string | undefined;
    if (resume) {
      resumes.delete(session);
      // The paused assistant message is the last response message; a rollback drops it too.
      const assistantIndex = session.response.length - 1;
      const outcome = yield* this.#handleCalls(
        session,
        resume.turnId,
        resume.calls,
        resume.decisions,
      );
      if (outcome.kind === 'rollback') {
        session.response.splice(assistantIndex);
        rollbackNote = TEXT.rollback[session.language](outcome.reason);
      } else if (outcome.kind !== 'continue') {
        return outcome.kind;
      }
    } else {
      yield* this.prepare(session);
    }
    for (;;) {
      if (session.signal.aborted) return 'aborted';
      if (session.llmCalls >= this.maxLlmCalls) {
        session.append({
          role: 'assistant',
          content: TEXT.limit[session.language](this.maxLlmCalls),
        });
        return 'max-llm-calls';
      }
      const turnId = `${session.runId}:${session.llmCalls + 1}`;
      yield { type: 'model-start', runId: session.runId, turnId, llmCall: session.llmCalls + 1 };
      let messages = session.history();
      if (rollbackNote !== undefined) messages = appendToSystemMessage(messages, rollbackNote);
      if (this.#contextWindow !== undefined) {
        const fitted = fitToContextWindow(messages, {
          contextWindow: this.#contextWindow,
          reserveTokens:
            this.#reserveTokens ?? session.options.maxTokens ?? this.defaults.maxTokens ?? 1024,
          language: session.language,
          ...(this.#tokenCounter ? { counter: this.#tokenCounter } : {}),
        });
        if (fitted.overBudget) {
          this.logger.warn('the latest turn alone exceeds the context window; sending it anyway', {
            tokens: fitted.tokens,
          });
        }
        if (fitted.droppedMessages > 0) {
          messages = fitted.messages;
          yield {
            type: 'context-trimmed',
            runId: session.runId,
            turnId,
            droppedMessages: fitted.droppedMessages,
          };
        }
      }
      const request = this.#request(session, messages);
      let finish: Extract<ChatStreamEvent, { type: 'finish' }> | undefined;
      session.draft = {
        role: 'assistant',
        content: '',
        ...(this.name !== undefined ? { name: this.name } : {}),
      };
      try {
        for await (const event of this.#transport.stream(request)) {
          switch (event.type) {
            case 'text-delta':
              session.draft = {
                ...session.draft,
                content: `${(session.draft.content as string) ?? ''}${event.text}`,
              };
              yield { type: 'model-delta', runId: session.runId, turnId, delta: event };
              break;
            case 'reasoning-delta':
              session.draft = {
                ...session.draft,
                reasoning_content: `${session.draft.reasoning_content ?? ''}${event.text}`,
              };
              yield { type: 'model-delta', runId: session.runId, turnId, delta: event };
              break;
            case 'tool-call-delta':
              yield { type: 'model-delta', runId: session.runId, turnId, delta: event };
              break;
            case 'finish':
              finish = event;
              break;
            default:
              break;
          }
        }
      } catch (error) {
        if (session.signal.aborted) {
          // Close the turn for UIs (every model-start has a model-end) and keep what was said.
          const partial = session.draft;
          session.draft = undefined;
          if (typeof partial.content === 'string' && partial.content !== '')
            session.append({ ...partial });
          yield {
            type: 'model-end',
            runId: session.runId,
            turnId,
            message: partial,
            finishReason: 'other',
          };
          return 'aborted';
        }
        session.draft = undefined;
        throw error;
      }
      session.draft = undefined;
      session.llmCalls++;
      if (!finish) return session.signal.aborted ? 'aborted' : 'completed';
      session.addUsage(finish.usage);
      const assistantIndex = session.response.length;
      session.append(finish.message);
      yield {
        type: 'model-end',
        runId: session.runId,
        turnId,
        message: session.response[assistantIndex] as AssistantMessage,
        finishReason: finish.finishReason,
        ...(finish.usage ? { usage: finish.usage } : {}),
      };
      rollbackNote = undefined;
      const calls = (finish.message.tool_calls ?? []).map((call) => ({
        id: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
      }));
      if (calls.length === 0) return 'completed';
      const outcome = yield* this.#handleCalls(session, turnId, calls, {});
      if (outcome.kind === 'rollback') {
        session.response.splice(assistantIndex);
        rollbackNote = TEXT.rollback[session.language](outcome.reason);
        continue;
      }
      if (outcome.kind !== 'continue') return outcome.kind;
    }
  }

  #request(session: RunSession, messages: ChatMessage[]): ChatRequest {
    const options = session.options;
    const tools = this.toolkit.getJsonSchemas({ language: session.language });
    const temperature = options.temperature ?? this.defaults.temperature;
    const maxTokens = options.maxTokens ?? this.defaults.maxTokens;
    const seed = options.seed ?? this.defaults.seed;
    return {
      messages,
      ...(tools.length > 0 ? { tools } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(maxTokens !== undefined ? { maxTokens } : {}),
      ...(seed !== undefined ? { seed } : {}),
      signal: session.signal,
    };
  }

  /** Approvals, execution, rollback for the calls of one turn. */
  async *#handleCalls(
    session: RunSession,
    turnId: string,
    calls: ToolCall[],
    decisions: Record<string, ApprovalDecision>,
  ): AsyncGenerator<
    AgentEvent,
    { kind: 'continue' | 'aborted' | 'needs-approval' } | { kind: 'rollback'; reason: string }
  > {
    const context = {
      signal: session.signal,
      files: session.files,
      state: session.toolState,
      language: session.language,
      logger: this.logger,
    };
    const approvals: PendingApproval[] = [];
    for (const call of calls) {
      if (decisions[call.id] !== undefined) continue;
      if (await this.toolkit.requiresApproval(call, context)) {
        approvals.push({ callId: call.id, toolName: call.name, arguments: call.arguments });
      }
    }
    if (approvals.length > 0) {
      session.pause = {
        approvals,
        state: new RunState({
          version: 1,
          runId: session.runId,
          ...(this.name !== undefined ? { agentName: this.name } : {}),
          language: session.language,
          outputKind: session.kind,
          conversation: structuredClone(session.conversation),
          response: structuredClone(session.response),
          pendingCalls: calls.map((call) => ({ ...call })),
          approvalRequired: approvals.map((approval) => approval.callId),
          decisions: structuredClone(decisions),
          llmCalls: session.llmCalls,
          rollbacks: session.rollbacks,
          usage: { ...session.usage },
          toolkitState: this.toolkit.exportState(),
        }),
      };
      yield { type: 'approval-required', runId: session.runId, turnId, approvals };
      return { kind: 'needs-approval' };
    }
    const firstResult = session.response.length;
    const outcomes = yield* this.#runTools(session, turnId, calls, decisions);
    if (session.signal.aborted) return { kind: 'aborted' };
    const rollback = outcomes.find((outcome) => outcome.response.metadata?.rollback !== undefined);
    if (rollback && session.rollbacks < this.maxRollbacks) {
      session.rollbacks++;
      const reason = String(rollback.response.metadata?.rollback?.reason ?? 'marked for rollback');
      session.response.splice(firstResult);
      yield { type: 'turn-dropped', runId: session.runId, turnId, reason };
      return { kind: 'rollback', reason };
    }
    return { kind: 'continue' };
  }

  /** Run a turn's calls, at most `maxConcurrentTools` at once; append results in the model's order. */
  async *#runTools(
    session: RunSession,
    turnId: string,
    calls: ToolCall[],
    decisions: Record<string, ApprovalDecision>,
  ): AsyncGenerator<AgentEvent, ToolOutcome[]> {
    const outcomes: (ToolOutcome | undefined)[] = new Array(calls.length);
    let appended = 0;
    const flush = () => {
      while (appended < calls.length && outcomes[appended] !== undefined)
        session.append(outcomes[appended++]!.message);
    };
    const queue = new AsyncQueue<{ event: AgentEvent; index?: number; outcome?: ToolOutcome }>();
    let nextIndex = 0;
    const worker = async () => {
      while (nextIndex < calls.length) {
        const index = nextIndex++;
        const call = calls[index]!;
        try {
          const outcome = await this.#runOne(session, turnId, call, decisions[call.id], (event) =>
            queue.push({ event }),
          );
          queue.push({ event: endEvent(session, turnId, outcome), index, outcome });
        } catch (error) {
          // #runOne cannot throw (the toolkit never does); this guards a broken toolkit subclass.
          const message = toolMessage(call, `Error: ${errorMessage(error)}`);
          const outcome = {
            call,
            response: {
              content: [{ type: 'text' as const, text: message.content as string }],
              isError: true,
            },
            message,
          };
          queue.push({ event: endEvent(session, turnId, outcome), index, outcome });
        }
      }
    };
    const workers = Array.from({ length: Math.min(this.maxConcurrentTools, calls.length) }, worker);
    void Promise.all(workers).finally(() => queue.close());
    for await (const item of queue.drain()) {
      if (item.index !== undefined) {
        outcomes[item.index] = item.outcome;
        flush();
      }
      yield item.event;
    }
    return outcomes as ToolOutcome[];
  }

  async #runOne(
    session: RunSession,
    turnId: string,
    call: ToolCall,
    decision: ApprovalDecision | undefined,
    emit: (event: AgentEvent) => void,
  ): Promise<ToolOutcome> {
    const language = session.language;
    emit({
      type: 'tool-start',
      runId: session.runId,
      turnId,
      callId: call.id,
      name: call.name,
      arguments: call.arguments,
    });
    if (decision?.approved === false) {
      const text = TEXT.rejected[language](call.name, decision.message);
      return {
        call,
        response: {
          content: [{ type: 'text', text }],
          isError: true,
          isLast: true,
          metadata: { rejected: true },
        },
        message: toolMessage(call, text),
      };
    }
    const chunks: ToolResponse[] = [];
    for await (const chunk of this.toolkit.call(call, {
      signal: session.signal,
      files: session.files,
      state: session.toolState,
      language,
      logger: this.logger,
      ...(this.#workDir !== undefined ? { workDir: this.#workDir } : {}),
      ...(this.name !== undefined ? { namespace: this.name } : {}),
    })) {
      chunks.push(chunk);
      emit({
        type: 'tool-chunk',
        runId: session.runId,
        turnId,
        callId: call.id,
        name: call.name,
        chunk,
      });
    }
    const response = chunks.length === 1 ? chunks[0]! : mergeResponses(chunks);
    let text = responseText(response);
    if (text === '') text = TEXT.empty[language];
    if (decision?.message) text += TEXT.approvedNote[language](decision.message);
    return { call, response, message: toolMessage(call, text) };
  }
}

function endEvent(session: RunSession, turnId: string, outcome: ToolOutcome): AgentEvent {
  return {
    type: 'tool-end',
    runId: session.runId,
    turnId,
    callId: outcome.call.id,
    name: outcome.call.name,
    response: outcome.response,
    message: outcome.message,
  };
}

function toolMessage(call: ToolCall, content: string): ToolMessage {
  return { role: 'tool', tool_call_id: call.id, name: call.name, content };
}

function positive(value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  return Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback;
}
