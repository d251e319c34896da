import type {
  AssistantMessage,
  ChatMessage,
  ChatModel,
  ChatRequest,
  ChatStreamEvent,
  ContentPart,
  TokenUsage,
  ToolCall,
} from '@quiver/core';
import { ConfigurationError, ModelServiceError } from '@quiver/core';
import OpenAI from 'openai';
import type { ResolvedRetryPolicy, RetryPolicy } from './retry-policy.js';
import {
  abortReason,
  parseRetryAfter,
  resolveRetryPolicy,
  retryDelay,
  sleep,
} from './retry-policy.js';

type FinishReason = Extract<ChatStreamEvent, { type: 'finish' }>['finishReason'];
type OpenAIMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ChunkToolCall = OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall;

/** Options of {@link OpenAIChatModel}. Anything left out comes from the environment. */
export interface OpenAIChatModelOptions {
  /** Model name. Default: env `QUIVER_MODEL`. */
  model?: string;
  /** Endpoint, e.g. `http://localhost:11434/v1`. Default: env `OPENAI_BASE_URL`, else OpenAI's. */
  baseURL?: string;
  /** API key. Default: env `OPENAI_API_KEY`; optional when a base URL is set (local servers). */
  apiKey?: string;
  /** The model's context window in tokens, for trimming long conversations. */
  contextWindow?: number;
  /** Defaults for every request (a request's own values win). */
  temperature?: number;
  maxTokens?: number;
  seed?: number;
  /** Which body field carries `maxTokens`. Default `max_tokens` (what compatible servers accept). */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** Time limit for the endpoint to start answering, in milliseconds. Default 60 000. */
  timeoutMs?: number;
  /** Time limit between two streamed chunks, in milliseconds. Default 60 000. */
  streamIdleTimeoutMs?: number;
  /** Retries on 408, 409, 429, 5xx, timeouts and connections dropped before any output. */
  retry?: RetryPolicy;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** Provider-specific body fields on every request (e.g. `{ enable_thinking: false }`). */
  extraBody?: Record<string, unknown>;
  /** A fetch implementation (proxies, tests). */
  fetch?: typeof fetch;
  /** An environment to read instead of `process.env`. */
  env?: Record<string, string | undefined>;
}

/**
 * A {@link ChatModel} over the `openai` SDK for any OpenAI-compatible Chat Completions endpoint:
 * OpenAI, DashScope (Qwen), vLLM, Ollama, llama.cpp server, LM Studio.
 *
 * Streams text, reasoning and tool calls (several per turn, arguments assembled from fragments),
 * retries transient failures with backoff (honouring `Retry-After`), and reports token usage in
 * the `finish` event. Every failure is a {@link ModelServiceError} with the HTTP status and body.
 *
 * @example
 * ```ts
 * const model = new OpenAIChatModel({ baseURL: 'http://localhost:11434/v1', model: 'qwen2.5:7b' });
 * for await (const event of model.stream({ messages: [{ role: 'user', content: 'Hi' }] })) {
 *   if (event.type === 'text-delta') process.stdout.write(event.text);
 * }
 * ```
 * @throws ConfigurationError when no model name, or neither an API key nor a base URL, is configured
 */
export class OpenAIChatModel implements ChatModel {
  readonly modelId: string;
  readonly contextWindow: number | undefined;
  /** The endpoint requests go to. */
  readonly baseURL: string;
  readonly #client: OpenAI;
  readonly #options: OpenAIChatModelOptions;
  readonly #retry: ResolvedRetryPolicy;

  constructor(options: OpenAIChatModelOptions = {}) {
    const env = options.env ?? process.env;
    const model = options.model ?? env.QUIVER_MODEL;
    const baseURL = options.baseURL ?? env.OPENAI_BASE_URL;
    let apiKey = options.apiKey ?? env.OPENAI_API_KEY;
    if (!model) {
      throw new ConfigurationError(
        'No model name is configured. Set the QUIVER_MODEL environment variable (e.g. QUIVER_MODEL=gpt-4o-mini) or pass { model } to OpenAIChatModel.',
      );
    }
    if (!apiKey) {
      if (!baseURL) {
        throw new ConfigurationError(
          'No model endpoint is configured. Set OPENAI_API_KEY (for OpenAI), or OPENAI_BASE_URL (and OPENAI_API_KEY if the endpoint needs one) for a compatible server, or pass { baseURL, apiKey }.',
        );
      }
      // Local servers (Ollama, vLLM, llama.cpp) accept any key; the SDK insists on one.
      apiKey = 'no-key';
    }
    if (options.contextWindow !== undefined && !(options.contextWindow > 0)) {
      throw new ConfigurationError('contextWindow must be a positive number of tokens.');
    }
    this.modelId = model;
    this.contextWindow = options.contextWindow;
    this.#options = options;
    this.#retry = resolveRetryPolicy(options.retry);
    this.#client = new OpenAI({
      apiKey,
      ...(baseURL ? { baseURL } : {}),
      // Retries are ours: the SDK cannot retry a stream that failed after its headers arrived.
      maxRetries: 0,
      // Our timers (see `stream`) fire first; this only bounds requests that bypass them.
      timeout: (options.timeoutMs ?? 60_000) + 5_000,
      ...(options.headers ? { defaultHeaders: options.headers } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    this.baseURL = this.#client.baseURL;
  }

  /** Stream one completion. @throws ModelServiceError; the signal's reason when aborted */
  async *stream(request: ChatRequest): AsyncIterable<ChatStreamEvent> {
    const body = this.#body(request);
    const signal = request.signal;
    for (let attempt = 0; ; attempt++) {
      let emitted = false;
      const controller = new AbortController();
      const relay = () => controller.abort(signal?.reason);
      if (signal?.aborted) throw abortReason(signal);
      signal?.addEventListener('abort', relay, { once: true });
      // Our own timers, not the SDK's timeout: we must tell a timeout from a cut connection, and
      // the SDK's classification relies on `instanceof DOMException`, which fails across realms.
      const answerMs = this.#options.timeoutMs ?? 60_000;
      const idleMs = this.#options.streamIdleTimeoutMs ?? 60_000;
      let timedOut: 'answer' | 'idle' | undefined;
      let phase: 'answer' | 'idle' = 'answer';
      let idleTimer: NodeJS.Timeout = setTimeout(() => {
        timedOut = phase;
        controller.abort();
      }, answerMs);
      try {
        const stream = await this.#client.chat.completions.create(body, {
          signal: controller.signal,
        });
        // Headers are in: from now on, the limit is the gap between two chunks.
        phase = 'idle';
        clearTimeout(idleTimer);
        idleTimer = setTimeout(() => {
          timedOut = 'idle';
          controller.abort();
        }, idleMs);
        const state = new StreamState();
        for await (const chunk of stream) {
          idleTimer.refresh();
          for (const event of state.accept(chunk)) {
            emitted = true;
            yield event;
          }
        }
        if (state.finishReason === undefined) {
          throw new ModelServiceError(
            `The stream from ${this.baseURL} ended before the model finished (no finish_reason). The connection was probably cut; try again.`,
            { isRetryable: true },
          );
        }
        yield* state.finish();
        return;
      } catch (error) {
        if (signal?.aborted) throw abortReason(signal);
        const failure =
          timedOut === 'answer'
            ? new ModelServiceError(
                `The model endpoint ${this.baseURL} did not answer within ${answerMs} ms. Try again, or raise timeoutMs.`,
                { isRetryable: true, cause: error },
              )
            : timedOut === 'idle'
              ? new ModelServiceError(
                  `The model endpoint ${this.baseURL} sent nothing for ${idleMs} ms and the request was stopped. Try again, or raise streamIdleTimeoutMs.`,
                  { isRetryable: true, cause: error },
                )
              : this.#toServiceError(error);
        if (emitted || !failure.isRetryable || attempt >= this.#retry.maxRetries) throw failure;
        const wait = retryDelay(attempt, this.#retry, retryAfterOf(error));
        await sleep(wait, signal);
      } finally {
        clearTimeout(idleTimer);
        signal?.removeEventListener('abort', relay);
      }
    }
  }

  #body(request: ChatRequest): OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming {
    const options = this.#options;
    const temperature = request.temperature ?? options.temperature;
    const maxTokens = request.maxTokens ?? options.maxTokens;
    const seed = request.seed ?? options.seed;
    const tools = request.tools && request.tools.length > 0 ? request.tools : undefined;
    const body: Record<string, unknown> = {
      model: this.modelId,
      messages: request.messages.map(toOpenAIMessage),
      stream: true,
      stream_options: { include_usage: true },
    };
    if (tools) {
      body.tools = tools;
      if (request.parallelToolCalls !== undefined)
        body.parallel_tool_calls = request.parallelToolCalls;
    }
    if (request.toolChoice !== undefined) {
      body.tool_choice =
        typeof request.toolChoice === 'string'
          ? request.toolChoice
          : { type: 'function', function: { name: request.toolChoice.name } };
    }
    if (temperature !== undefined) body.temperature = temperature;
    if (maxTokens !== undefined) body[options.maxTokensField ?? 'max_tokens'] = maxTokens;
    if (seed !== undefined) body.seed = seed;
    if (request.stop && request.stop.length > 0) body.stop = request.stop;
    Object.assign(body, options.extraBody, request.extraBody);
    return body as unknown as OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;
  }

  #toServiceError(error: unknown): ModelServiceError {
    if (error instanceof ModelServiceError) return error;
    const where = this.baseURL;
    if (error instanceof OpenAI.APIConnectionTimeoutError) {
      return new ModelServiceError(
        `The model endpoint ${where} did not answer in time. Try again, or raise timeoutMs.`,
        { cause: error, isRetryable: true },
      );
    }
    if (error instanceof OpenAI.APIConnectionError) {
      return new ModelServiceError(
        `Could not reach the model endpoint ${where}: ${describeError(error.cause ?? error)}. Check OPENAI_BASE_URL and that the server is running.`,
        { cause: error, isRetryable: true },
      );
    }
    if (error instanceof OpenAI.APIError && error.status !== undefined) {
      const status = error.status;
      const detail = describeError(
        error.error && typeof error.error === 'object' && 'message' in error.error
          ? (error.error as { message: unknown }).message
          : error.message,
      );
      const advice =
        status === 401 || status === 403
          ? 'Check OPENAI_API_KEY.'
          : status === 404
            ? `Check the model name "${this.modelId}" (QUIVER_MODEL) and the base URL.`
            : status === 429
              ? 'The endpoint is rate-limiting; wait and try again.'
              : status >= 500
                ? 'The endpoint failed; try again later.'
                : 'Check the request.';
      return new ModelServiceError(
        `The model endpoint ${where} answered ${status}: ${detail}. ${advice}`,
        {
          cause: error,
          statusCode: status,
          body: error.error,
          isRetryable: status === 408 || status === 409 || status === 429 || status >= 500,
        },
      );
    }
    // Anything else thrown while reading the body (socket reset, "terminated", bad SSE).
    return new ModelServiceError(
      `The connection to the model endpoint ${where} failed mid-response: ${describeError(error)}. Try again.`,
      { cause: error, isRetryable: true },
    );
  }
}

function retryAfterOf(error: unknown): number | undefined {
  if (error instanceof OpenAI.APIError) return parseRetryAfter(error.headers);
  if (error instanceof ModelServiceError && error.cause instanceof OpenAI.APIError)
    return parseRetryAfter(error.cause.headers);
  return undefined;
}

/** Collects a streamed completion: text, reasoning, tool-call fragments by index, usage. */
class StreamState {
  text = '';
  reasoning = '';
  finishReason: FinishReason | undefined;
  usage: TokenUsage | undefined;
  readonly calls: { id?: string; name: string; arguments: string }[] = [];

  *accept(chunk: OpenAI.Chat.Completions.ChatCompletionChunk): Generator<ChatStreamEvent> {
    if (chunk.usage) {
      this.usage = {
        promptTokens: chunk.usage.prompt_tokens ?? 0,
        completionTokens: chunk.usage.completion_tokens ?? 0,
        totalTokens:
          chunk.usage.total_tokens ??
          (chunk.usage.prompt_tokens ?? 0) + (chunk.usage.completion_tokens ?? 0),
      };
    }
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const delta = choice.delta ?? {};
    const reasoning =
      (delta as { reasoning_content?: unknown; reasoning?: unknown }).reasoning_content ??
      (delta as { reasoning?: unknown }).reasoning;
    if (typeof reasoning === 'string' && reasoning.length > 0) {
      this.reasoning += reasoning;
      yield { type: 'reasoning-delta', text: reasoning };
    }
    if (typeof delta.content === 'string' && delta.content.length > 0) {
      this.text += delta.content;
      yield { type: 'text-delta', text: delta.content };
    }
    for (const fragment of delta.tool_calls ?? []) yield this.#toolFragment(fragment);
    if (choice.finish_reason) this.finishReason = mapFinishReason(choice.finish_reason);
  }

  #toolFragment(fragment: ChunkToolCall): ChatStreamEvent {
    const index = typeof fragment.index === 'number' ? fragment.index : this.calls.length;
    let call = this.calls[index];
    if (!call) {
      call = { name: '', arguments: '' };
      this.calls[index] = call;
    }
    if (fragment.id) call.id ??= fragment.id;
    const name = fragment.function?.name;
    // Some servers repeat the full name in every fragment; others send it once.
    if (name && call.name !== name)
      call.name = call.name === '' ? name : call.name.endsWith(name) ? call.name : call.name + name;
    const argumentsDelta = fragment.function?.arguments ?? '';
    call.arguments += argumentsDelta;
    return {
      type: 'tool-call-delta',
      index,
      ...(fragment.id ? { id: fragment.id } : {}),
      ...(name ? { name } : {}),
      argumentsDelta,
    };
  }

  *finish(): Generator<ChatStreamEvent> {
    const toolCalls: ToolCall[] = [];
    this.calls.forEach((call, index) => {
      if (!call || call.name === '') return;
      toolCalls.push({
        id: call.id ?? `call_${index}_${Math.random().toString(36).slice(2, 10)}`,
        name: call.name,
        arguments: call.arguments,
      });
    });
    for (const toolCall of toolCalls) yield { type: 'tool-call', toolCall };
    const message: AssistantMessage = {
      role: 'assistant',
      content: this.text === '' && toolCalls.length > 0 ? null : this.text,
    };
    if (toolCalls.length > 0) {
      message.tool_calls = toolCalls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      }));
    }
    if (this.reasoning !== '') message.reasoning_content = this.reasoning;
    const finishReason: FinishReason =
      toolCalls.length > 0 && this.finishReason === 'stop'
        ? 'tool_calls'
        : (this.finishReason ?? 'other');
    yield { type: 'finish', finishReason, message, ...(this.usage ? { usage: this.usage } : {}) };
  }
}

function mapFinishReason(reason: string): FinishReason {
  switch (reason) {
    case 'stop':
    case 'length':
    case 'tool_calls':
    case 'content_filter':
      return reason;
    case 'function_call':
      return 'tool_calls';
    default:
      return 'other';
  }
}

/** Our message shape is OpenAI's; only parts the API cannot take are rewritten. */
function toOpenAIMessage(message: ChatMessage): OpenAIMessage {
  switch (message.role) {
    case 'system':
      return message as OpenAIMessage;
    case 'user':
      return typeof message.content === 'string'
        ? (message as OpenAIMessage)
        : ({ ...message, content: message.content.map(toOpenAIPart) } as OpenAIMessage);
    case 'assistant': {
      // Providers reject `reasoning_content` in requests; it was for the user, not the model.
      const { reasoning_content: _reasoning, ...rest } = message;
      return rest as OpenAIMessage;
    }
    case 'tool':
      return typeof message.content === 'string'
        ? (message as OpenAIMessage)
        : ({
            ...message,
            content: message.content.map(toOpenAIPart).filter((part) => part.type === 'text'),
          } as OpenAIMessage);
  }
}

/** A file part the API cannot read (a local path or URL) becomes a line of text naming it. */
function toOpenAIPart(part: ContentPart): ContentPart {
  if (part.type !== 'file') return part;
  const { file } = part;
  if (file.file_id !== undefined || file.file_data !== undefined) {
    return {
      type: 'file',
      file: {
        ...(file.file_id ? { file_id: file.file_id } : {}),
        ...(file.file_data ? { file_data: file.file_data } : {}),
        ...(file.filename ? { filename: file.filename } : {}),
      },
    };
  }
  return { type: 'text', text: `[file: ${file.filename ?? file.path ?? file.url ?? ''}]` };
}

/**
 * The message of anything thrown. Not `instanceof Error`: errors raised by Node's fetch come from
 * another realm under test runners (jest's vm contexts), and would print as `{}`.
 */
function describeError(error: unknown): string {
  if (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { message?: unknown }).message === 'string'
  ) {
    return (error as { message: string }).message;
  }
  return typeof error === 'string' ? error : String(error);
}
