import type {
  AssistantMessage,
  RetrievedChunk,
  ChatStreamEvent,
  Language,
  TokenUsage,
  ToolMessage,
  ToolResponse,
} from '@quiver/core';

/** A tool call that waits for a human decision before it runs. */
export interface PendingApproval {
  /** The model's tool call id. */
  callId: string;
  toolName: string;
  /** The arguments as the model wrote them (a JSON string, not yet parsed). */
  arguments: string;
}

/** How a run ended. */
export type RunStatus =
  /** The model gave its final answer. */
  | 'completed'
  /** Tool calls wait for approval; resume from `result.state`. */
  | 'needs-approval'
  /** `maxLlmCalls` was reached; the last message says so. */
  | 'max-llm-calls'
  /** The caller's AbortSignal fired. */
  | 'aborted';

/**
 * Events for user interfaces, in order. `turnId` ties a model call to the tool calls it asked
 * for; `callId` ties a tool's start, chunks and end together.
 */
export type AgentEvent =
  | { type: 'run-start'; runId: string; language: Language }
  | { type: 'model-start'; runId: string; turnId: string; llmCall: number }
  | {
      type: 'model-delta';
      runId: string;
      turnId: string;
      delta: Extract<
        ChatStreamEvent,
        { type: 'text-delta' | 'reasoning-delta' | 'tool-call-delta' }
      >;
    }
  | {
      type: 'model-end';
      runId: string;
      turnId: string;
      message: AssistantMessage;
      finishReason: Extract<ChatStreamEvent, { type: 'finish' }>['finishReason'];
      usage?: TokenUsage;
    }
  | {
      type: 'retrieval';
      runId: string;
      /** The passages given to the model, in citation order ([1] first). */
      chunks: RetrievedChunk[];
      warnings: string[];
      /** Set when retrieval failed and the run went on without knowledge. */
      error?: string;
    }
  | { type: 'context-trimmed'; runId: string; turnId: string; droppedMessages: number }
  | {
      type: 'tool-start';
      runId: string;
      turnId: string;
      callId: string;
      name: string;
      arguments: string;
    }
  | {
      type: 'tool-chunk';
      runId: string;
      turnId: string;
      callId: string;
      name: string;
      chunk: ToolResponse;
    }
  | {
      type: 'tool-end';
      runId: string;
      turnId: string;
      callId: string;
      name: string;
      /** The whole response (chunks merged). */
      response: ToolResponse;
      /** The tool message that goes back to the model. */
      message: ToolMessage;
    }
  | { type: 'turn-dropped'; runId: string; turnId: string; reason: string }
  | { type: 'approval-required'; runId: string; turnId: string; approvals: PendingApproval[] }
  | { type: 'run-end'; runId: string; status: RunStatus; usage: TokenUsage; llmCalls: number };
