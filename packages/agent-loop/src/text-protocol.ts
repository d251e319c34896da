import type {
  AssistantMessage,
  ChatMessage,
  ChatModel,
  ChatRequest,
  ChatStreamEvent,
  Language,
  OpenAITool,
  ToolCall,
} from '@quiver/core';
import { messageText } from '@quiver/core';
import { parseToolArguments } from '@quiver/core-registry';
import { appendToSystemMessage } from './system-message.js';
import { detectLanguage } from './language.js';

/**
 * Text protocols for models without native tool calling:
 * - `qwen`: Qwen-Agent's `✿FUNCTION✿: name` / `✿ARGS✿: {json}` / `✿RESULT✿: …` markers;
 * - `hermes`: Nous Hermes / Qwen2.5 `<tool_call>{"name": …, "arguments": {…}}</tool_call>`.
 */
export type TextToolProtocol = 'qwen' | 'hermes';

/** A tool call found in the text. */
export interface ParsedTextToolCall {
  name: string;
  /** The arguments as a JSON string (repaired when the model's JSON was malformed, raw when it could not be). */
  arguments: string;
}

/** The name given to a call whose tool name could not be read; the toolkit answers "not found" with the list. */
export const UNREADABLE_TOOL_NAME = 'unreadable_tool_call';

const QWEN = {
  function: '✿FUNCTION✿',
  args: '✿ARGS✿',
  result: '✿RESULT✿',
  return: '✿RETURN✿',
} as const;
const HERMES = { open: '<tool_call>', close: '</tool_call>' } as const;

/**
 * Incremental parser of a streamed reply in a text tool protocol: `push` text as it arrives and
 * get back only what the user may see; tool calls are collected, protocol markers never leak
 * (a chunk ending in half a marker is held back until the next chunk decides).
 *
 * @example
 * ```ts
 * const parser = new TextProtocolParser('hermes');
 * let visible = parser.push('Let me look.<tool_') + parser.push('call>{"name":"search","arguments":{"q":"x"}}</tool_call>');
 * visible += parser.end();
 * parser.calls; // [{ name: 'search', arguments: '{"q":"x"}' }]
 * ```
 */
export class TextProtocolParser {
  readonly protocol: TextToolProtocol;
  /** Calls completed so far, in order. */
  readonly calls: ParsedTextToolCall[] = [];
  #buffer = '';
  #state: 'text' | 'name' | 'args' | 'result' | 'call' = 'text';
  #name = '';
  #body = '';
  /** Just after a marker: its `:` may still arrive in the next chunk. */
  #afterMarker = false;

  constructor(protocol: TextToolProtocol) {
    this.protocol = protocol;
  }

  /** Feed the next piece of text. @returns the text the user may see now */
  push(text: string): string {
    this.#buffer += text;
    return this.protocol === 'qwen' ? this.#qwen(false) : this.#hermes(false);
  }

  /** The stream ended: finish any open call. @returns the last visible text */
  end(): string {
    return this.protocol === 'qwen' ? this.#qwen(true) : this.#hermes(true);
  }

  #qwen(final: boolean): string {
    let visible = '';
    for (;;) {
      const markers =
        this.#state === 'text'
          ? [QWEN.function, QWEN.return, QWEN.result, QWEN.args]
          : this.#state === 'name'
            ? [QWEN.args, QWEN.function, QWEN.result, QWEN.return]
            : this.#state === 'args'
              ? [QWEN.function, QWEN.result, QWEN.return]
              : [QWEN.return, QWEN.function];
      const found = firstMarker(this.#buffer, markers);
      if (!found) {
        const keep = final ? 0 : partialMarkerLength(this.#buffer, markers);
        const ready = this.#buffer.slice(0, this.#buffer.length - keep);
        this.#buffer = this.#buffer.slice(this.#buffer.length - keep);
        visible += this.#consume(ready);
        if (final) visible += this.#closeQwen();
        return visible;
      }
      visible += this.#consume(this.#buffer.slice(0, found.index));
      this.#buffer = this.#buffer.slice(found.index + found.marker.length);
      this.#afterMarker = true;
      switch (found.marker) {
        case QWEN.function:
          this.#closeQwen();
          this.#state = 'name';
          this.#name = '';
          break;
        case QWEN.args:
          if (this.#state === 'name') {
            this.#state = 'args';
            this.#body = '';
          }
          break;
        case QWEN.result:
          this.#closeQwen();
          // The model is inventing a result: hide it until it returns to prose.
          this.#state = 'result';
          break;
        case QWEN.return:
          this.#closeQwen();
          this.#state = 'text';
          break;
      }
    }
  }

  /** Route text to where the state says it belongs. @returns the visible part */
  #consume(text: string): string {
    if (this.#afterMarker && this.protocol === 'qwen') {
      text = text.replace(/^\s*[:：]?\s*/, '');
      if (text === '') return '';
      this.#afterMarker = false;
    }
    switch (this.#state) {
      case 'text':
        return text;
      case 'name':
        this.#name += text;
        return '';
      case 'args':
      case 'call':
        this.#body += text;
        return '';
      case 'result':
        return '';
    }
  }

  #closeQwen(): string {
    if (this.#state === 'name' || this.#state === 'args') {
      const name = this.#name.trim().split('\n')[0]!.trim();
      this.calls.push({
        name: name === '' ? UNREADABLE_TOOL_NAME : name,
        arguments: normaliseArguments(this.#state === 'args' ? this.#body : ''),
      });
      this.#state = 'text';
      this.#name = '';
      this.#body = '';
    }
    return '';
  }

  #hermes(final: boolean): string {
    let visible = '';
    for (;;) {
      const marker = this.#state === 'call' ? HERMES.close : HERMES.open;
      const index = this.#buffer.indexOf(marker);
      if (index < 0) {
        const keep = final ? 0 : partialMarkerLength(this.#buffer, [marker]);
        const ready = this.#buffer.slice(0, this.#buffer.length - keep);
        this.#buffer = this.#buffer.slice(this.#buffer.length - keep);
        visible += this.#consume(ready);
        if (final && this.#state === 'call') this.#closeHermes();
        return visible;
      }
      visible += this.#consume(this.#buffer.slice(0, index));
      this.#buffer = this.#buffer.slice(index + marker.length);
      if (this.#state === 'call') this.#closeHermes();
      else {
        this.#state = 'call';
        this.#body = '';
      }
    }
  }

  #closeHermes(): void {
    this.calls.push(parseHermesCall(this.#body));
    this.#state = 'text';
    this.#body = '';
  }
}

/** Read the JSON inside `<tool_call>…</tool_call>`, leniently. */
function parseHermesCall(body: string): ParsedTextToolCall {
  const parsed = parseToolArguments(body);
  if (parsed.ok && typeof parsed.value.name === 'string' && parsed.value.name !== '') {
    const args = parsed.value.arguments ?? parsed.value.parameters ?? {};
    return {
      name: parsed.value.name,
      arguments: typeof args === 'string' ? normaliseArguments(args) : JSON.stringify(args),
    };
  }
  // Too broken to parse as a whole: find the name and hand the arguments text to the toolkit,
  // whose lenient parser repairs what can be repaired and explains the rest to the model.
  const name = /["']?name["']?\s*:\s*["']([^"']+)["']/.exec(body)?.[1];
  const rawArgs =
    /["']?(?:arguments|parameters)["']?\s*:\s*([\s\S]*)$/.exec(body)?.[1]?.trim() ?? '';
  return {
    name: name ?? UNREADABLE_TOOL_NAME,
    arguments: normaliseArguments(name ? dropOuterClose(rawArgs) : body.trim()),
  };
}

/** The arguments of `"arguments": {...}}` run to the end of the outer object: drop its brace. */
function dropOuterClose(text: string): string {
  const opens = (text.match(/[{[]/g) ?? []).length;
  const closes = (text.match(/[}\]]/g) ?? []).length;
  return closes > opens && text.endsWith('}') ? text.slice(0, -1).trim() : text;
}

/** Re-serialise arguments that parse (leniently); keep the raw text when they do not. */
function normaliseArguments(raw: string): string {
  const text = raw.trim();
  if (text === '') return '{}';
  const parsed = parseToolArguments(text);
  return parsed.ok ? JSON.stringify(parsed.value) : text;
}

function firstMarker(
  text: string,
  markers: readonly string[],
): { index: number; marker: string } | undefined {
  let best: { index: number; marker: string } | undefined;
  for (const marker of markers) {
    const index = text.indexOf(marker);
    if (index >= 0 && (best === undefined || index < best.index)) best = { index, marker };
  }
  return best;
}

/** Length of the longest suffix of `text` that is a proper prefix of a marker (held back). */
function partialMarkerLength(text: string, markers: readonly string[]): number {
  let longest = 0;
  for (const marker of markers) {
    for (let length = Math.min(marker.length - 1, text.length); length > longest; length--) {
      if (text.endsWith(marker.slice(0, length))) {
        longest = length;
        break;
      }
    }
  }
  return longest;
}

// ------------------------------------------------------------------ prompts and history

/** The system prompt that describes the tools in a text protocol (zh and en). */
export function textProtocolSystemPrompt(
  tools: readonly OpenAITool[],
  protocol: TextToolProtocol,
  language: Language,
): string {
  if (protocol === 'hermes') {
    const signatures = tools.map((tool) => JSON.stringify(tool)).join('\n');
    return language === 'zh'
      ? `# 工具\n\n你可以调用一个或多个函数来完成用户的请求。\n\n函数签名在 <tools></tools> XML 标签中给出：\n<tools>\n${signatures}\n</tools>\n\n每次调用函数时，在 <tool_call></tool_call> XML 标签中返回一个包含函数名和参数的 JSON 对象：\n<tool_call>\n{"name": <函数名>, "arguments": <参数 JSON 对象>}\n</tool_call>`
      : `# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n${signatures}\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>`;
  }
  const names = tools.map((tool) => tool.function.name).join(',');
  const list = tools
    .map((tool) => {
      const { name, description, parameters } = tool.function;
      return language === 'zh'
        ? `### ${name}\n\n${name}: ${description} 输入参数：${JSON.stringify(parameters)} 此工具的输入应为JSON对象。`
        : `### ${name}\n\n${name}: ${description} Parameters: ${JSON.stringify(parameters)} Format the arguments as a JSON object.`;
    })
    .join('\n\n');
  return language === 'zh'
    ? `# 工具\n\n## 你拥有如下工具：\n\n${list}\n\n## 你可以在回复中插入零次、一次或多次以下命令以调用工具：\n\n${QWEN.function}: 工具名称，必须是[${names}]之一。\n${QWEN.args}: 工具输入\n${QWEN.result}: 工具结果\n${QWEN.return}: 根据工具结果进行回复`
    : `# Tools\n\n## You have access to the following tools:\n\n${list}\n\n## When you need to call a tool, please insert the following command in your reply, which can be called zero or multiple times according to your needs:\n\n${QWEN.function}: The tool to use, should be one of [${names}]\n${QWEN.args}: The input of the tool\n${QWEN.result}: Tool results\n${QWEN.return}: Reply based on tool results`;
}

/**
 * Rewrite a conversation with native tool calls into the text protocol: an assistant message's
 * tool calls become protocol text, and tool results become a user message in the protocol's
 * result format (APIs without tool support reject `tool` messages).
 */
export function toTextProtocolMessages(
  messages: readonly ChatMessage[],
  protocol: TextToolProtocol,
): ChatMessage[] {
  const out: ChatMessage[] = [];
  let results: string[] = [];
  const flushResults = () => {
    if (results.length === 0) return;
    out.push({ role: 'user', content: results.join('\n') });
    results = [];
  };
  for (const message of messages) {
    if (message.role === 'tool') {
      const text = messageText(message);
      results.push(
        protocol === 'qwen'
          ? `${QWEN.result}: ${text}`
          : `<tool_response>\n${text}\n</tool_response>`,
      );
      continue;
    }
    flushResults();
    if (message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 0) {
      const calls = message.tool_calls!.map((call) =>
        protocol === 'qwen'
          ? `${QWEN.function}: ${call.function.name}\n${QWEN.args}: ${call.function.arguments}`
          : `${HERMES.open}\n{"name": ${JSON.stringify(call.function.name)}, "arguments": ${jsonOrString(call.function.arguments)}}\n${HERMES.close}`,
      );
      const prose = messageText(message);
      out.push({
        role: 'assistant',
        content: [prose, ...calls].filter((part) => part !== '').join('\n'),
        ...(message.name !== undefined ? { name: message.name } : {}),
      });
      continue;
    }
    out.push(message);
  }
  flushResults();
  return out;
}

function jsonOrString(text: string): string {
  try {
    JSON.parse(text);
    return text;
  } catch {
    return JSON.stringify(text);
  }
}

/** Options of {@link TextProtocolChatModel}. */
export interface TextProtocolChatModelOptions {
  protocol: TextToolProtocol;
  /** Language of the tool prompt; detected from the messages when left out. */
  language?: Language;
}

/**
 * Wraps a {@link ChatModel} that has no native tool calling: tools are described in the system
 * prompt, history is rewritten into the protocol, and calls are parsed from the streamed text as
 * it arrives. To the caller it behaves like a model with native tool calls: `text-delta` events
 * carry only prose, `tool-call` events carry the calls, `finish` carries a clean message.
 *
 * @example
 * ```ts
 * const model = new TextProtocolChatModel(new OpenAIChatModel(), { protocol: 'hermes' });
 * ```
 */
export class TextProtocolChatModel implements ChatModel {
  readonly modelId: string;
  readonly contextWindow: number | undefined;
  readonly inner: ChatModel;
  readonly protocol: TextToolProtocol;
  readonly #language: Language | undefined;

  constructor(inner: ChatModel, options: TextProtocolChatModelOptions) {
    this.inner = inner;
    this.modelId = inner.modelId;
    this.contextWindow = inner.contextWindow;
    this.protocol = options.protocol;
    this.#language = options.language;
  }

  /** Stream one completion with tools in the text protocol; events look like native tool calling. */
  async *stream(request: ChatRequest): AsyncIterable<ChatStreamEvent> {
    const tools = request.tools ?? [];
    const language = this.#language ?? detectLanguage(request.messages);
    let messages = toTextProtocolMessages(request.messages, this.protocol);
    if (tools.length > 0)
      messages = appendToSystemMessage(
        messages,
        textProtocolSystemPrompt(tools, this.protocol, language),
      );
    const stop = [
      ...(request.stop ?? []),
      this.protocol === 'qwen' ? QWEN.result : '<tool_response>',
    ];
    const { tools: _tools, toolChoice: _choice, parallelToolCalls: _parallel, ...rest } = request;
    const parser = new TextProtocolParser(this.protocol);
    let text = '';
    // Whitespace is held until prose follows: the blank lines around hidden calls, and at the
    // start and end of the reply, are not shown (the final message is trimmed the same way).
    let held = '';
    const release = (visible: string): string => {
      if (visible === '') return '';
      if (visible.trim() === '') {
        held += visible;
        return '';
      }
      const out = text === '' ? (held + visible).trimStart() : held + visible;
      held = '';
      text += out;
      return out;
    };
    for await (const event of this.inner.stream({ ...rest, messages, stop })) {
      switch (event.type) {
        case 'text-delta': {
          const visible = release(parser.push(event.text));
          if (visible !== '') yield { type: 'text-delta', text: visible };
          break;
        }
        case 'finish': {
          const tail = release(parser.end().trimEnd());
          if (tail !== '') yield { type: 'text-delta', text: tail };
          const native = (event.message.tool_calls ?? []).map((call) => ({
            id: call.id,
            name: call.function.name,
            arguments: call.function.arguments,
          }));
          const calls: ToolCall[] = [
            ...native,
            ...parser.calls.map((call, index) => ({
              id: `call_${index}_${Math.random().toString(36).slice(2, 10)}`,
              ...call,
            })),
          ];
          for (const toolCall of calls) yield { type: 'tool-call', toolCall };
          const content = text.trim();
          const message: AssistantMessage = {
            role: 'assistant',
            content: content === '' && calls.length > 0 ? null : content,
            ...(calls.length > 0
              ? {
                  tool_calls: calls.map((call) => ({
                    id: call.id,
                    type: 'function' as const,
                    function: { name: call.name, arguments: call.arguments },
                  })),
                }
              : {}),
            ...(event.message.reasoning_content !== undefined
              ? { reasoning_content: event.message.reasoning_content }
              : {}),
          };
          yield {
            type: 'finish',
            finishReason: calls.length > 0 ? 'tool_calls' : event.finishReason,
            message,
            ...(event.usage ? { usage: event.usage } : {}),
          };
          break;
        }
        case 'tool-call':
        case 'tool-call-delta':
          // Native calls are gathered from the finish message above.
          break;
        default:
          yield event;
      }
    }
  }
}
