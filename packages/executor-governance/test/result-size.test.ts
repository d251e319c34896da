import { describe, expect, it } from '@jest/globals';
import type { ToolResponse } from '@quiver/core';
import { Toolkit, defineTool } from '@quiver/core-registry';
import { z } from 'zod';
import { deepFreeze } from './helpers.js';
import {
  governanceOf,
  gptTokenizer,
  looksBinary,
  resultSizeLimit,
  truncateResponse,
} from '../src/index.js';
import { call, textOf } from './helpers.js';

const lines = (count: number, prefix = 'line') =>
  Array.from({ length: count }, (_, index) => `${prefix} ${index} of the document`).join('\n');

describe('truncateResponse (characters)', () => {
  it('keeps head and tail with a marker saying how much was removed', () => {
    const text = lines(2_000);
    const { response, report } = truncateResponse(
      { content: [{ type: 'text', text }] },
      { maxChars: 2_000 },
    );
    const out = textOf(response);
    expect(out.length).toBeLessThanOrEqual(2_000);
    expect(out.startsWith('line 0 of the document')).toBe(true);
    expect(out.endsWith('line 1999 of the document')).toBe(true);
    const removed = Number(
      /\[… ([\d,]+) characters removed of ([\d,]+) …\]/.exec(out)![1]!.replace(/,/g, ''),
    );
    expect(out.length - out.match(/\n\[…[^\]]*\]\n/)![0].length + removed).toBe(text.length);
    expect(report).toEqual({ unit: 'chars', before: text.length, after: out.length });
  });

  it('returns the same response when it fits, and never mutates the input', () => {
    const small: ToolResponse = { content: [{ type: 'text', text: 'short' }] };
    expect(truncateResponse(small, { maxChars: 100 }).response).toBe(small);
    const big = deepFreeze({ content: [{ type: 'text' as const, text: 'x'.repeat(5_000) }] });
    truncateResponse(big, { maxChars: 100 });
    expect(big.content[0]!.text).toHaveLength(5_000);
  });

  it('keeps JSON valid by cutting inside long string fields, not the envelope', () => {
    const value = {
      url: 'https://example.com',
      title: 'Example',
      body: 'word '.repeat(20_000),
      links: ['a', 'b'],
    };
    const { response } = truncateResponse(
      { content: [{ type: 'text', text: JSON.stringify(value) }] },
      { maxChars: 3_000 },
    );
    const text = textOf(response);
    expect(text.length).toBeLessThanOrEqual(3_000);
    const parsed = JSON.parse(text) as typeof value;
    expect(parsed.url).toBe(value.url);
    expect(parsed.title).toBe(value.title);
    expect(parsed.links).toEqual(['a', 'b']);
    expect(parsed.body).toMatch(/^word word[\s\S]*characters removed of 100,000[\s\S]*word $/);
  });

  it('shortens long arrays of small items (keeping both ends) when cutting strings is not enough', () => {
    const value = { hits: Array.from({ length: 5_000 }, (_, index) => ({ id: index })) };
    const { response } = truncateResponse(
      { content: [{ type: 'json', value }] },
      { maxChars: 2_000 },
    );
    const block = response.content[0]!;
    expect(block.type).toBe('json');
    const cut = (block as { value: { hits: unknown[] } }).value;
    expect(JSON.stringify(cut).length).toBeLessThanOrEqual(2_000);
    expect(cut.hits[0]).toEqual({ id: 0 });
    expect(cut.hits.at(-1)).toEqual({ id: 4_999 });
    expect(cut.hits.some((item) => typeof item === 'string' && /items removed/.test(item))).toBe(
      true,
    );
  });

  it('shares the budget: small blocks stay whole, large ones are cut', () => {
    const { response } = truncateResponse(
      {
        content: [
          { type: 'text', text: 'Summary: short.' },
          { type: 'text', text: lines(3_000) },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        ],
      },
      { maxChars: 1_000 },
    );
    expect(textOf({ content: [response.content[0]!] })).toBe('Summary: short.');
    expect(textOf({ content: [response.content[1]!] }).length).toBeLessThanOrEqual(
      1_000 - 'Summary: short.'.length,
    );
    expect(response.content[2]).toEqual({ type: 'image', data: 'AAAA', mimeType: 'image/png' });
  });

  it('replaces binary data decoded as text with a placeholder', () => {
    const binary = Buffer.from(
      Array.from({ length: 3_000 }, (_, index) => (index * 7919) % 256),
    ).toString('utf8');
    expect(looksBinary(binary)).toBe(true);
    expect(looksBinary('plain text\twith tabs\nand lines, 中文')).toBe(false);
    const { response, report } = truncateResponse(
      { content: [{ type: 'text', text: binary }] },
      { maxChars: 100_000 },
    );
    expect(textOf(response)).toMatch(
      /^\[binary content omitted: [\d,]+ characters that are not readable text\]$/,
    );
    expect(report).toBeDefined();
  });

  it('handles an enormous result (8 MB) quickly enough to stay in the call', () => {
    const text = 'abcdefgh'.repeat(1_000_000);
    const { response } = truncateResponse(
      { content: [{ type: 'text', text }] },
      { maxChars: 10_000 },
    );
    expect(textOf(response).length).toBeLessThanOrEqual(10_000);
  });
});

describe('truncateResponse (tokens, real tokenizer)', () => {
  it('cuts text to a token budget measured by gpt-tokenizer', async () => {
    const tokenizer = await gptTokenizer();
    const text = lines(3_000, '第 行 line');
    expect(tokenizer.encode(text).length).toBeGreaterThan(10_000);
    const { response, report } = truncateResponse(
      { content: [{ type: 'text', text }] },
      { maxTokens: 500 },
      tokenizer,
    );
    const out = textOf(response);
    expect(tokenizer.encode(out).length).toBeLessThanOrEqual(500);
    expect(out).toMatch(/tokens removed of/);
    expect(report?.unit).toBe('tokens');
    expect(report!.after).toBeLessThanOrEqual(500);
  });

  it('keeps JSON valid under a token budget', async () => {
    const tokenizer = await gptTokenizer();
    const value = { title: 'Doc', content: lines(2_000) };
    const { response } = truncateResponse(
      { content: [{ type: 'json', value }] },
      { maxTokens: 300 },
      tokenizer,
    );
    const cut = (response.content[0] as { value: typeof value }).value;
    expect(cut.title).toBe('Doc');
    expect(tokenizer.encode(JSON.stringify(cut)).length).toBeLessThanOrEqual(300);
  });

  it('needs a tokenizer for maxTokens', () => {
    expect(() =>
      truncateResponse({ content: [{ type: 'text', text: 'x' }] }, { maxTokens: 5 }),
    ).toThrow(/needs a tokenizer/);
  });
});

describe('resultSizeLimit middleware', () => {
  function pageToolkit(size: number) {
    const toolkit = new Toolkit();
    for (const name of ['web_fetch', 'calculator']) {
      toolkit.register(
        defineTool({
          name,
          description: name,
          parameters: z.object({}),
          execute: () => lines(size),
        }),
      );
    }
    return toolkit;
  }

  it('applies per-tool limits and records the cut', async () => {
    const toolkit = pageToolkit(1_000);
    toolkit.use(
      resultSizeLimit({
        maxChars: 500,
        tools: { web_fetch: { maxChars: 2_000 }, calculator: false },
      }),
    );
    const page = await call(toolkit, 'web_fetch', {});
    expect(textOf(page).length).toBeLessThanOrEqual(2_000);
    expect(governanceOf(page).truncated).toMatchObject({
      unit: 'chars',
      after: textOf(page).length,
    });
    const whole = await call(toolkit, 'calculator', {});
    expect(textOf(whole)).toBe(lines(1_000));
    expect(governanceOf(whole).truncated).toBeUndefined();
  });

  it('uses a token budget with the default tokenizer, skipping the count for short results', async () => {
    const toolkit = pageToolkit(2_000);
    let loads = 0;
    toolkit.use(
      resultSizeLimit({
        maxTokens: 400,
        tokenizer: () => {
          loads++;
          return gptTokenizer();
        },
      }),
    );
    toolkit.register(
      defineTool({
        name: 'tiny',
        description: 'tiny',
        parameters: z.object({}),
        execute: () => 'ok',
      }),
    );
    expect(textOf(await call(toolkit, 'tiny', {}))).toBe('ok');
    expect(loads).toBe(0);
    const page = await call(toolkit, 'web_fetch', {});
    expect(governanceOf(page).truncated).toMatchObject({ unit: 'tokens' });
    expect((await gptTokenizer()).encode(textOf(page)).length).toBeLessThanOrEqual(400);
    expect(loads).toBe(1);
  });
});
