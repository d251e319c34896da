import PorterStemmer from 'natural/lib/natural/stemmers/porter_stemmer.js';
import { words as naturalStopWords } from 'natural/lib/natural/util/stopwords.js';

/** Lucene's English stop words (`EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`): short, so little is lost. */
const luceneStopWords = [
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it', 'no', 'not', 'of',
  'on', 'or', 'such', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this', 'to', 'was', 'will', 'with',
]; // prettier-ignore

/** Which stop words to drop: natural's English list, Lucene's shorter list, none, or your own. */
export type StopWords = 'natural' | 'lucene' | 'none' | readonly string[];

/** Options of {@link TextAnalyzer}. */
export interface TextAnalyzerOptions {
  /** Stop words dropped before stemming. Default `'lucene'` (33 words; natural's 170-word list is available as `'natural'`). */
  stopWords?: StopWords;
  /** Apply the Porter stemmer (from `natural`) to Latin-script words. Default `true`. */
  stemming?: boolean;
  /** Tokens longer than this are dropped (base64 blobs, hashes). Default 40. */
  maxTokenLength?: number;
}

// Han, Hiragana, Katakana (with the prolonged-sound mark) and Hangul runs become character bigrams;
// everything else splits on anything that is not a letter, digit or an in-word apostrophe.
const cjk = String.raw`\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc`;
const wordCharacter = String.raw`(?:(?![${cjk}])[\p{L}\p{N}])`;
const tokenPattern = new RegExp(`[${cjk}]+|${wordCharacter}+(?:['’]${wordCharacter}+)*`, 'gu');
const cjkStart = new RegExp(`^[${cjk}]`, 'u');

/**
 * Turns text into index terms: lower-cased words, stop words removed, Porter-stemmed (English),
 * and overlapping character bigrams for Chinese, Japanese and Korean runs (a lone CJK character
 * stays a unigram), so a CJK query matches CJK text without a segmenter.
 *
 * @example
 * ```ts
 * new TextAnalyzer().analyze('Indexing the documents'); // ['index', 'document']
 * new TextAnalyzer().analyze('知识库检索'); // ['知识', '识库', '库检', '检索']
 * ```
 */
export class TextAnalyzer {
  readonly #stopWords: ReadonlySet<string>;
  readonly #stemming: boolean;
  readonly #maxTokenLength: number;
  readonly #stemCache = new Map<string, string>();

  constructor(options: TextAnalyzerOptions = {}) {
    const stopWords = options.stopWords ?? 'lucene';
    this.#stopWords = new Set(
      stopWords === 'lucene'
        ? luceneStopWords
        : stopWords === 'natural'
          ? naturalStopWords
          : stopWords === 'none'
            ? []
            : stopWords.map((word) => word.toLowerCase()),
    );
    this.#stemming = options.stemming ?? true;
    this.#maxTokenLength = options.maxTokenLength ?? 40;
  }

  /** A short description of the settings, stored with an index so a reopened index analyses queries the same way. */
  get signature(): string {
    return `v1;stem=${this.#stemming};stop=${[...this.#stopWords].sort().join(',')};max=${this.#maxTokenLength}`;
  }

  /**
   * Index terms of `text`, in order, with repeats.
   * @param text - Any text; `''` gives `[]`.
   * @returns The terms.
   */
  analyze(text: string): string[] {
    const terms: string[] = [];
    for (const match of text.toLowerCase().matchAll(tokenPattern)) {
      const token = match[0];
      if (cjkStart.test(token)) {
        const characters = [...token];
        if (characters.length === 1) terms.push(token);
        for (let i = 0; i + 1 < characters.length; i++)
          terms.push(characters[i]! + characters[i + 1]!);
        continue;
      }
      const word = token.replace(/['’]s$/u, '');
      if (word.length > this.#maxTokenLength || this.#stopWords.has(word)) continue;
      terms.push(this.#stem(word));
    }
    return terms;
  }

  #stem(word: string): string {
    if (!this.#stemming || !/^[a-z]/.test(word)) return word;
    let stem = this.#stemCache.get(word);
    if (stem === undefined) {
      stem = PorterStemmer.stem(word);
      // The cache only saves work on repeated words; a bound keeps a long-lived process from growing without limit.
      if (this.#stemCache.size > 200_000) this.#stemCache.clear();
      this.#stemCache.set(word, stem);
    }
    return stem;
  }
}
