import { createHash } from 'node:crypto';
import type { ContentBlock, Logger, ToolContext, ToolFlags, ToolResponse } from '@quiver/core';
import { TOOL_NAME_PATTERN, errorMessage, silentLogger } from '@quiver/core';
import type { NamesakeStrategy, Tool } from '@quiver/core-registry';
import { Toolkit, defineTool } from '@quiver/core-registry';
import type { CallToolResult, Progress, Tool as MCPTool } from '@modelcontextprotocol/sdk/types.js';
import type { MCPServerConfig, MCPServersConfig } from './config.js';
import { isStdioConfig, loadMCPServersConfig, parseMCPServersConfig } from './config.js';
import { fromMCPResult } from './content-mapping.js';
import { MCPConnectionError } from './errors.js';
import type {
  MCPConnectionState,
  MCPRoot,
  MCPTransportKind,
  ReconnectOptions,
} from './server-connection.js';
import { ServerConnection } from './server-connection.js';
import { RequestSignal } from './request-signal.js';

/** Options of {@link MCPManager}. */
export interface MCPManagerOptions {
  /** The servers: an `mcpServers` map, or the whole `{ mcpServers: {…} }` object. */
  servers: Record<string, MCPServerConfig> | MCPServersConfig;
  /** Toolkit to register the servers' tools in. Default: a new one (see `manager.toolkit`). */
  toolkit?: Toolkit;
  /**
   * Name a server's tool gets in the toolkit. Default `<server>__<tool>`, with characters outside
   * `[A-Za-z0-9_-]` replaced by `_` and names over 64 characters shortened with a hash suffix.
   */
  toolName?: (serverName: string, toolName: string) => string;
  /** What to do when a name is taken. Default: the toolkit's own strategy. */
  namesake?: NamesakeStrategy;
  /**
   * Put each server's tools in a tool group named after the server (created when missing; its
   * notes are the server's instructions). `{ active: false }` creates the groups inactive.
   */
  groups?: boolean | { active?: boolean };
  /** Also offer `<server>__list_resources` and `<server>__read_resource` tools. Default false. */
  resourcesAsTools?: boolean;
  /** Also offer `<server>__list_prompts` and `<server>__get_prompt` tools. Default false. */
  promptsAsTools?: boolean;
  /** Time limit of a call when the server's entry sets none. Default 60 s. */
  callTimeoutMs?: number;
  /** Time limit of starting a server and its initialize handshake. Default 30 s. */
  connectTimeoutMs?: number;
  /** Backoff of reconnections after a server went away. */
  reconnect?: ReconnectOptions;
  /** Roots offered to servers that ask for them (the filesystem server uses them as allowed dirs). */
  roots?: MCPRoot[];
  /** Name and version this client announces. */
  clientInfo?: { name: string; version: string };
  logger?: Logger;
  /** Told whenever a server's tools were (re-)registered: after connect, list_changed, reconnect. */
  onToolsChanged?: (event: { server: string; tools: string[] }) => void;
}

/** The state of one configured server. */
export interface MCPServerStatus {
  name: string;
  state: MCPConnectionState;
  /** The transport in use, once connected. */
  transport: MCPTransportKind | undefined;
  /** Process id of a running stdio server. */
  pid: number | undefined;
  /** Names of this server's tools in the toolkit. */
  tools: string[];
  /** Tools that could not be registered, and why (an invalid schema, a name clash under `skip`). */
  skippedTools: { name: string; reason: string }[];
  /** Why the server is not connected, when it is not. */
  error: Error | undefined;
}

/** What {@link MCPManager.connect} reports: every server is either connected or failed. */
export interface MCPConnectReport {
  connected: string[];
  failed: { name: string; error: Error }[];
}

/** The tools the manager defines: JSON Schema parameters, so plain records as arguments. */
type BridgedTool = Tool<Record<string, unknown>>;

interface ServerEntry {
  connection: ServerConnection;
  tools: string[];
  /** The tool objects this server registered, by name: under `override` another may replace one. */
  owned: Map<string, BridgedTool>;
  skipped: { name: string; reason: string }[];
  refreshTimer: NodeJS.Timeout | undefined;
  refreshing: Promise<void> | undefined;
}

const DEFAULT_CLIENT_INFO = { name: 'quiver-mcp-bridge', version: '0.1.0' };

/**
 * Connects to the MCP servers of an `mcpServers` configuration and offers their tools in a
 * {@link Toolkit}: servers start in parallel (one that fails is reported, the others go on),
 * tools are listed across pages and registered as `<server>__<tool>`, `notifications/tools/list_changed`
 * re-registers them, calls stream progress and honour timeouts and cancellation, a server that
 * goes away fails the calls in flight and is reconnected with backoff on the next call, and
 * `close()` ends every process it started.
 *
 * @example
 * ```ts
 * const manager = new MCPManager({
 *   servers: { mcpServers: { fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] } } },
 * });
 * const report = await manager.connect();
 * const response = await manager.toolkit.callToCompletion({ id: '1', name: 'fs__list_directory', arguments: '{"path":"/tmp"}' });
 * await manager.close();
 * ```
 */
export class MCPManager {
  /** The toolkit the servers' tools are registered in. */
  readonly toolkit: Toolkit;
  readonly #options: MCPManagerOptions;
  readonly #logger: Logger;
  readonly #servers = new Map<string, ServerEntry>();
  #closed = false;

  /** @throws ConfigurationError when the server configuration is invalid */
  constructor(options: MCPManagerOptions) {
    this.#options = options;
    this.#logger = options.logger ?? silentLogger;
    this.toolkit = options.toolkit ?? new Toolkit({ logger: this.#logger });
    const servers = parseMCPServersConfig(options.servers);
    const reconnect = {
      maxAttempts: options.reconnect?.maxAttempts ?? 3,
      initialDelayMs: options.reconnect?.initialDelayMs ?? 250,
      maxDelayMs: options.reconnect?.maxDelayMs ?? 5_000,
    };
    for (const [name, config] of Object.entries(servers)) {
      if (config.disabled) continue;
      const entry: ServerEntry = {
        tools: [],
        owned: new Map(),
        skipped: [],
        refreshTimer: undefined,
        refreshing: undefined,
        connection: new ServerConnection({
          name,
          config,
          clientInfo: options.clientInfo ?? DEFAULT_CLIENT_INFO,
          connectTimeoutMs: options.connectTimeoutMs ?? 30_000,
          reconnect,
          roots: options.roots,
          logger: this.#logger,
          onToolListChanged: () => this.#scheduleRefresh(name),
          onReconnected: () => this.#scheduleRefresh(name),
        }),
      };
      this.#servers.set(name, entry);
    }
    // Closing the toolkit ends the servers too: nothing is left running behind it.
    this.toolkit.onClose(() => this.close());
  }

  /**
   * Build a manager from an `mcpServers` JSON file.
   * @throws ConfigurationError when the file is missing or invalid
   */
  static async fromConfigFile(
    path: string,
    options: Omit<MCPManagerOptions, 'servers'> = {},
  ): Promise<MCPManager> {
    return new MCPManager({ ...options, servers: await loadMCPServersConfig(path) });
  }

  /**
   * Connect to every server that is not connected yet, in parallel, and register their tools.
   * Never throws for a server that fails: it is listed in `failed` (and in `status()`).
   */
  async connect(): Promise<MCPConnectReport> {
    const report: MCPConnectReport = { connected: [], failed: [] };
    await Promise.all(
      [...this.#servers].map(async ([name, entry]) => {
        try {
          await entry.connection.connect();
          await this.refresh(name);
          report.connected.push(name);
        } catch (error) {
          const failure =
            error instanceof Error ? error : new MCPConnectionError(name, errorMessage(error));
          this.#logger.warn('MCP server failed to connect', {
            server: name,
            error: failure.message,
          });
          report.failed.push({ name, error: failure });
        }
      }),
    );
    return report;
  }

  /** Where each configured (and enabled) server stands. */
  status(): MCPServerStatus[] {
    return [...this.#servers].map(([name, entry]) => ({
      name,
      state: entry.connection.state,
      transport: entry.connection.transportKind,
      pid: entry.connection.pid,
      tools: [...entry.tools],
      skippedTools: [...entry.skipped],
      error: entry.connection.state === 'connected' ? undefined : entry.connection.lastError,
    }));
  }

  /**
   * List a server's tools again and re-register them (what `list_changed` triggers). Concurrent
   * refreshes of one server are merged into one.
   * @throws MCPConnectionError when the server cannot be reached
   */
  refresh(serverName: string): Promise<void> {
    const entry = this.#servers.get(serverName);
    if (!entry)
      return Promise.reject(
        new MCPConnectionError(serverName, `No MCP server "${serverName}" is configured.`, {
          isRetryable: false,
        }),
      );
    entry.refreshing ??= this.#refresh(serverName, entry).finally(() => {
      entry.refreshing = undefined;
    });
    return entry.refreshing;
  }

  #scheduleRefresh(serverName: string): void {
    const entry = this.#servers.get(serverName);
    if (!entry || this.#closed) return;
    // Servers often send several list_changed in a row (one per tool they add): wait for quiet.
    clearTimeout(entry.refreshTimer);
    entry.refreshTimer = setTimeout(() => {
      entry.refreshTimer = undefined;
      this.refresh(serverName).catch((error: unknown) => {
        this.#logger.warn('MCP tool list refresh failed', {
          server: serverName,
          error: errorMessage(error),
        });
      });
    }, 50);
  }

  async #refresh(serverName: string, entry: ServerEntry): Promise<void> {
    const connection = entry.connection;
    const mcpTools = await connection.listTools();
    if (this.#closed) return;
    const toolkit = this.toolkit;
    const group = this.#groupFor(serverName, connection);
    const tools: BridgedTool[] = [];
    const skipped: { name: string; reason: string }[] = [];
    for (const mcpTool of mcpTools) {
      try {
        tools.push(this.#bridgeTool(serverName, connection, mcpTool));
      } catch (error) {
        skipped.push({ name: mcpTool.name, reason: errorMessage(error) });
      }
    }
    const capabilities = connection.capabilities;
    if (this.#options.resourcesAsTools && capabilities?.resources) {
      tools.push(...this.#resourceTools(serverName, connection));
    }
    if (this.#options.promptsAsTools && capabilities?.prompts) {
      tools.push(...this.#promptTools(serverName, connection));
    }
    this.#unregister(entry);
    const registered: string[] = [];
    for (const tool of tools) {
      try {
        const result = toolkit.register(tool, {
          ...(group !== undefined ? { group } : {}),
          ...(this.#options.namesake !== undefined ? { namesake: this.#options.namesake } : {}),
        });
        if (result) {
          registered.push(result.name);
          entry.owned.set(result.name, result.tool);
        } else
          skipped.push({ name: tool.name, reason: 'the name is taken (namesake strategy "skip")' });
      } catch (error) {
        skipped.push({ name: tool.name, reason: errorMessage(error) });
      }
    }
    entry.tools = registered;
    entry.skipped = skipped;
    for (const item of skipped) {
      this.#logger.warn('MCP tool not registered', {
        server: serverName,
        tool: item.name,
        reason: item.reason,
      });
    }
    this.#options.onToolsChanged?.({ server: serverName, tools: [...registered] });
  }

  /** Remove this server's tools, but never a tool another server (or the user) put in their place. */
  #unregister(entry: ServerEntry): void {
    for (const [name, tool] of entry.owned) {
      if (this.toolkit.get(name)?.tool === tool) this.toolkit.unregister(name);
    }
    entry.owned.clear();
  }

  #groupFor(serverName: string, connection: ServerConnection): string | undefined {
    const option = this.#options.groups;
    if (!option) return undefined;
    const name = sanitize(serverName);
    if (!this.toolkit.groups().some((group) => group.name === name)) {
      this.toolkit.createGroup({
        name,
        description: `Tools of the MCP server "${serverName}".`,
        notes: connection.instructions ?? '',
        active: typeof option === 'object' ? (option.active ?? true) : true,
      });
    }
    return name;
  }

  #toolName(serverName: string, toolName: string): string {
    return this.#options.toolName
      ? this.#options.toolName(serverName, toolName)
      : defaultToolName(serverName, toolName);
  }

  #timeoutOf(connection: ServerConnection): number {
    return connection.config.timeoutMs ?? this.#options.callTimeoutMs ?? 60_000;
  }

  /** A Quiver tool that forwards to one MCP tool. */
  #bridgeTool(serverName: string, connection: ServerConnection, mcpTool: MCPTool): BridgedTool {
    const timeoutMs = this.#timeoutOf(connection);
    const remoteName = mcpTool.name;
    const annotations = mcpTool.annotations;
    const flags: ToolFlags = {
      // MCP's defaults: a tool may change things and reach the outside world unless it says not.
      sideEffects: annotations?.readOnlyHint !== true,
      networkAccess: !isStdioConfig(connection.config) || annotations?.openWorldHint !== false,
    };
    return defineTool({
      name: this.#toolName(serverName, remoteName),
      description:
        mcpTool.description ??
        mcpTool.title ??
        annotations?.title ??
        `Tool "${remoteName}" of the MCP server "${serverName}".`,
      parameters: mcpTool.inputSchema as Record<string, unknown>,
      flags,
      timeoutMs,
      execute: (args: Record<string, unknown>, context: ToolContext) =>
        streamCall(connection, remoteName, args, context, timeoutMs),
    });
  }

  #resourceTools(serverName: string, connection: ServerConnection): BridgedTool[] {
    const timeout = this.#timeoutOf(connection);
    return [
      defineTool({
        name: this.#toolName(serverName, 'list_resources'),
        description: {
          en: `List the resources (files, records, documents) the MCP server "${serverName}" offers, with their URIs. Pass the returned cursor to get the next page.`,
          zh: `列出 MCP 服务器“${serverName}”提供的资源（文件、记录、文档）及其 URI。传入返回的 cursor 可获取下一页。`,
        },
        parameters: {
          type: 'object',
          properties: { cursor: { type: 'string', description: 'Cursor of the next page.' } },
          additionalProperties: false,
        },
        flags: { sideEffects: false },
        timeoutMs: timeout,
        execute: async (args: Record<string, unknown>, context: ToolContext) => {
          const cursor = typeof args.cursor === 'string' ? args.cursor : undefined;
          const page = await connection.request(
            (client) =>
              client.listResources(cursor ? { cursor } : {}, {
                signal: context.signal,
                timeout,
              }),
            'list_resources',
            context.signal,
          );
          return {
            type: 'json',
            value: { resources: page.resources, nextCursor: page.nextCursor },
          };
        },
      }),
      defineTool({
        name: this.#toolName(serverName, 'read_resource'),
        description: {
          en: `Read one resource of the MCP server "${serverName}" by its URI (see list_resources).`,
          zh: `按 URI 读取 MCP 服务器“${serverName}”的一个资源（URI 见 list_resources）。`,
        },
        parameters: {
          type: 'object',
          properties: { uri: { type: 'string', description: 'URI of the resource.' } },
          required: ['uri'],
          additionalProperties: false,
        },
        flags: { sideEffects: false },
        timeoutMs: timeout,
        execute: async (args: Record<string, unknown>, context: ToolContext) => {
          const result = await connection.request(
            (client) =>
              client.readResource({ uri: String(args.uri) }, { signal: context.signal, timeout }),
            'read_resource',
            context.signal,
          );
          return fromMCPResult(
            {
              content: result.contents.map((resource) => ({ type: 'resource' as const, resource })),
            },
            { serverName, toolName: 'read_resource' },
          );
        },
      }),
    ];
  }

  #promptTools(serverName: string, connection: ServerConnection): BridgedTool[] {
    const timeout = this.#timeoutOf(connection);
    return [
      defineTool({
        name: this.#toolName(serverName, 'list_prompts'),
        description: {
          en: `List the prompt templates of the MCP server "${serverName}", with their arguments.`,
          zh: `列出 MCP 服务器“${serverName}”的提示词模板及其参数。`,
        },
        parameters: {
          type: 'object',
          properties: { cursor: { type: 'string', description: 'Cursor of the next page.' } },
          additionalProperties: false,
        },
        flags: { sideEffects: false },
        timeoutMs: timeout,
        execute: async (args: Record<string, unknown>, context: ToolContext) => {
          const cursor = typeof args.cursor === 'string' ? args.cursor : undefined;
          const page = await connection.request(
            (client) =>
              client.listPrompts(cursor ? { cursor } : {}, {
                signal: context.signal,
                timeout,
              }),
            'list_prompts',
            context.signal,
          );
          return { type: 'json', value: { prompts: page.prompts, nextCursor: page.nextCursor } };
        },
      }),
      defineTool({
        name: this.#toolName(serverName, 'get_prompt'),
        description: {
          en: `Fill in a prompt template of the MCP server "${serverName}" (see list_prompts) and return its messages.`,
          zh: `填充 MCP 服务器“${serverName}”的提示词模板（见 list_prompts）并返回其消息。`,
        },
        parameters: {
          type: 'object',
          properties: {
            name: { type: 'string', description: 'Name of the prompt.' },
            arguments: {
              type: 'object',
              additionalProperties: { type: 'string' },
              description: 'Values of the prompt arguments.',
            },
          },
          required: ['name'],
          additionalProperties: false,
        },
        flags: { sideEffects: false },
        timeoutMs: timeout,
        execute: async (args: Record<string, unknown>, context: ToolContext) => {
          const promptArguments = args.arguments as Record<string, string> | undefined;
          const result = await connection.request(
            (client) =>
              client.getPrompt(
                {
                  name: String(args.name),
                  ...(promptArguments ? { arguments: promptArguments } : {}),
                },
                { signal: context.signal, timeout },
              ),
            'get_prompt',
            context.signal,
          );
          const content: ContentBlock[] = [];
          for (const message of result.messages) {
            const mapped = fromMCPResult(
              { content: [message.content] },
              { serverName, toolName: 'get_prompt' },
            );
            for (const block of mapped.content) {
              content.push(
                block.type === 'text'
                  ? { type: 'text', text: `${message.role}: ${block.text}` }
                  : block,
              );
            }
          }
          return { content, metadata: { mcpServer: serverName, description: result.description } };
        },
      }),
    ];
  }

  /**
   * Close every connection and end every process the manager started (with their children), and
   * take the servers' tools out of the toolkit. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all(
      [...this.#servers.values()].map(async (entry) => {
        clearTimeout(entry.refreshTimer);
        await entry.refreshing?.catch(() => {});
        await entry.connection.close();
        this.#unregister(entry);
        entry.tools = [];
      }),
    );
  }
}

/**
 * Forward one call. A caller that gathers the call into one response (`context.streaming` false)
 * gets a Promise of the result: no progress token is sent, since nobody would see the
 * notifications. Otherwise the call is streamed: each progress notification is a partial response
 * (empty content, `metadata.progress`) and the result is the final one (the iterator's return
 * value). A small iterator rather than an async generator: each generator step adds promise turns.
 */
function streamCall(
  connection: ServerConnection,
  toolName: string,
  args: Record<string, unknown>,
  context: ToolContext,
  timeoutMs: number,
): AsyncIterableIterator<ToolResponse> | Promise<ToolResponse> {
  if (context.streaming !== false) {
    return new CallStream(connection, toolName, args, context, timeoutMs);
  }
  // The caller gathers the call into one response: no progress to stream, just the result.
  return connection
    .callTool(toolName, args, { signal: RequestSignal.forContext(context), timeoutMs })
    .then((result) => fromMCPResult(result, { serverName: connection.name, toolName }));
}

type CallStep = IteratorResult<ToolResponse, ToolResponse | undefined>;
type CallOutcome = { ok: true; result: CallToolResult } | { ok: false; error: unknown };

class CallStream implements AsyncIterableIterator<ToolResponse> {
  readonly #pending: Progress[] = [];
  readonly #serverName: string;
  readonly #toolName: string;
  #outcome: CallOutcome | undefined;
  #finished = false;
  #waiter: { resolve: (step: CallStep) => void; reject: (error: unknown) => void } | undefined;

  constructor(
    connection: ServerConnection,
    toolName: string,
    args: Record<string, unknown>,
    context: ToolContext,
    timeoutMs: number,
  ) {
    this.#serverName = connection.name;
    this.#toolName = toolName;
    connection
      .callTool(toolName, args, {
        signal: RequestSignal.forContext(context),
        timeoutMs,
        onProgress: (progress: Progress) => {
          const waiter = this.#waiter;
          if (waiter !== undefined) {
            this.#waiter = undefined;
            waiter.resolve({ done: false, value: progressChunk(progress, this.#serverName) });
          } else this.#pending.push(progress);
        },
      })
      .then(
        (result) => this.#settle({ ok: true, result }),
        (error: unknown) => this.#settle({ ok: false, error }),
      );
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<ToolResponse> {
    return this;
  }

  next(): Promise<CallStep> {
    const progress = this.#pending.shift();
    if (progress !== undefined) {
      return Promise.resolve({ done: false, value: progressChunk(progress, this.#serverName) });
    }
    if (this.#outcome !== undefined || this.#finished) {
      return new Promise((resolve, reject) => this.#answer({ resolve, reject }));
    }
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  return(): Promise<CallStep> {
    // The toolkit aborts the call's signal before it stops reading; nothing else to release.
    this.#finished = true;
    this.#pending.length = 0;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.resolve({ done: true, value: undefined });
    return Promise.resolve({ done: true, value: undefined });
  }

  #settle(outcome: CallOutcome): void {
    this.#outcome = outcome;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter !== undefined) this.#answer(waiter);
  }

  /** The end of the stream: the mapped result, or the call's error (once). */
  #answer(waiter: { resolve: (step: CallStep) => void; reject: (error: unknown) => void }): void {
    const outcome = this.#outcome;
    if (this.#finished || outcome === undefined) {
      waiter.resolve({ done: true, value: undefined });
      return;
    }
    this.#finished = true;
    if (!outcome.ok) {
      waiter.reject(outcome.error);
      return;
    }
    try {
      waiter.resolve({
        done: true,
        value: fromMCPResult(outcome.result, {
          serverName: this.#serverName,
          toolName: this.#toolName,
        }),
      });
    } catch (error) {
      waiter.reject(error);
    }
  }
}

function progressChunk(progress: Progress, serverName: string): ToolResponse {
  return {
    content: [],
    metadata: {
      mcpServer: serverName,
      progress: {
        progress: progress.progress,
        ...(progress.total !== undefined ? { total: progress.total } : {}),
        ...(progress.message !== undefined ? { message: progress.message } : {}),
      },
    },
  };
}

/**
 * The default toolkit name of an MCP tool: `<server>__<tool>`, characters outside
 * `[A-Za-z0-9_-]` replaced by `_`, shortened with a hash suffix when over 64 characters.
 */
export function defaultToolName(serverName: string, toolName: string): string {
  return sanitize(`${serverName}__${toolName}`);
}

function sanitize(name: string): string {
  const clean = name.replace(/[^A-Za-z0-9_-]/g, '_');
  if (TOOL_NAME_PATTERN.test(clean)) return clean;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${clean.slice(0, 55)}_${hash}`;
}
