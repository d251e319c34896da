import { countTokens, decode, encode } from 'gpt-tokenizer';

/**
 * Number of tokens in `text` under the o200k_base encoding (GPT-4o and later); other models'
 * tokenizers differ by a few percent, close enough for a context budget.
 */
export function countTextTokens(text: string): number {
  return text.length === 0 ? 0 : countTokens(text);
}

/** `text` cut to at most `maxTokens` tokens (on a token boundary). */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return '';
  const tokens = encode(text);
  return tokens.length <= maxTokens ? text : decode(tokens.slice(0, maxTokens));
}
