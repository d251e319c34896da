import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type {
  RecordedRequest,
  Script,
  ScriptedCompletion,
  ScriptedReply,
} from './scripted-reply.js';
import {
  applyStop,
  argumentsText,
  fragments,
  isDropReply,
  isErrorReply,
  isHangReply,
  scriptedUsage,
} from './scripted-reply.js';

/** Options of {@link startOpenAITestServer}. */
export interface OpenAITestServerOptions {
  /** The replies, in order, or a function choosing one per request. More can be added with `push`. */
  script?: Script;
  /** Model name reported in chunks and by `GET /v1/models`. Default `test-model`. */
  model?: string;
  /** Port on 127.0.0.1. Default 0 (any free port). */
  port?: number;
}

/** A running OpenAI-compatible test server. */
export interface OpenAITestServer {
  /** Base URL for an OpenAI client, ending in `/v1`. */
  readonly baseURL: string;
  /** Every chat request received (JSON body, headers, path), in order. */
  readonly requests: RecordedRequest[];
  /** Append replies to a list script. */
  push(...replies: ScriptedReply[]): void;
  /** Stop the server and cut every open connection. */
  close(): Promise<void>;
}

/**
 * Start an OpenAI-compatible Chat Completions server on 127.0.0.1 that answers from a script:
 * streamed answers exactly as the OpenAI API sends them (SSE `chat.completion.chunk`s with a
 * role chunk, content and tool-call argument fragments, a finish chunk, a usage chunk when
 * `stream_options.include_usage` is set, then `[DONE]`), non-streamed `chat.completion`s, HTTP
 * errors (429 with `Retry-After`, 500 …), connections dropped before or during the answer, and
 * requests left hanging. For tests of anything that talks to a model over HTTP.
 *
 * @example
 * ```ts
 * const server = await startOpenAITestServer({ script: [{ text: 'Hello!' }] });
 * const model = new OpenAIChatModel({ baseURL: server.baseURL, apiKey: 'test', model: 'test-model' });
 * // … run the code under test …
 * await server.close();
 * ```
 */
export async function startOpenAITestServer(
  options: OpenAITestServerOptions = {},
): Promise<OpenAITestServer> {
  const model = options.model ?? 'test-model';
  const script = options.script ?? [];
  const queue: ScriptedReply[] = typeof script === 'function' ? [] : [...script];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let chatIndex = 0;

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) {
        sendJson(response, 500, {
          error: {
            message: `test server failed: ${String(error)}`,
            type: 'server_error',
            code: null,
          },
        });
      } else response.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0]!;
    if (request.method === 'GET' && path.endsWith('/models')) {
      sendJson(response, 200, {
        object: 'list',
        data: [{ id: model, object: 'model', created: 0, owned_by: 'quiver-test' }],
      });
      return;
    }
    if (request.method !== 'POST' || !path.endsWith('/chat/completions')) {
      sendJson(response, 404, {
        error: {
          message: `No route ${request.method} ${path}`,
          type: 'invalid_request_error',
          code: null,
        },
      });
      return;
    }
    const raw = await readBody(request);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      sendJson(response, 400, {
        error: { message: 'The body is not JSON.', type: 'invalid_request_error', code: null },
      });
      return;
    }
    const recorded: RecordedRequest = { body, headers: { ...request.headers }, path };
    requests.push(recorded);
    const index = chatIndex++;
    const reply = typeof script === 'function' ? await script(recorded, index) : queue.shift();
    if (!reply) {
      sendJson(response, 500, {
        error: {
          message: `The test server's script has no reply for request ${index + 1}.`,
          type: 'server_error',
          code: 'script_exhausted',
        },
      });
      return;
    }
    if (isDropReply(reply)) {
      request.socket.destroy();
      return;
    }
    if (isHangReply(reply)) return;
    if (isErrorReply(reply)) {
      const errorBody = reply.body ?? {
        error: {
          message: statusMessage(reply.status),
          type: reply.status === 429 ? 'rate_limit_exceeded' : 'server_error',
          code: null,
        },
      };
      sendJson(response, reply.status, errorBody, reply.headers);
      return;
    }
    const completion = reply as ScriptedCompletion;
    if (body.stream === true) await stream(response, completion, body, index);
    else sendJson(response, 200, whole(completion, body, index));
  }

  function promptCharacters(body: Record<string, unknown>): number {
    const messages = Array.isArray(body.messages) ? (body.messages as { content?: unknown }[]) : [];
    return messages.reduce(
      (sum, message) =>
        sum +
        (typeof message.content === 'string'
          ? message.content.length
          : JSON.stringify(message.content ?? '').length),
      0,
    );
  }

  function calls(completion: ScriptedCompletion, index: number) {
    return (completion.toolCalls ?? []).map((call, callIndex) => ({
      id: call.id ?? `call_${randomBytes(9).toString('base64url')}`,
      name: call.name,
      arguments: argumentsText(call),
      index: callIndex,
      turn: index,
    }));
  }

  function whole(
    completion: ScriptedCompletion,
    body: Record<string, unknown>,
    index: number,
  ): Record<string, unknown> {
    const { text } = applyStop(completion.text ?? '', body.stop);
    const toolCalls = calls(completion, index);
    const usage = scriptedUsage(
      completion,
      promptCharacters(body),
      text.length + toolCalls.reduce((sum, call) => sum + call.arguments.length, 0),
    );
    return {
      id: `chatcmpl-${randomBytes(12).toString('base64url')}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      system_fingerprint: 'fp_quiver_test',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: text === '' && toolCalls.length > 0 ? null : text,
            refusal: null,
            ...(completion.reasoning ? { reasoning_content: completion.reasoning } : {}),
            ...(toolCalls.length > 0
              ? {
                  tool_calls: toolCalls.map((call) => ({
                    id: call.id,
                    type: 'function',
                    function: { name: call.name, arguments: call.arguments },
                  })),
                }
              : {}),
          },
          logprobs: null,
          finish_reason: completion.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
        },
      ],
      usage: usage
        ? {
            prompt_tokens: usage.promptTokens,
            completion_tokens: usage.completionTokens,
            total_tokens: usage.totalTokens,
          }
        : null,
    };
  }

  async function stream(
    response: ServerResponse,
    completion: ScriptedCompletion,
    body: Record<string, unknown>,
    index: number,
  ): Promise<void> {
    const id = `chatcmpl-${randomBytes(12).toString('base64url')}`;
    const created = Math.floor(Date.now() / 1000);
    const includeUsage =
      (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    const size = completion.chunkSize ?? 16;
    const { text } = applyStop(completion.text ?? '', body.stop);
    const toolCalls = calls(completion, index);
    const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      system_fingerprint: 'fp_quiver_test',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    });
    const frames: unknown[] = [chunk({ role: 'assistant', content: '', refusal: null })];
    for (const piece of fragments(completion.reasoning ?? '', size))
      frames.push(chunk({ reasoning_content: piece }));
    for (const piece of fragments(text, size)) frames.push(chunk({ content: piece }));
    for (const call of toolCalls) {
      const pieces = fragments(call.arguments, size);
      frames.push(
        chunk({
          tool_calls: [
            {
              index: call.index,
              id: call.id,
              type: 'function',
              function: { name: call.name, arguments: '' },
            },
          ],
        }),
      );
      for (const piece of pieces)
        frames.push(chunk({ tool_calls: [{ index: call.index, function: { arguments: piece } }] }));
    }
    frames.push(
      chunk({}, completion.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop')),
    );
    const usage = scriptedUsage(
      completion,
      promptCharacters(body),
      text.length + toolCalls.reduce((sum, call) => sum + call.arguments.length, 0),
    );
    if (includeUsage && usage) {
      frames.push({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        system_fingerprint: 'fp_quiver_test',
        choices: [],
        usage: {
          prompt_tokens: usage.promptTokens,
          completion_tokens: usage.completionTokens,
          total_tokens: usage.totalTokens,
          prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
          completion_tokens_details: {
            reasoning_tokens: 0,
            audio_tokens: 0,
            accepted_prediction_tokens: 0,
            rejected_prediction_tokens: 0,
          },
        },
      });
    }
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-request-id': `req_${randomBytes(8).toString('hex')}`,
    });
    response.flushHeaders();
    let sent = 0;
    for (const frame of frames) {
      if (completion.dropAfterChunks !== undefined && sent >= completion.dropAfterChunks) {
        // Cut the connection the way a crashed proxy does: no [DONE], no clean end of the body.
        response.socket?.destroy();
        return;
      }
      if (completion.chunkDelayMs) await delay(completion.chunkDelayMs);
      if (response.destroyed) return;
      response.write(`data: ${JSON.stringify(frame)}\n\n`);
      sent++;
    }
    response.end('data: [DONE]\n\n');
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    push(...replies: ScriptedReply[]) {
      queue.push(...replies);
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function statusMessage(status: number): string {
  if (status === 429) return 'Rate limit reached for requests. Please try again later.';
  if (status >= 500) return 'The server had an error while processing your request.';
  return `Request failed with status ${status}.`;
}
