import { describe, expect, it } from '@jest/globals';
import { TextAnalyzer } from '../src/index.js';

describe('TextAnalyzer', () => {
  it('lower-cases, drops stop words and Porter-stems English', () => {
    expect(new TextAnalyzer({ stopWords: 'lucene' }).analyze('The Indexing of Documents')).toEqual([
      'index',
      'document',
    ]);
  });

  it("uses natural's longer stop-word list when asked", () => {
    const text = 'what are the structural problems';
    expect(new TextAnalyzer({ stopWords: 'lucene' }).analyze(text)).toContain('what');
    expect(new TextAnalyzer({ stopWords: 'natural' }).analyze(text)).toEqual([
      'structur',
      'problem',
    ]);
  });

  it('keeps stop words and surface forms when both are switched off', () => {
    expect(
      new TextAnalyzer({ stopWords: 'none', stemming: false }).analyze('The running dogs'),
    ).toEqual(['the', 'running', 'dogs']);
  });

  it('strips possessives and splits on punctuation', () => {
    expect(
      new TextAnalyzer({ stopWords: 'none', stemming: false }).analyze(
        "Alice's wing-tip (span=3.5m)",
      ),
    ).toEqual(['alice', 'wing', 'tip', 'span', '3', '5m']);
  });

  it('turns Chinese runs into overlapping character bigrams', () => {
    expect(new TextAnalyzer().analyze('知识库检索')).toEqual(['知识', '识库', '库检', '检索']);
  });

  it('turns Japanese kana and kanji runs into bigrams and keeps a lone character', () => {
    expect(new TextAnalyzer().analyze('東京タワー')).toEqual(['東京', '京タ', 'タワ', 'ワー']);
    expect(new TextAnalyzer().analyze('水')).toEqual(['水']);
  });

  it('handles mixed CJK and Latin text', () => {
    expect(new TextAnalyzer().analyze('使用HNSW索引')).toEqual(['使用', 'hnsw', '索引']);
  });

  it('drops over-long tokens such as base64 blobs', () => {
    const blob = 'A'.repeat(80);
    expect(new TextAnalyzer().analyze(`key ${blob}`)).toEqual(['kei']);
  });

  it('gives nothing for empty or punctuation-only text', () => {
    expect(new TextAnalyzer().analyze('')).toEqual([]);
    expect(new TextAnalyzer().analyze('?!… --')).toEqual([]);
  });

  it('has a signature that changes with its settings', () => {
    expect(new TextAnalyzer().signature).toBe(new TextAnalyzer().signature);
    expect(new TextAnalyzer({ stemming: false }).signature).not.toBe(new TextAnalyzer().signature);
  });
});
