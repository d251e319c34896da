import type { ChatMessage, Language, TokenUsage, ToolCall } from '@quiver/core';
import { chatMessageSchema } from '@quiver/core';
import type { ToolkitState } from '@quiver/core-registry';
import { z } from 'zod';
import type { PendingApproval } from './agent-events.js';
import { InvalidRunStateError } from './errors.js';

/** A human's answer to one pending tool call. */
export interface ApprovalDecision {
  approved: boolean;
  /** Passed to the model with the result (approved) or with the rejection. */
  message?: string;
}

/** The JSON form of a {@link RunState}: plain data, safe to store and send across processes. */
export interface RunStateData {
  version: 1;
  runId: string;
  agentName?: string;
  language: Language;
  /** Whether the caller passed plain messages or `Message` instances. */
  outputKind: 'plain' | 'instance';
  /** The conversation as sent to the model (system message merged in). */
  conversation: ChatMessage[];
  /** The response messages so far (the last one asks for `pendingCalls`). */
  response: ChatMessage[];
  /** Every tool call of the paused turn, in the model's order. */
  pendingCalls: ToolCall[];
  /** Ids of the calls that need a decision. */
  approvalRequired: string[];
  decisions: Record<string, ApprovalDecision>;
  llmCalls: number;
  rollbacks: number;
  usage: TokenUsage;
  toolkitState?: ToolkitState;
}

const usageSchema = z.object({
  promptTokens: z.number(),
  completionTokens: z.number(),
  totalTokens: z.number(),
});
const stateSchema = z.object({
  version: z.literal(1),
  runId: z.string(),
  agentName: z.string().optional(),
  language: z.enum(['en', 'zh']),
  outputKind: z.enum(['plain', 'instance']),
  conversation: z.array(chatMessageSchema),
  response: z.array(chatMessageSchema),
  pendingCalls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() })),
  approvalRequired: z.array(z.string()),
  decisions: z.record(
    z.string(),
    z.object({ approved: z.boolean(), message: z.string().optional() }),
  ),
  llmCalls: z.number().int().nonnegative(),
  rollbacks: z.number().int().nonnegative(),
  usage: usageSchema,
  toolkitState: z.object({ version: z.literal(1), activeGroups: z.array(z.string()) }).optional(),
});

/**
 * Where a paused run stopped: the conversation, the tool calls waiting for approval, and the
 * decisions taken so far. Approve or reject each pending call, then pass the state to
 * `agent.resume`, in this process or (through `toJSON` / `RunState.fromJSON`) in another.
 *
 * @example
 * ```ts
 * const result = await agent.run(messages).final();
 * if (result.status === 'needs-approval') {
 *   const state = result.state!;
 *   for (const pending of state.pendingApprovals) state.approve(pending.callId);
 *   const resumed = await agent.resume(RunState.fromJSON(JSON.stringify(state))).final();
 * }
 * ```
 */
export class RunState {
  readonly #data: RunStateData;

  /** @internal Use `RunState.fromJSON` to restore a stored state. */
  constructor(data: RunStateData) {
    this.#data = data;
  }

  /** Read a state written by `toJSON` (the object or its JSON text). @throws InvalidRunStateError */
  static fromJSON(value: unknown): RunState {
    let input = value;
    if (typeof value === 'string') {
      try {
        input = JSON.parse(value) as unknown;
      } catch (error) {
        throw new InvalidRunStateError('the text is not JSON', { cause: error });
      }
    }
    if (input instanceof RunState) return new RunState(input.toJSON());
    const parsed = stateSchema.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InvalidRunStateError(
        `${issue?.message ?? 'invalid'} at "${issue?.path.join('.') ?? ''}"`,
      );
    }
    const data = parsed.data as RunStateData;
    const known = new Set(data.pendingCalls.map((call) => call.id));
    const unknown = data.approvalRequired.filter((id) => !known.has(id));
    if (unknown.length > 0)
      throw new InvalidRunStateError(`approvals name unknown tool calls ${unknown.join(', ')}`);
    return new RunState(data);
  }

  /** The id of the run this state belongs to. */
  get runId(): string {
    return this.#data.runId;
  }

  /** The tool calls that still need `approve` or `reject`. */
  get pendingApprovals(): PendingApproval[] {
    return this.#data.approvalRequired
      .filter((id) => this.#data.decisions[id] === undefined)
      .map((id) => {
        const call = this.#data.pendingCalls.find((candidate) => candidate.id === id)!;
        return { callId: call.id, toolName: call.name, arguments: call.arguments };
      });
  }

  /** Every decision taken so far, by call id. */
  get decisions(): Readonly<Record<string, ApprovalDecision>> {
    return { ...this.#data.decisions };
  }

  /** Let the call run; `message` reaches the model with the tool's result. @throws InvalidRunStateError for an unknown id */
  approve(callId: string, options: { message?: string } = {}): this {
    return this.#decide(callId, {
      approved: true,
      ...(options.message !== undefined ? { message: options.message } : {}),
    });
  }

  /** Do not run the call; the model is told it was rejected (with `message`, if given). @throws InvalidRunStateError for an unknown id */
  reject(callId: string, options: { message?: string } = {}): this {
    return this.#decide(callId, {
      approved: false,
      ...(options.message !== undefined ? { message: options.message } : {}),
    });
  }

  /** Approve every pending call. */
  approveAll(options: { message?: string } = {}): this {
    for (const pending of this.pendingApprovals) this.approve(pending.callId, options);
    return this;
  }

  /** Reject every pending call. */
  rejectAll(options: { message?: string } = {}): this {
    for (const pending of this.pendingApprovals) this.reject(pending.callId, options);
    return this;
  }

  /** The plain data (a deep copy): store it, send it, and restore with `RunState.fromJSON`. */
  toJSON(): RunStateData {
    return structuredClone(this.#data);
  }

  /** @internal The data the agent resumes from. */
  data(): RunStateData {
    return structuredClone(this.#data);
  }

  #decide(callId: string, decision: ApprovalDecision): this {
    if (!this.#data.approvalRequired.includes(callId)) {
      const known = this.#data.approvalRequired.join(', ') || 'none';
      throw new InvalidRunStateError(
        `no tool call "${callId}" waits for approval (pending: ${known})`,
      );
    }
    this.#data.decisions[callId] = decision;
    return this;
  }
}
