import type { Logger } from '@quiver/core';
import { ToolAbortedError, ToolExecutionError, ToolTimeoutError, errorMessage } from '@quiver/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type {
  CallToolResult,
  Progress,
  ServerCapabilities,
  Tool as MCPTool,
} from '@modelcontextprotocol/sdk/types.js';
import {
  CallToolResultSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { MCPServerConfig, RemoteServerConfig, StdioServerConfig } from './config.js';
import { isStdioConfig } from './config.js';
import { MCPConnectionError, MCPErrorCodes, MCPServerDisconnectedError } from './errors.js';
import { descendantsOf, terminateAll } from './process-tree.js';
import { RequestSignal } from './request-signal.js';

/** The transport a connection ended up using. */
export type MCPTransportKind = 'stdio' | 'streamable-http' | 'sse';

/** Where a server connection stands. */
export type MCPConnectionState =
  'idle' | 'connecting' | 'connected' | 'disconnected' | 'failed' | 'closed';

/** Backoff of reconnection attempts. */
export interface ReconnectOptions {
  /** Attempts per call that finds the server disconnected. Default 3. */
  maxAttempts?: number;
  /** Delay before the second attempt; doubles each time. Default 250 ms. */
  initialDelayMs?: number;
  /** Upper bound of the delay. Default 5 s. */
  maxDelayMs?: number;
}

/** A directory (or other root) the client offers to servers that ask for roots. */
export interface MCPRoot {
  /** A `file://` URI. */
  uri: string;
  name?: string;
}

/** @internal Options of one {@link ServerConnection}. */
export interface ServerConnectionOptions {
  name: string;
  config: MCPServerConfig;
  clientInfo: { name: string; version: string };
  connectTimeoutMs: number;
  reconnect: Required<ReconnectOptions>;
  roots: MCPRoot[] | undefined;
  logger: Logger;
  /** Called (debounced by the caller) when the server says its tool list changed. */
  onToolListChanged: () => void;
  /** Called after a reconnection (not the first connection): the tool list may have changed. */
  onReconnected: () => void;
}

/** @internal Options of one call. */
export interface ConnectionCallOptions {
  /** A RequestSignal is detached from the call's cancellation once the request settles. */
  signal?: AbortSignal | RequestSignal;
  timeoutMs: number;
  onProgress?: (progress: Progress) => void;
}

const STDERR_LINES = 20;
const HEALTH_CHECK_TIMEOUT_MS = 3_000;

/**
 * @internal One configured MCP server, seen from the client: connects (and reconnects with
 * backoff), lists tools across pages, forwards calls, and on close ends the server's processes.
 */
export class ServerConnection {
  readonly name: string;
  readonly config: MCPServerConfig;
  state: MCPConnectionState = 'idle';
  transportKind: MCPTransportKind | undefined;
  lastError: Error | undefined;
  /** Process id of a stdio server while it runs. */
  pid: number | undefined;
  readonly #options: ServerConnectionOptions;
  #client: Client | undefined;
  #connecting: Promise<Client> | undefined;
  #healthCheck: Promise<void> | undefined;
  #closing = false;
  #connections = 0;
  /**
   * Stream-resumption settings of Streamable HTTP transports. The transport reads this object on
   * every attempt, and `close()` sets `maxRetries` to 0: a resumption attempt already under way
   * when the transport closes would otherwise schedule more attempts (timers that keep the
   * process alive for seconds after close).
   */
  readonly #reconnection = {
    initialReconnectionDelay: 250,
    maxReconnectionDelay: 5_000,
    reconnectionDelayGrowFactor: 2,
    maxRetries: 3,
  };
  readonly #stderr: string[] = [];
  /** Every process id this connection has started (with descendants seen), to end on close. */
  readonly #processes = new Set<number>();

  constructor(options: ServerConnectionOptions) {
    this.#options = options;
    this.name = options.name;
    this.config = options.config;
  }

  /** Capabilities the server announced, once connected. */
  get capabilities(): ServerCapabilities | undefined {
    return this.#client?.getServerCapabilities();
  }

  /** The server's usage instructions, once connected. */
  get instructions(): string | undefined {
    return this.#client?.getInstructions();
  }

  /** The last lines the server wrote to stderr (stdio servers). */
  get stderrTail(): string {
    return this.#stderr.join('\n');
  }

  /** Connect (once; concurrent callers share the attempt). @throws MCPConnectionError */
  connect(): Promise<Client> {
    if (this.#closing) return Promise.reject(this.#closedError());
    if (this.state === 'connected' && this.#client) return Promise.resolve(this.#client);
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  /**
   * The connected client; when the server went away, reconnect first with exponential backoff.
   * @throws MCPConnectionError after the last failed attempt; the signal's reason when aborted
   */
  async ensureConnected(signal?: AbortSignal): Promise<Client> {
    if (this.state === 'connected' && this.#client) return this.#client;
    const { maxAttempts, initialDelayMs, maxDelayMs } = this.#options.reconnect;
    let lastError: unknown;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      if (attempt > 0)
        await sleep(Math.min(initialDelayMs * 2 ** (attempt - 1), maxDelayMs), signal);
      signal?.throwIfAborted();
      try {
        return await this.connect();
      } catch (error) {
        lastError = error;
        if (this.#closing || (error instanceof MCPConnectionError && !error.isRetryable)) break;
        this.#options.logger.warn('MCP reconnection attempt failed', {
          server: this.name,
          attempt: attempt + 1,
          error: errorMessage(error),
        });
      }
    }
    throw lastError instanceof MCPConnectionError
      ? lastError
      : new MCPConnectionError(this.name, `Could not reconnect to MCP server "${this.name}".`, {
          cause: lastError,
        });
  }

  async #connect(): Promise<Client> {
    this.state = 'connecting';
    try {
      const client = isStdioConfig(this.config)
        ? await this.#connectStdio(this.config)
        : await this.#connectRemote(this.config);
      this.#client = client;
      this.state = 'connected';
      this.lastError = undefined;
      this.#connections++;
      if (this.#connections > 1) this.#options.onReconnected();
      return client;
    } catch (error) {
      this.state = 'failed';
      const wrapped =
        error instanceof MCPConnectionError ? error : this.#connectionError(error, undefined);
      this.lastError = wrapped;
      throw wrapped;
    }
  }

  #newClient(): Client {
    const roots = this.#options.roots;
    const client = new Client(this.#options.clientInfo, {
      capabilities: roots ? { roots: { listChanged: false } } : {},
    });
    if (roots) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots }));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.#options.onToolListChanged();
    });
    return client;
  }

  async #connectStdio(config: StdioServerConfig): Promise<Client> {
    const transport = new StdioClientTransport({
      command: config.command,
      ...(config.args ? { args: config.args } : {}),
      ...(config.env ? { env: config.env } : {}),
      ...(config.cwd ? { cwd: config.cwd } : {}),
      stderr: 'pipe',
    });
    // Keep the last lines of stderr: they explain most start-up failures.
    transport.stderr?.on('data', (data: Buffer) => {
      for (const line of data.toString('utf8').split('\n')) {
        if (line.trim() === '') continue;
        this.#stderr.push(line.slice(0, 500));
        if (this.#stderr.length > STDERR_LINES) this.#stderr.shift();
      }
    });
    const client = this.#newClient();
    try {
      await this.#attach(client, transport, 'stdio');
    } catch (error) {
      await this.#discard(client, transport);
      throw this.#connectionError(error, 'stdio');
    }
    return client;
  }

  async #connectRemote(config: RemoteServerConfig): Promise<Client> {
    const url = new URL(config.url);
    const requestInit: RequestInit = config.headers ? { headers: config.headers } : {};
    const wanted = config.type === 'sse' ? 'sse' : 'streamable-http';
    if (wanted === 'streamable-http') {
      const client = this.#newClient();
      const transport = new StreamableHTTPClientTransport(url, {
        requestInit,
        reconnectionOptions: this.#reconnection,
      });
      try {
        await this.#attach(client, transport, 'streamable-http');
        return client;
      } catch (error) {
        await this.#discard(client, transport);
        // The backwards-compatibility rule of the MCP spec: a 4xx to the Streamable HTTP
        // initialize POST means the server may only speak the legacy HTTP+SSE transport.
        const status = error instanceof StreamableHTTPError ? error.code : undefined;
        const fallback =
          config.type === undefined &&
          status !== undefined &&
          status >= 400 &&
          status < 500 &&
          status !== 401 &&
          status !== 403;
        if (!fallback) throw this.#connectionError(error, 'streamable-http');
        this.#options.logger.info('Streamable HTTP refused; trying the legacy SSE transport', {
          server: this.name,
          status,
        });
      }
    }
    const client = this.#newClient();
    const headers = config.headers ?? {};
    const transport = new SSEClientTransport(url, {
      requestInit,
      eventSourceInit: {
        fetch: (input, init) =>
          fetch(input, { ...init, headers: { ...(init?.headers as object), ...headers } }),
      },
    });
    try {
      await this.#attach(client, transport, 'sse');
    } catch (error) {
      await this.#discard(client, transport);
      throw this.#connectionError(error, 'sse');
    }
    return client;
  }

  async #attach(client: Client, transport: Transport, kind: MCPTransportKind): Promise<void> {
    client.onclose = () => this.#onClosed(client);
    client.onerror = (error) => this.#onTransportError(client, error);
    await client.connect(transport, { timeout: this.#options.connectTimeoutMs });
    this.transportKind = kind;
    if (transport instanceof StdioClientTransport && transport.pid !== null) {
      this.pid = transport.pid;
      this.#processes.add(transport.pid);
    }
  }

  async #discard(client: Client, transport: Transport): Promise<void> {
    const pid = transport instanceof StdioClientTransport ? transport.pid : null;
    const descendants = pid !== null ? await descendantsOf(pid) : [];
    client.onclose = undefined;
    await client.close().catch(() => {});
    await terminateAll(pid !== null ? [pid, ...descendants] : descendants);
  }

  #onClosed(client: Client): void {
    if (client !== this.#client) return;
    this.#client = undefined;
    // The process is gone; forget its id so that a reused id is never signalled on close.
    if (this.pid !== undefined) this.#processes.delete(this.pid);
    this.pid = undefined;
    if (this.#closing) return;
    this.state = 'disconnected';
    this.lastError = new MCPConnectionError(
      this.name,
      `MCP server "${this.name}" closed the connection${this.#stderr.length ? `; its last stderr lines:\n${this.stderrTail}` : ''}.`,
    );
    this.#options.logger.warn('MCP server disconnected', { server: this.name });
  }

  /**
   * Transport errors are often transient (an SSE stream the transport resumes by itself), but a
   * dead HTTP server leaves calls waiting forever. Check with a ping; if the server does not
   * answer, close the transport so that every pending call fails at once with a clear error.
   */
  #onTransportError(client: Client, error: Error): void {
    this.#options.logger.debug('MCP transport error', {
      server: this.name,
      error: errorMessage(error),
    });
    if (client !== this.#client || this.#closing || this.transportKind === 'stdio') return;
    if (this.#healthCheck !== undefined) return;
    this.#healthCheck = client
      .ping({ timeout: HEALTH_CHECK_TIMEOUT_MS })
      .then(
        () => undefined,
        async (pingError: unknown) => {
          if (client !== this.#client) return;
          this.#options.logger.warn('MCP server does not answer; closing the connection', {
            server: this.name,
            error: errorMessage(pingError),
          });
          await client.close().catch(() => {});
        },
      )
      .finally(() => {
        this.#healthCheck = undefined;
      });
  }

  /** Every tool of the server, following `nextCursor` across pages. */
  async listTools(signal?: AbortSignal): Promise<MCPTool[]> {
    const client = await this.ensureConnected(signal);
    const tools: MCPTool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, {
        ...(signal ? { signal } : {}),
        timeout: this.#options.connectTimeoutMs,
      });
      tools.push(...page.tools);
      cursor = page.nextCursor;
      // A server that hands out the same cursor twice would keep us here forever.
      if (cursor !== undefined) {
        if (seen.has(cursor)) break;
        seen.add(cursor);
      }
    } while (cursor !== undefined);
    return tools;
  }

  /**
   * Call a tool. Progress notifications reach `onProgress`; aborting the signal (or the timeout)
   * sends `notifications/cancelled` to the server (the SDK does that for a cancelled request).
   * @throws ToolTimeoutError, ToolAbortedError (or the signal's reason), MCPServerDisconnectedError,
   * MCPConnectionError, ToolExecutionError (code `mcp_request_failed`) for a JSON-RPC error
   */
  callTool(
    toolName: string,
    args: Record<string, unknown>,
    options: ConnectionCallOptions,
  ): Promise<CallToolResult> {
    const client = this.state === 'connected' ? this.#client : undefined;
    // Connected (the usual case): send at once, without waiting a turn for ensureConnected.
    if (client !== undefined) return this.#callTool(client, toolName, args, options);
    return this.ensureConnected(sdkSignal(options.signal)).then(
      (connected) => this.#callTool(connected, toolName, args, options),
      (error: unknown) => {
        if (options.signal instanceof RequestSignal) options.signal.detach();
        throw error;
      },
    );
  }

  #callTool(
    client: Client,
    toolName: string,
    args: Record<string, unknown>,
    options: ConnectionCallOptions,
  ): Promise<CallToolResult> {
    const signal = options.signal;
    const detach = signal instanceof RequestSignal ? signal : undefined;
    // Built field by field, not with conditional spreads: this runs on every call.
    const requestOptions: RequestOptions = { timeout: options.timeoutMs };
    if (signal !== undefined) requestOptions.signal = sdkSignal(signal);
    if (options.onProgress !== undefined) {
      requestOptions.onprogress = options.onProgress;
      requestOptions.resetTimeoutOnProgress = false;
    }
    let sent: Promise<unknown>;
    try {
      sent = client.callTool(
        { name: toolName, arguments: args },
        CallToolResultSchema,
        requestOptions,
      );
    } catch (error) {
      detach?.detach();
      return Promise.reject(this.#callError(error, toolName, options));
    }
    return sent.then(
      (result) => {
        detach?.detach();
        return result as CallToolResult;
      },
      (error: unknown) => {
        detach?.detach();
        throw this.#callError(error, toolName, options);
      },
    );
  }

  /** Send any request through the client (resources, prompts). */
  async request<T>(
    run: (client: Client) => Promise<T>,
    what: string,
    signal?: AbortSignal,
  ): Promise<T> {
    const client = await this.ensureConnected(signal);
    try {
      return await run(client);
    } catch (error) {
      throw this.#callError(error, what, { timeoutMs: 0, ...(signal ? { signal } : {}) });
    }
  }

  #callError(error: unknown, toolName: string, options: ConnectionCallOptions): Error {
    if (options.signal?.aborted) {
      const reason: unknown = options.signal.reason;
      return reason instanceof Error ? reason : new ToolAbortedError(toolName, { cause: error });
    }
    if (error instanceof McpError) {
      if (error.code === ErrorCode.RequestTimeout) {
        return new ToolTimeoutError(toolName, options.timeoutMs, { cause: error });
      }
      if (error.code === ErrorCode.ConnectionClosed) {
        return new MCPServerDisconnectedError(this.name, toolName, this.#disconnectDetail(), {
          cause: error,
        });
      }
      return new ToolExecutionError(
        toolName,
        `MCP server "${this.name}" rejected the call to "${toolName}": ${error.message}`,
        { cause: error, code: MCPErrorCodes.requestFailed },
      );
    }
    if (this.state !== 'connected' || isNetworkError(error)) {
      // The request could not be sent (or its stream broke): the server is gone.
      if (this.#client && isNetworkError(error)) void this.#client.close().catch(() => {});
      return new MCPServerDisconnectedError(
        this.name,
        toolName,
        `${this.#disconnectDetail()}: ${errorMessage(error)}`,
        {
          cause: error,
        },
      );
    }
    return new ToolExecutionError(
      toolName,
      `Calling "${toolName}" on MCP server "${this.name}" failed: ${errorMessage(error)}`,
      { cause: error, code: MCPErrorCodes.requestFailed },
    );
  }

  #disconnectDetail(): string {
    const tail = this.#stderr.slice(-3).join(' | ');
    return tail ? `connection closed; last stderr: ${tail}` : 'connection closed';
  }

  #connectionError(error: unknown, kind: MCPTransportKind | undefined): MCPConnectionError {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    const status = error instanceof StreamableHTTPError ? error.code : undefined;
    let message: string;
    let isRetryable = true;
    if (code === 'ENOENT' || code === 'EACCES') {
      const command = isStdioConfig(this.config) ? this.config.command : '';
      message = `Cannot start MCP server "${this.name}": the command "${command}" was not found or is not executable. Check "command" in its configuration (and PATH).`;
      isRetryable = false;
    } else if (status === 401 || status === 403) {
      message = `MCP server "${this.name}" refused the connection (HTTP ${status}). Check the "headers" (e.g. Authorization) in its configuration.`;
      isRetryable = false;
    } else if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      message = `MCP server "${this.name}" did not answer the initialize request within ${this.#options.connectTimeoutMs} ms.`;
    } else {
      message = `Cannot connect to MCP server "${this.name}"${kind ? ` over ${kind}` : ''}: ${errorMessage(error)}`;
    }
    if (this.#stderr.length > 0) message += `\nIts last stderr lines:\n${this.stderrTail}`;
    return new MCPConnectionError(this.name, message, { cause: error, isRetryable });
  }

  #closedError(): MCPConnectionError {
    return new MCPConnectionError(
      this.name,
      `The connection to MCP server "${this.name}" is closed.`,
      {
        isRetryable: false,
      },
    );
  }

  /**
   * Close the connection and end every process it started, with their descendants (SIGTERM, then
   * SIGKILL after a grace period). Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    await this.#connecting?.catch(() => {});
    const client = this.#client;
    this.#client = undefined;
    this.state = 'closed';
    const pids = [...this.#processes];
    const descendants = (await Promise.all(pids.map((pid) => descendantsOf(pid)))).flat();
    this.#reconnection.maxRetries = 0;
    if (client) {
      const transport = client.transport;
      if (transport instanceof StreamableHTTPClientTransport) {
        // Tell the server the session is over (it may keep state per session); never wait long.
        await Promise.race([transport.terminateSession().catch(() => {}), delay(1_000)]);
      }
      // Closing stdin is how the MCP spec asks a stdio server to exit; give it a moment.
      await Promise.race([client.close().catch(() => {}), delay(500)]);
    }
    await terminateAll([...pids, ...descendants]);
  }
}

function isNetworkError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error.cause as NodeJS.ErrnoException | undefined)?.code;
  return (
    (error instanceof TypeError && /fetch failed|terminated/i.test(error.message)) ||
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'EPIPE' ||
    /EPIPE|ECONNRESET|ECONNREFUSED|Not connected/.test(error.message)
  );
}

/** What the SDK (and sleep) get as the signal: a RequestSignal stands in for an AbortSignal. */
function sdkSignal(signal: AbortSignal | RequestSignal | undefined): AbortSignal | undefined {
  return signal instanceof RequestSignal ? signal.asAbortSignal : signal;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A pause that does not keep the process alive (used only to bound waits during close). */
function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
