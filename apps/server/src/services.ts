import type { ChatMessage, RetrievedChunk } from '@quiver/core';
import type { Toolkit } from '@quiver/core-registry';
import type { PageCache } from './page-cache.js';

/** One event of a chat run, sent to the browser as a server-sent event named `type`. */
export interface ChatEvent {
  type: string;
  [field: string]: unknown;
}

/** Runs the agent for `/v1/chat`. Absent or unavailable: the UI shows a banner and offers tools directly. */
export interface ChatService {
  /** Why chat is not available (e.g. which env vars to set); undefined when it is. */
  readonly unavailableReason: string | undefined;
  run(request: {
    messages: ChatMessage[];
    /** Uploaded files (server paths) the Assistant should read. */
    files: string[];
    /** Decisions on tool calls that waited for approval, and the run state to resume. */
    resume?: {
      state: unknown;
      decisions: { toolCallId: string; approved: boolean; message?: string }[];
    };
    signal: AbortSignal;
  }): AsyncIterable<ChatEvent>;
}

/** Knowledge bases for `/v1/kb/:name/...`. */
export interface KnowledgeBaseService {
  addDocuments(
    name: string,
    paths: string[],
    options: { signal: AbortSignal },
  ): Promise<{ indexed: string[]; skipped: string[]; failed: { path: string; reason: string }[] }>;
  search(
    name: string,
    query: string,
    options: { topK: number; signal: AbortSignal },
  ): Promise<RetrievedChunk[]>;
}

/** Serves the MCP Streamable HTTP endpoint at `/mcp`. */
export interface McpEndpoint {
  handle(request: Request): Promise<Response>;
  close(): Promise<void>;
}

/** What the server wires together. Only the toolkit is required. */
export interface ServerServices {
  toolkit: Toolkit;
  chat?: ChatService;
  knowledgeBases?: KnowledgeBaseService;
  mcp?: McpEndpoint;
  /** Browsing history and page cache (`/v1/pages`). */
  pages?: PageCache;
  /** Extra clean-up on shutdown (kernels, MCP child processes…), run after the toolkit closes. */
  onShutdown?: () => Promise<void>;
}
