import type { AssistantMessage, ChatMessage } from './messages.js';
import type { OpenAITool, ToolCall } from './tool.js';

/** Token counts reported by a model. */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** One request to a chat model. */
export interface ChatRequest {
  messages: ChatMessage[];
  tools?: OpenAITool[];
  toolChoice?: 'auto' | 'none' | 'required' | { name: string };
  parallelToolCalls?: boolean;
  temperature?: number;
  maxTokens?: number;
  seed?: number;
  stop?: string[];
  /** Provider-specific body fields, passed through as they are. */
  extraBody?: Record<string, unknown>;
  signal?: AbortSignal;
}

/** What a streaming chat model emits, in order; `finish` is always last. */
export type ChatStreamEvent =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'tool-call-delta'; index: number; id?: string; name?: string; argumentsDelta: string }
  | { type: 'tool-call'; toolCall: ToolCall }
  | {
      type: 'finish';
      finishReason: 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error' | 'other';
      message: AssistantMessage;
      usage?: TokenUsage;
    };

/** A chat model with streaming and native tool calls. */
export interface ChatModel {
  /** Model name as the endpoint knows it. */
  readonly modelId: string;
  /** Context window in tokens, when known. */
  readonly contextWindow?: number;
  /** Stream one completion. Errors are thrown as `ModelServiceError`. */
  stream(request: ChatRequest): AsyncIterable<ChatStreamEvent>;
}

/** Turns texts into vectors. */
export interface Embedder {
  /** Stable identity of the model and its settings, stored with an index to detect mismatches. */
  readonly id: string;
  /** Vector length, when known before the first call. */
  readonly dimensions: number | undefined;
  embed(texts: string[], options?: { signal?: AbortSignal }): Promise<number[][]>;
}

/** A piece of a document that retrieval found. */
export interface RetrievedChunk {
  chunkId: string;
  text: string;
  /** File path or URL the chunk came from. */
  source: string;
  page?: number;
  headingPath?: string[];
  score: number;
}

/** What a {@link Retriever} is asked. */
export interface RetrievalRequest {
  query: string;
  /** Restrict (and, where the retriever supports it, index first) these files or URLs. */
  files?: string[];
  /** Token budget for the returned chunks. */
  maxTokens?: number;
  topK?: number;
  signal?: AbortSignal;
}

/** What a {@link Retriever} answers: the chunks found, best first, and what went wrong on the way. */
export interface RetrievalResult {
  chunks: RetrievedChunk[];
  /** Things the caller should know: a file that failed to parse, a search mode that was unavailable. */
  warnings: string[];
}

/** Finds the passages relevant to a query (keyword, vector or hybrid search over documents). */
export interface Retriever {
  retrieve(request: RetrievalRequest): Promise<RetrievalResult>;
}

/** Document formats Quiver parses. */
export type DocumentFormat =
  'pdf' | 'docx' | 'pptx' | 'xlsx' | 'csv' | 'html' | 'markdown' | 'text' | 'json';

interface BlockBase {
  /** 1-based page (slide, sheet) number. */
  page: number;
  /** Titles of the headings this block sits under, outermost first. */
  headingPath: string[];
  text: string;
}

/** One structural block of a parsed document (paragraph, heading, list, table, code, image). */
export type DocumentBlock =
  | (BlockBase & { type: 'paragraph' })
  | (BlockBase & { type: 'heading'; level: number })
  | (BlockBase & { type: 'list'; items: string[]; ordered?: boolean })
  | (BlockBase & { type: 'table'; rows: string[][] })
  | (BlockBase & { type: 'code'; language?: string })
  | (BlockBase & { type: 'image'; alt?: string; src?: string });

/** The blocks of one page (slide, sheet) of a parsed document, in reading order. */
export interface DocumentPage {
  page: number;
  blocks: DocumentBlock[];
}

/** A parsed document: structure first, with the flat text beside it. */
export interface ParsedDocument {
  title: string;
  format: DocumentFormat;
  /** Where it came from (path or URL), when known. */
  source?: string;
  pages: DocumentPage[];
  text: string;
  tokenCount: number;
  metadata: Record<string, unknown>;
}

/** A token-bounded piece of a document: what retrieval indexes. */
export interface DocumentChunk {
  id: string;
  index: number;
  text: string;
  source: string;
  page: number;
  headingPath: string[];
  tokenCount: number;
}

/** What a parser accepts: a path, a URL, or the bytes. */
export type DocumentInput = string | URL | Uint8Array;

/** Parses documents into {@link ParsedDocument}. */
export interface DocumentParser {
  parse(
    input: DocumentInput,
    options?: { signal?: AbortSignal; filename?: string },
  ): Promise<ParsedDocument>;
}
