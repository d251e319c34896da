import { countTokens as countO200k, decode, encode } from 'gpt-tokenizer';

// Special-token strings in documents ("<|endoftext|>") are ordinary text here, not control tokens.
const AS_PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Number of tokens of `text` with the `o200k_base` encoding (GPT-4o and later), the
 * tokenizer used for `ParsedDocument.tokenCount` and every chunk bound.
 *
 * @param text - Any text.
 * @returns The exact token count.
 * @example
 * ```ts
 * countTokens('Hello world'); // 2
 * ```
 */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : countO200k(text, AS_PLAIN_TEXT);
}

/** @internal Split `text` into pieces of at most `maxTokens` tokens (last resort for one huge sentence). */
export function splitByTokens(text: string, maxTokens: number): string[] {
  const tokens = encode(text, AS_PLAIN_TEXT);
  const pieces: string[] = [];
  for (let start = 0; start < tokens.length; start += maxTokens) {
    pieces.push(decode(tokens.slice(start, start + maxTokens)));
  }
  return pieces;
}
