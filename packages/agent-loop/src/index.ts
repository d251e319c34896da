export type { AgentOptions, RunOptions } from './agent.js';
export { Agent, DEFAULT_SYSTEM_MESSAGE, RunSession } from './agent.js';
export type { AgentEvent, PendingApproval, RunStatus } from './agent-events.js';
export type { RunResult } from './agent-run.js';
export { AgentRun } from './agent-run.js';
export type { AssistantOptions } from './assistant.js';
export { Assistant, formatKnowledge } from './assistant.js';
export type { ContextBudgetOptions, ContextBudgetResult } from './context-budget.js';
export { fitToContextWindow } from './context-budget.js';
export {
  AgentErrorCodes,
  ApprovalPendingError,
  InvalidMessagesError,
  InvalidRunStateError,
} from './errors.js';
export type { FnCallAgentOptions, ToolProtocol } from './fn-call-agent.js';
export { FnCallAgent } from './fn-call-agent.js';
export { detectLanguage } from './language.js';
export type { MessageInput, MessageOutput } from './message.js';
export { Message } from './message.js';
export type { OpenAIChatModelOptions } from './openai-chat-model.js';
export { OpenAIChatModel } from './openai-chat-model.js';
export type { RetryPolicy } from './retry-policy.js';
export { retryDelay } from './retry-policy.js';
export type { ApprovalDecision, RunStateData } from './run-state.js';
export { RunState } from './run-state.js';
export { appendToSystemMessage, mergeSystemMessage } from './system-message.js';
export type {
  ParsedTextToolCall,
  TextProtocolChatModelOptions,
  TextToolProtocol,
} from './text-protocol.js';
export {
  TextProtocolChatModel,
  TextProtocolParser,
  UNREADABLE_TOOL_NAME,
  textProtocolSystemPrompt,
  toTextProtocolMessages,
} from './text-protocol.js';
export type { TokenCounter } from './token-counter.js';
export { countMessageTokens, defaultTokenCounter } from './token-counter.js';
