export type {
  ContentBlock,
  FileBlock,
  ImageBlock,
  JsonBlock,
  TextBlock,
  ToolResponse,
  ToolResponseMetadata,
} from './content.js';
export {
  contentBlockSchema,
  errorResponse,
  isContentBlock,
  isToolResponse,
  jsonBlock,
  responseText,
  safeStringify,
  textBlock,
  textResponse,
  toToolResponse,
  toolResponseSchema,
} from './content.js';
export type { ToolContext } from './context.js';
export { createToolContext, onToolAbort } from './context.js';
export type { ArgumentIssue } from './errors.js';
export {
  ConfigurationError,
  ErrorCodes,
  ModelServiceError,
  QuiverError,
  ToolAbortedError,
  ToolArgumentError,
  ToolExecutionError,
  ToolNotFoundError,
  ToolRegistrationError,
  ToolTimeoutError,
  errorMessage,
} from './errors.js';
export type {
  ChatModel,
  ChatRequest,
  ChatStreamEvent,
  DocumentBlock,
  DocumentChunk,
  DocumentFormat,
  DocumentInput,
  DocumentPage,
  DocumentParser,
  Embedder,
  ParsedDocument,
  RetrievalRequest,
  RetrievalResult,
  RetrievedChunk,
  Retriever,
  TokenUsage,
} from './interfaces.js';
export type { JsonSchema, JsonSchemaObject } from './json-schema.js';
export type { LogLevel, Logger } from './logger.js';
export { createConsoleLogger, silentLogger } from './logger.js';
export type {
  AssistantMessage,
  AssistantToolCall,
  AudioPart,
  ChatMessage,
  ContentPart,
  FilePart,
  ImagePart,
  Role,
  SystemMessage,
  TextPart,
  ToolMessage,
  UserMessage,
} from './messages.js';
export {
  assistantMessageSchema,
  assistantToolCallSchema,
  chatMessageSchema,
  contentPartSchema,
  messageText,
  systemMessageSchema,
  toolMessageSchema,
  userMessageSchema,
} from './messages.js';
export type {
  Language,
  LocalizedText,
  OpenAITool,
  ToolCall,
  ToolDefinition,
  ToolFlags,
} from './tool.js';
export { TOOL_NAME_PATTERN, localize, toOpenAITool, toolCallSchema } from './tool.js';
