import type { ChatMessage } from '@quiver/core';
import { messageText } from '@quiver/core';
import { countTokens } from 'gpt-tokenizer';

/** Counts the tokens of a text. */
export type TokenCounter = (text: string) => number;

/**
 * The default counter: OpenAI's `o200k_base` BPE (gpt-4o, gpt-4.1, o-series) through
 * `gpt-tokenizer`. Other model families tokenise differently, usually within ±20 % for English
 * and CJK text; pass your model's own counter where the margin matters.
 */
export const defaultTokenCounter: TokenCounter = (text) =>
  text.length === 0 ? 0 : countTokens(text);

/** Tokens a chat format adds per message (role markers, separators), as OpenAI documents it. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/** Tokens an image part costs at most in OpenAI's accounting of a high-detail tile set. */
const IMAGE_TOKENS = 765;

/**
 * Count the tokens one chat message costs in a request: its text, tool call names and arguments,
 * a fixed overhead per message and per image.
 *
 * @param message - the message
 * @param counter - the token counter (default: o200k_base)
 * @returns the token count
 */
export function countMessageTokens(
  message: ChatMessage,
  counter: TokenCounter = defaultTokenCounter,
): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS + counter(messageText(message));
  if (Array.isArray(message.content)) {
    for (const part of message.content) if (part.type === 'image_url') tokens += IMAGE_TOKENS;
  }
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      tokens +=
        MESSAGE_OVERHEAD_TOKENS + counter(call.function.name) + counter(call.function.arguments);
    }
    if (message.reasoning_content) tokens += counter(message.reasoning_content);
  }
  return tokens;
}

/**
 * @internal An upper bound of a message's tokens without tokenising: a BPE token is at least one
 * UTF-8 byte, so bytes (plus overheads) never undercount. Lets the budget skip the tokenizer when
 * a conversation obviously fits.
 */
export function messageTokenUpperBound(message: ChatMessage): number {
  let bound = MESSAGE_OVERHEAD_TOKENS + Buffer.byteLength(messageText(message), 'utf8');
  if (Array.isArray(message.content)) {
    for (const part of message.content) if (part.type === 'image_url') bound += IMAGE_TOKENS;
  }
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      bound +=
        MESSAGE_OVERHEAD_TOKENS +
        Buffer.byteLength(call.function.name + call.function.arguments, 'utf8');
    }
    if (message.reasoning_content) bound += Buffer.byteLength(message.reasoning_content, 'utf8');
  }
  return bound;
}
