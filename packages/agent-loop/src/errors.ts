import { QuiverError } from '@quiver/core';

/** Error codes raised by `@quiver/agent-loop` (besides the core ones it reuses). */
export const AgentErrorCodes = {
  invalidMessages: 'agent_messages_invalid',
  invalidRunState: 'agent_run_state_invalid',
  approvalPending: 'agent_approval_pending',
} as const;

/**
 * The messages given to `Agent.run` are not chat messages (wrong role, missing content, a tool
 * message without `tool_call_id` …). Fix the input; nothing was sent to the model.
 */
export class InvalidMessagesError extends QuiverError {
  /** Index of the first offending message. */
  readonly index: number;

  constructor(index: number, detail: string, options?: { cause?: unknown }) {
    super(
      AgentErrorCodes.invalidMessages,
      `Message ${index} is not a valid chat message: ${detail}. Pass OpenAI-style messages ({ role, content }) or Message instances.`,
      options,
    );
    this.index = index;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), index: this.index };
  }
}

/** A run state given to `resume` (or `RunState.fromJSON`) is not one this package wrote. */
export class InvalidRunStateError extends QuiverError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(
      AgentErrorCodes.invalidRunState,
      `Not a valid agent run state: ${detail}. Pass the state a paused run returned (result.state or its JSON).`,
      options,
    );
  }
}

/** `resume` was called while some tool calls still wait for a human decision. */
export class ApprovalPendingError extends QuiverError {
  /** Ids of the tool calls that still need `approve` or `reject`. */
  readonly callIds: string[];

  constructor(callIds: string[]) {
    super(
      AgentErrorCodes.approvalPending,
      `Tool calls ${callIds.join(', ')} still wait for a decision. Call state.approve(id) or state.reject(id) for each before resuming.`,
    );
    this.callIds = callIds;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), callIds: this.callIds };
  }
}
