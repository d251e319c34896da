/** Turns text into tokens and back; what token budgets are measured with. */
import { loadModule } from './load-module.js';
import type * as GptTokenizer from 'gpt-tokenizer';

type GptTokenizerModule = typeof GptTokenizer;

export interface Tokenizer {
  readonly name: string;
  encode(text: string): number[];
  decode(tokens: number[]): string;
}

/** BPE encodings {@link gptTokenizer} can load. */
export type GptEncodingName = 'o200k_base' | 'cl100k_base';

const loaded = new Map<GptEncodingName, Promise<Tokenizer>>();

/**
 * Load an OpenAI BPE tokenizer (from `gpt-tokenizer`): `o200k_base` (GPT-4o, GPT-4.1, o-series;
 * the default) or `cl100k_base` (GPT-4, GPT-3.5). Loaded on first use (it takes about half a
 * second) and shared afterwards. Close enough for budgeting other models' context too.
 *
 * @param encoding - which encoding; default `o200k_base`
 * @returns the tokenizer
 * @example
 * ```ts
 * const tokenizer = await gptTokenizer();
 * tokenizer.encode('hello world').length; // 2
 * ```
 */
export function gptTokenizer(encoding: GptEncodingName = 'o200k_base'): Promise<Tokenizer> {
  let promise = loaded.get(encoding);
  if (promise === undefined) {
    promise = (
      encoding === 'cl100k_base'
        ? loadModule<GptTokenizerModule>('gpt-tokenizer/encoding/cl100k_base')
        : loadModule<GptTokenizerModule>('gpt-tokenizer')
    ).then((module) => {
      const api = module as unknown as {
        encode(text: string): number[];
        decode(tokens: number[]): string;
      };
      return Object.freeze({
        name: encoding,
        encode: (text: string) => api.encode(text),
        decode: (tokens: number[]) => api.decode(tokens),
      });
    });
    // A failed load may be retried later (e.g. after installing the package).
    promise.catch(() => loaded.delete(encoding));
    loaded.set(encoding, promise);
  }
  return promise;
}
