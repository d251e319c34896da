import type { ChatMessage } from '@quiver/core';

/**
 * Put the agent's system text before the caller's system message (string or multimodal), or
 * insert a system message when there is none. Qwen-Agent's rule.
 *
 * @param messages - the conversation (not modified)
 * @param systemText - the agent's system text; empty to leave the messages as they are
 * @returns the conversation with the merged system message first
 */
export function mergeSystemMessage(
  messages: readonly ChatMessage[],
  systemText: string,
): ChatMessage[] {
  if (systemText === '') return messages.slice();
  const first = messages[0];
  if (first?.role !== 'system') return [{ role: 'system', content: systemText }, ...messages];
  const merged: ChatMessage =
    typeof first.content === 'string'
      ? {
          ...first,
          content: first.content === '' ? systemText : `${systemText}\n\n${first.content}`,
        }
      : { ...first, content: [{ type: 'text', text: `${systemText}\n\n` }, ...first.content] };
  return [merged, ...messages.slice(1)];
}

/** @internal Append text to the system message (first message), creating one when missing. */
export function appendToSystemMessage(
  messages: readonly ChatMessage[],
  text: string,
): ChatMessage[] {
  if (text === '') return messages.slice();
  const first = messages[0];
  if (first?.role !== 'system') return [{ role: 'system', content: text }, ...messages];
  const merged: ChatMessage =
    typeof first.content === 'string'
      ? { ...first, content: first.content === '' ? text : `${first.content}\n\n${text}` }
      : { ...first, content: [...first.content, { type: 'text', text: `\n\n${text}` }] };
  return [merged, ...messages.slice(1)];
}
