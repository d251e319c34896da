import type { Readable, Writable } from 'node:stream';
import type { ContentBlock, Language, ToolResponse } from '@quiver/core';
import { ConfigurationError, localize, responseText } from '@quiver/core';
import type { RegisteredTool, Toolkit } from '@quiver/core-registry';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type {
  CallToolResult,
  Tool as MCPTool,
  ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { structuredContentOf, toMCPContent } from './content-mapping.js';

/** Options of {@link createMCPServer}. */
export interface MCPServerOptions {
  /** The tools to serve. */
  toolkit: Toolkit;
  /**
   * Serve only the tools of these groups (they are activated in the toolkit, since a toolkit
   * runs only tools of active groups). Default: every active tool.
   */
  groups?: string[];
  /** Server name announced to clients. Default `quiver`. */
  name?: string;
  version?: string;
  /** Usage notes sent to clients in the initialize result. */
  instructions?: string;
  /** Language of the tool descriptions. Default: the toolkit's. */
  language?: Language;
  /** Tools per `tools/list` page. Default 100. */
  pageSize?: number;
}

/**
 * Build an MCP server (the SDK's low-level `Server`, not yet connected) that serves a Toolkit:
 * `tools/list` lists the toolkit's active tools (or the chosen groups) with their JSON Schemas,
 * page by page; `tools/call` runs them through the toolkit (validation, middleware, timeouts),
 * sends each streamed chunk as a `notifications/progress` (its text as the message) when the
 * client asked for progress, and returns a result that carries all the content. Cancellation
 * from the client aborts the tool's signal.
 *
 * @example
 * ```ts
 * const server = createMCPServer({ toolkit });
 * await server.connect(new StdioServerTransport());
 * ```
 * @throws ConfigurationError when a chosen group does not exist
 */
export function createMCPServer(options: MCPServerOptions): Server {
  const { toolkit } = options;
  const groups = options.groups ? new Set(options.groups) : undefined;
  if (options.groups) {
    const missing = toolkit.activateGroups(options.groups);
    if (missing.length > 0) {
      throw new ConfigurationError(
        `The toolkit has no tool group named ${missing.map((name) => `"${name}"`).join(', ')}. Groups: ${toolkit
          .groups()
          .map((group) => group.name)
          .join(', ')}.`,
      );
    }
  }
  const pageSize = options.pageSize ?? 100;
  const language = options.language ?? toolkit.language;
  const server = new Server(
    { name: options.name ?? 'quiver', version: options.version ?? '0.1.0' },
    {
      capabilities: { tools: { listChanged: true } },
      ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
    },
  );

  const exposed = (): RegisteredTool[] =>
    toolkit
      .list({ activeOnly: true })
      .filter((tool) => groups === undefined || groups.has(tool.group));

  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const tools = exposed();
    const start = request.params?.cursor !== undefined ? decodeCursor(request.params.cursor) : 0;
    const page = tools.slice(start, start + pageSize);
    const next = start + pageSize < tools.length ? encodeCursor(start + pageSize) : undefined;
    return {
      tools: page.map((tool) => toMCPTool(tool, language)),
      ...(next !== undefined ? { nextCursor: next } : {}),
    };
  });

  server.setRequestHandler(
    CallToolRequestSchema,
    async (request, extra): Promise<CallToolResult> => {
      const name = request.params.name;
      if (!exposed().some((tool) => tool.name === name)) {
        // A JSON-RPC error, as the spec asks for an unknown tool (not a tool result).
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
      }
      const progressToken = extra._meta?.progressToken;
      const chunks: ToolResponse[] = [];
      let progress = 0;
      const stream = toolkit.call(
        {
          id: String(extra.requestId),
          name,
          arguments: JSON.stringify(request.params.arguments ?? {}),
        },
        { signal: extra.signal },
      );
      for await (const chunk of stream) {
        chunks.push(chunk);
        if (chunk.isLast === true || progressToken === undefined || extra.signal.aborted) continue;
        progress += 1;
        const message = responseText(chunk);
        await extra
          .sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress, ...(message !== '' ? { message } : {}) },
          })
          .catch(() => {
            // The client went away: the call ends by cancellation, nothing to report here.
          });
      }
      const merged = joinChunks(chunks);
      const structured = merged.isError ? undefined : structuredContentOf(merged.content);
      return {
        content: toMCPContent(merged.content),
        ...(merged.isError ? { isError: true } : {}),
        ...(structured !== undefined ? { structuredContent: structured } : {}),
      };
    },
  );

  return server;
}

/**
 * The whole output of a streamed call. Chunks are increments, so the text that ends one chunk and
 * the text that starts the next are one piece; blocks inside a chunk stay separate blocks.
 */
function joinChunks(chunks: readonly ToolResponse[]): {
  content: ContentBlock[];
  isError: boolean;
} {
  const content: ContentBlock[] = [];
  let isError = false;
  for (const chunk of chunks) {
    chunk.content.forEach((block, index) => {
      const previous = content[content.length - 1];
      if (index === 0 && block.type === 'text' && previous?.type === 'text') {
        content[content.length - 1] = { type: 'text', text: previous.text + block.text };
      } else {
        content.push(block);
      }
    });
    if (chunk.isError === true) isError = true;
  }
  return { content, isError };
}

function toMCPTool(tool: RegisteredTool, language: Language): MCPTool {
  const flags = tool.tool.flags;
  const annotations: ToolAnnotations = {};
  if (flags.sideEffects !== undefined) annotations.readOnlyHint = !flags.sideEffects;
  if (flags.sideEffects === true) annotations.destructiveHint = true;
  if (flags.deterministic !== undefined) annotations.idempotentHint = flags.deterministic;
  if (flags.networkAccess !== undefined) annotations.openWorldHint = flags.networkAccess;
  return {
    name: tool.name,
    description: localize(tool.description, language),
    inputSchema: tool.modelParameters as MCPTool['inputSchema'],
    ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
  };
}

function encodeCursor(offset: number): string {
  return Buffer.from(`offset:${offset}`).toString('base64url');
}

function decodeCursor(cursor: string): number {
  const match = /^offset:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new McpError(ErrorCode.InvalidParams, `Invalid cursor: ${cursor}`);
  return Number(match[1]);
}

/** A running stdio MCP server. */
export interface MCPStdioServer {
  readonly server: Server;
  /** Tell the client the tool list changed (after registering or removing tools). */
  notifyToolListChanged(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Serve a Toolkit over stdio (the process's stdin and stdout unless others are given): what an
 * MCP host starts with `"command": "node", "args": ["my-server.mjs"]`. Log to stderr, never to
 * stdout, while it runs.
 *
 * @example
 * ```ts
 * await serveMCPStdio({ toolkit });
 * ```
 */
export async function serveMCPStdio(
  options: MCPServerOptions & { stdin?: Readable; stdout?: Writable },
): Promise<MCPStdioServer> {
  const server = createMCPServer(options);
  const transport = new StdioServerTransport(options.stdin, options.stdout);
  await server.connect(transport);
  // The MCP spec's stdio shutdown: the client closes our stdin, and we stop.
  (options.stdin ?? process.stdin).once('end', () => {
    void server.close();
  });
  return {
    server,
    notifyToolListChanged: () => server.sendToolListChanged(),
    close: () => server.close(),
  };
}
