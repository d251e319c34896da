import type { ChatMessage, Language } from '@quiver/core';
import type { TokenCounter } from './token-counter.js';
import {
  countMessageTokens,
  defaultTokenCounter,
  messageTokenUpperBound,
} from './token-counter.js';

/** Options of {@link fitToContextWindow}. */
export interface ContextBudgetOptions {
  /** The model's context window in tokens. */
  contextWindow: number;
  /** Tokens kept free for the answer (and tool schemas). Default 1024. */
  reserveTokens?: number;
  /** Token counter. Default: o200k_base through gpt-tokenizer. */
  counter?: TokenCounter;
  /** Language of the note added to the system message. Default `en`. */
  language?: Language;
}

/** What {@link fitToContextWindow} did. */
export interface ContextBudgetResult {
  /** The messages to send: system first, then the latest turns that fit. */
  messages: ChatMessage[];
  /** How many messages were left out (0 when everything fit). */
  droppedMessages: number;
  /** Tokens of the messages sent (counted with the counter; an upper bound when nothing was dropped). */
  tokens: number;
  /** True when even the system message and the latest turn alone exceed the budget. */
  overBudget: boolean;
}

/**
 * Trim a conversation to a model's context window. The system message and the latest turns are
 * kept; an assistant message with tool calls and the tool messages answering it are kept or
 * dropped together (an API rejects a tool result without its call); the kept history starts at a
 * user message where possible; and a note telling the model that earlier messages were left out
 * is added to the system message.
 *
 * @param messages - the full conversation (system message, if any, first)
 * @param options - the window and the counter
 * @returns the messages to send and what was dropped
 *
 * @example
 * ```ts
 * const { messages, droppedMessages } = fitToContextWindow(history, { contextWindow: 8192 });
 * ```
 */
export function fitToContextWindow(
  messages: readonly ChatMessage[],
  options: ContextBudgetOptions,
): ContextBudgetResult {
  const budget = options.contextWindow - (options.reserveTokens ?? 1024);
  // Fast path: by bytes the conversation fits, so by tokens it certainly does.
  let bound = 0;
  for (const message of messages) bound += messageTokenUpperBound(message);
  if (bound <= budget)
    return { messages: [...messages], droppedMessages: 0, tokens: bound, overBudget: false };

  const counter = options.counter ?? defaultTokenCounter;
  const system = messages[0]?.role === 'system' ? messages[0] : undefined;
  const history = system ? messages.slice(1) : messages.slice();
  const units = groupUnits(history);
  const noteTokens = 40;
  let used = (system ? countMessageTokens(system, counter) : 0) + noteTokens;
  let firstKept = units.length;
  for (let index = units.length - 1; index >= 0; index--) {
    const unit = units[index]!;
    const cost = unit.reduce((sum, message) => sum + countMessageTokens(message, counter), 0);
    // The latest unit is always kept: a request without the question is useless.
    if (used + cost > budget && index < units.length - 1) break;
    used += cost;
    firstKept = index;
  }
  // Start the kept history at a user message when one is kept at all.
  let start = firstKept;
  while (start < units.length - 1 && units[start]![0]!.role !== 'user') {
    if (!units.slice(start + 1).some((unit) => unit[0]!.role === 'user')) break;
    used -= units[start]!.reduce((sum, message) => sum + countMessageTokens(message, counter), 0);
    start++;
  }
  const kept = units.slice(start).flat();
  const dropped = history.length - kept.length;
  if (dropped === 0) {
    return {
      messages: [...messages],
      droppedMessages: 0,
      tokens: used - noteTokens,
      overBudget: used - noteTokens > budget,
    };
  }
  const note = droppedNote(dropped, options.language ?? 'en');
  const noted: ChatMessage = system
    ? typeof system.content === 'string'
      ? { ...system, content: `${system.content}\n\n${note}` }
      : { ...system, content: [...system.content, { type: 'text', text: `\n\n${note}` }] }
    : { role: 'system', content: note };
  return {
    messages: [noted, ...kept],
    droppedMessages: dropped,
    tokens: used,
    overBudget: used > budget,
  };
}

/** Split history into units that must stay together: an assistant turn with its tool results. */
function groupUnits(history: readonly ChatMessage[]): ChatMessage[][] {
  const units: ChatMessage[][] = [];
  for (const message of history) {
    const previous = units[units.length - 1];
    if (message.role === 'tool' && previous !== undefined) {
      const head = previous[0]!;
      if (head.role === 'assistant' && (head.tool_calls?.length ?? 0) > 0) {
        previous.push(message);
        continue;
      }
    }
    units.push([message]);
  }
  return units;
}

function droppedNote(count: number, language: Language): string {
  return language === 'zh'
    ? `（为适应上下文长度，省略了更早的 ${count} 条消息。）`
    : `(${count} earlier message${count === 1 ? ' was' : 's were'} left out to fit the context window.)`;
}
