import type { TokenUsage } from '@quiver/core';

/** A tool call a scripted model makes. */
export interface ScriptedToolCall {
  name: string;
  /** A JSON string (sent as written, malformed or not) or an object (serialised). */
  arguments: string | Record<string, unknown>;
  /** Call id. Default `call_<turn>_<index>`. */
  id?: string;
}

/** One scripted answer: what the model streams. */
export interface ScriptedCompletion {
  text?: string;
  /** Reasoning streamed before the text (as `reasoning_content`). */
  reasoning?: string;
  toolCalls?: ScriptedToolCall[];
  /** Default: `tool_calls` when there are calls, else `stop` (or `stop` when a stop sequence cut the text). */
  finishReason?: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  /** Token usage to report; `false` for none. Default: estimated (4 characters a token). */
  usage?: Partial<TokenUsage> | false;
  /** Characters per streamed fragment of text and of each call's arguments. Default 16. */
  chunkSize?: number;
  /** Close the connection (or fail the stream) after this many chunks. */
  dropAfterChunks?: number;
  /** Wait between chunks, in milliseconds. Default 0. */
  chunkDelayMs?: number;
}

/** An HTTP error answer (status and JSON body), e.g. a 429 with `Retry-After`. */
export interface ScriptedError {
  status: number;
  /** Default: OpenAI's error shape `{ error: { message, type, code } }`. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** The connection is closed before any answer. */
export interface ScriptedDrop {
  drop: true;
}

/** No answer at all until the client gives up (timeouts). */
export interface ScriptedHang {
  hang: true;
}

/** What a scripted model or test server does for one request. */
export type ScriptedReply = ScriptedCompletion | ScriptedError | ScriptedDrop | ScriptedHang;

/** A request as the scripted model or server received it. */
export interface RecordedRequest {
  /** The JSON body (OpenAI Chat Completions shape for the server; the ChatRequest for the model). */
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  path: string;
}

/** The replies, in order, or a function choosing one per request. */
export type Script =
  | readonly ScriptedReply[]
  | ((request: RecordedRequest, index: number) => ScriptedReply | Promise<ScriptedReply>);

/** @internal */
export function isErrorReply(reply: ScriptedReply): reply is ScriptedError {
  return typeof (reply as ScriptedError).status === 'number';
}

/** @internal */
export function isDropReply(reply: ScriptedReply): reply is ScriptedDrop {
  return (reply as ScriptedDrop).drop === true;
}

/** @internal */
export function isHangReply(reply: ScriptedReply): reply is ScriptedHang {
  return (reply as ScriptedHang).hang === true;
}

/** @internal Split into fragments of `size` characters (code points, so no broken surrogates). */
export function fragments(text: string, size: number): string[] {
  if (text === '') return [];
  if (!Number.isFinite(size) || size >= text.length) return [text];
  const characters = Array.from(text);
  const out: string[] = [];
  for (let index = 0; index < characters.length; index += size)
    out.push(characters.slice(index, index + size).join(''));
  return out;
}

/** @internal Cut the text at the first stop sequence, as servers do. */
export function applyStop(text: string, stop: unknown): { text: string; stopped: boolean } {
  const sequences =
    typeof stop === 'string'
      ? [stop]
      : Array.isArray(stop)
        ? stop.filter((item): item is string => typeof item === 'string')
        : [];
  let cut = -1;
  for (const sequence of sequences) {
    const index = sequence === '' ? -1 : text.indexOf(sequence);
    if (index >= 0 && (cut < 0 || index < cut)) cut = index;
  }
  return cut < 0 ? { text, stopped: false } : { text: text.slice(0, cut), stopped: true };
}

/** @internal The arguments string of a scripted call. */
export function argumentsText(call: ScriptedToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

/** @internal Usage for a completion: scripted, or estimated at 4 characters a token. */
export function scriptedUsage(
  reply: ScriptedCompletion,
  promptCharacters: number,
  outputCharacters: number,
): TokenUsage | undefined {
  if (reply.usage === false) return undefined;
  const promptTokens = reply.usage?.promptTokens ?? Math.ceil(promptCharacters / 4);
  const completionTokens = reply.usage?.completionTokens ?? Math.ceil(outputCharacters / 4);
  return {
    promptTokens,
    completionTokens,
    totalTokens: reply.usage?.totalTokens ?? promptTokens + completionTokens,
  };
}
