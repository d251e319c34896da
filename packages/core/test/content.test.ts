import { describe, expect, it } from '@jest/globals';
import {
  ToolArgumentError,
  contentBlockSchema,
  errorResponse,
  isContentBlock,
  isToolResponse,
  jsonBlock,
  responseText,
  safeStringify,
  textBlock,
  textResponse,
  toToolResponse,
  toolResponseSchema,
} from '../src/index.js';

describe('toToolResponse', () => {
  it('passes a ToolResponse through untouched', () => {
    const response = { content: [textBlock('a')], isError: true, metadata: { k: 1 } };
    expect(toToolResponse(response)).toBe(response);
  });

  it.each([
    ['a string', 'hi', [{ type: 'text', text: 'hi' }]],
    ['an empty string', '', [{ type: 'text', text: '' }]],
    ['undefined', undefined, []],
    ['null', null, []],
    ['a number', 3, [{ type: 'json', value: 3 }]],
    ['false', false, [{ type: 'json', value: false }]],
    ['an object', { a: [1] }, [{ type: 'json', value: { a: [1] } }]],
    ['an empty array', [], [{ type: 'json', value: [] }]],
    ['an array of numbers', [1, 2], [{ type: 'json', value: [1, 2] }]],
    [
      'a content block',
      { type: 'file', path: '/tmp/a.pdf' },
      [{ type: 'file', path: '/tmp/a.pdf' }],
    ],
    ['an array of blocks', [textBlock('a'), jsonBlock(null)], [textBlock('a'), jsonBlock(null)]],
    ['a mixed array', [textBlock('a'), 'b'], [{ type: 'json', value: [textBlock('a'), 'b'] }]],
    [
      'an object with a non-block content array',
      { content: [1, 2] },
      [{ type: 'json', value: { content: [1, 2] } }],
    ],
  ])('wraps %s', (_label, value, content) => {
    const response = toToolResponse(value);
    expect(response.content).toEqual(content);
    expect(toolResponseSchema.safeParse(response).success).toBe(true);
  });
});

describe('content blocks', () => {
  it('recognises the four block shapes and nothing else', () => {
    expect(isContentBlock(textBlock('x'))).toBe(true);
    expect(isContentBlock({ type: 'image', mimeType: 'image/png', data: 'AAAA' })).toBe(true);
    expect(isContentBlock({ type: 'file', url: 'https://x/y' })).toBe(true);
    expect(isContentBlock({ type: 'json', value: undefined })).toBe(true);
    expect(isContentBlock({ type: 'text', text: 3 })).toBe(false);
    expect(isContentBlock({ type: 'image', url: 'u' })).toBe(false);
    expect(isContentBlock({ type: 'json' })).toBe(false);
    expect(isContentBlock({ type: 'video' })).toBe(false);
    expect(isContentBlock(null)).toBe(false);
    expect(isToolResponse({ content: [] })).toBe(true);
    expect(isToolResponse({ content: [{ type: 'nope' }] })).toBe(false);
    expect(isToolResponse({ contents: [] })).toBe(false);
  });

  it('the schema requires an image or file to say where its bytes are', () => {
    expect(contentBlockSchema.safeParse({ type: 'image', mimeType: 'image/png' }).success).toBe(
      false,
    );
    expect(
      contentBlockSchema.safeParse({ type: 'image', mimeType: 'image/png', path: '/a.png' })
        .success,
    ).toBe(true);
    expect(contentBlockSchema.safeParse({ type: 'file', name: 'a.pdf' }).success).toBe(false);
    expect(
      contentBlockSchema.safeParse({ type: 'file', data: 'AAAA', name: 'a.pdf' }).success,
    ).toBe(true);
  });

  it('toolResponseSchema rejects malformed responses', () => {
    expect(toolResponseSchema.safeParse({ content: 'text' }).success).toBe(false);
    expect(toolResponseSchema.safeParse({ content: [], isLast: 'yes' }).success).toBe(false);
    expect(toolResponseSchema.safeParse({ content: [], metadata: [] }).success).toBe(false);
    expect(toolResponseSchema.safeParse(textResponse('ok', { source: 's' })).success).toBe(true);
  });
});

describe('responseText', () => {
  it('joins text, serialises JSON, and names images and files', () => {
    const text = responseText({
      content: [
        textBlock('Result:'),
        jsonBlock({ a: 1 }),
        { type: 'image', mimeType: 'image/png', path: '/out/plot.png' },
        { type: 'image', mimeType: 'image/jpeg', url: 'https://x/y.jpg' },
        { type: 'file', name: 'report.pdf', mimeType: 'application/pdf', path: '/out/report.pdf' },
        { type: 'file', url: 'https://x/data.csv' },
      ],
    });
    expect(text.split('\n')).toEqual([
      'Result:',
      '{"a":1}',
      '[image image/png saved at /out/plot.png]',
      '[image image/jpeg at https://x/y.jpg]',
      '[file report.pdf (application/pdf)]',
      '[file https://x/data.csv]',
    ]);
  });
});

describe('safeStringify', () => {
  it('renders cycles and BigInts instead of throwing', () => {
    const cyclic: Record<string, unknown> = { n: 1n };
    cyclic.self = cyclic;
    expect(safeStringify(cyclic)).toBe('{"n":"1","self":"[Circular]"}');
    expect(safeStringify(undefined)).toBe('undefined');
    expect(safeStringify({ a: 1 }, 2)).toBe('{\n  "a": 1\n}');
  });

  it('survives a toJSON that throws', () => {
    const hostile = {
      toJSON() {
        throw new Error('no');
      },
    };
    expect(() => safeStringify(hostile)).not.toThrow();
  });
});

describe('errorResponse', () => {
  it('carries a Quiver error’s structured fields in metadata.error', () => {
    const error = new ToolArgumentError('search', [{ path: ['query'], message: 'is required' }]);
    const response = errorResponse(error, { attempt: 2 });
    expect(response.isError).toBe(true);
    expect(response.content).toEqual([{ type: 'text', text: `Error: ${error.message}` }]);
    expect(response.metadata).toEqual({
      attempt: 2,
      error: {
        name: 'ToolArgumentError',
        code: 'tool_argument_invalid',
        message: error.message,
        toolName: 'search',
        issues: error.issues,
      },
    });
    expect(toolResponseSchema.safeParse(response).success).toBe(true);
  });

  it('accepts anything thrown', () => {
    expect(errorResponse(new TypeError('bad')).metadata?.error).toEqual({
      name: 'TypeError',
      code: 'tool_execution_failed',
      message: 'bad',
    });
    expect(errorResponse('plain').content).toEqual([{ type: 'text', text: 'Error: plain' }]);
    expect(errorResponse({ why: 'x' }).content).toEqual([
      { type: 'text', text: 'Error: {"why":"x"}' },
    ]);
    expect(errorResponse(undefined).isError).toBe(true);
  });
});
