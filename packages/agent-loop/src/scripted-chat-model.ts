import type {
  AssistantMessage,
  ChatModel,
  ChatRequest,
  ChatStreamEvent,
  ToolCall,
} from '@quiver/core';
import { ModelServiceError, messageText } from '@quiver/core';
import { abortReason, sleep } from './retry-policy.js';
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

/** Options of {@link ScriptedChatModel}. */
export interface ScriptedChatModelOptions {
  /** The replies, in order, or a function choosing one per request. */
  script: Script;
  modelId?: string;
  contextWindow?: number;
}

/**
 * An in-process {@link ChatModel} that plays a script: the same replies the OpenAI test server
 * plays, without HTTP. Streams text and tool-call fragments like a real model, raises
 * `ModelServiceError` for scripted HTTP errors and drops, honours the AbortSignal, applies
 * `stop` sequences, and records every request.
 *
 * @example
 * ```ts
 * const model = new ScriptedChatModel({ script: [
 *   { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
 *   { text: '1 + 2 = 3' },
 * ] });
 * ```
 */
export class ScriptedChatModel implements ChatModel {
  readonly modelId: string;
  readonly contextWindow: number | undefined;
  /** Every request received, in order. */
  readonly requests: ChatRequest[] = [];
  readonly #script: Script;

  constructor(options: ScriptedChatModelOptions) {
    this.#script = options.script;
    this.modelId = options.modelId ?? 'scripted-model';
    this.contextWindow = options.contextWindow;
  }

  /** Play the next scripted reply. @throws ModelServiceError for scripted errors and drops */
  async *stream(request: ChatRequest): AsyncIterable<ChatStreamEvent> {
    const index = this.requests.length;
    this.requests.push(request);
    const reply = await this.#reply(request, index);
    const signal = request.signal;
    if (signal?.aborted) throw abortReason(signal);
    if (isErrorReply(reply)) {
      const body = reply.body ?? {
        error: { message: `scripted error ${reply.status}`, type: 'scripted', code: null },
      };
      throw new ModelServiceError(`The scripted model answered ${reply.status}.`, {
        statusCode: reply.status,
        body,
      });
    }
    if (isDropReply(reply))
      throw new ModelServiceError('The scripted model dropped the connection.', {
        isRetryable: true,
      });
    if (isHangReply(reply)) {
      await new Promise<never>((_resolve, reject) => {
        if (!signal) return;
        signal.addEventListener('abort', () => reject(abortReason(signal)), { once: true });
      });
    }
    yield* this.#play(reply as ScriptedCompletion, request, index);
  }

  async #reply(request: ChatRequest, index: number): Promise<ScriptedReply> {
    const script = this.#script;
    if (typeof script === 'function') {
      const recorded: RecordedRequest = {
        body: request as unknown as Record<string, unknown>,
        headers: {},
        path: 'in-process',
      };
      return script(recorded, index);
    }
    const reply = script[index];
    if (!reply) {
      throw new ModelServiceError(
        `The scripted model has no reply for request ${index + 1} (the script has ${script.length}).`,
        {
          isRetryable: false,
        },
      );
    }
    return reply;
  }

  async *#play(
    reply: ScriptedCompletion,
    request: ChatRequest,
    index: number,
  ): AsyncGenerator<ChatStreamEvent> {
    const size = reply.chunkSize ?? 16;
    const signal = request.signal;
    let sent = 0;
    const step = async () => {
      if (reply.dropAfterChunks !== undefined && sent >= reply.dropAfterChunks) {
        throw new ModelServiceError('The scripted model dropped the connection mid-stream.', {
          isRetryable: true,
        });
      }
      if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs, signal);
      if (signal?.aborted) throw abortReason(signal);
      sent++;
    };
    for (const piece of fragments(reply.reasoning ?? '', size)) {
      await step();
      yield { type: 'reasoning-delta', text: piece };
    }
    const { text } = applyStop(reply.text ?? '', request.stop);
    for (const piece of fragments(text, size)) {
      await step();
      yield { type: 'text-delta', text: piece };
    }
    const calls: ToolCall[] = (reply.toolCalls ?? []).map((call, callIndex) => ({
      id: call.id ?? `call_${index + 1}_${callIndex}`,
      name: call.name,
      arguments: argumentsText(call),
    }));
    for (const [callIndex, call] of calls.entries()) {
      const pieces = fragments(call.arguments, size);
      await step();
      yield {
        type: 'tool-call-delta',
        index: callIndex,
        id: call.id,
        name: call.name,
        argumentsDelta: pieces[0] ?? '',
      };
      for (const piece of pieces.slice(1)) {
        await step();
        yield { type: 'tool-call-delta', index: callIndex, argumentsDelta: piece };
      }
    }
    for (const toolCall of calls) yield { type: 'tool-call', toolCall };
    const message: AssistantMessage = {
      role: 'assistant',
      content: text === '' && calls.length > 0 ? null : text,
    };
    if (calls.length > 0) {
      message.tool_calls = calls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      }));
    }
    if (reply.reasoning) message.reasoning_content = reply.reasoning;
    const promptCharacters = request.messages.reduce(
      (sum, item) => sum + messageText(item).length,
      0,
    );
    const usage = scriptedUsage(
      reply,
      promptCharacters,
      text.length + calls.reduce((sum, call) => sum + call.arguments.length, 0),
    );
    yield {
      type: 'finish',
      finishReason: reply.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop'),
      message,
      ...(usage ? { usage } : {}),
    };
  }
}
