import { describe, expect, it } from '@jest/globals';
import { ToolArgumentError, ToolExecutionError, errorResponse } from '@quiver/core';
import { CircuitOpenError, formatForModel } from '../src/index.js';

describe('formatForModel', () => {
  it('gives plain text for text and JSON', () => {
    expect(
      formatForModel({
        content: [
          { type: 'text', text: 'hello' },
          { type: 'json', value: { a: 1 } },
        ],
      }),
    ).toBe('hello\n{\n  "a": 1\n}');
    expect(formatForModel({ content: [{ type: 'json', value: [1, 2] }] }, { jsonIndent: 0 })).toBe(
      '[1,2]',
    );
    expect(formatForModel({ content: [] })).toBe('(The tool finished without output.)');
  });

  it('gives image parts to a model that accepts images', () => {
    const content = formatForModel(
      {
        content: [
          { type: 'text', text: 'chart:' },
          { type: 'image', data: 'iVBORw0K', mimeType: 'image/png' },
          { type: 'image', url: 'https://x/y.jpg', mimeType: 'image/jpeg' },
        ],
      },
      { acceptsImages: true },
    );
    expect(content).toEqual([
      { type: 'text', text: 'chart:' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } },
      { type: 'image_url', image_url: { url: 'https://x/y.jpg' } },
    ]);
  });

  it('names the file in a placeholder when the model does not take images (or only a path exists)', () => {
    const response = {
      content: [
        { type: 'image' as const, path: '/work/out/plot.png', mimeType: 'image/png', alt: 'sales' },
      ],
    };
    expect(formatForModel(response)).toBe(
      '[image "sales" (image/png) saved at /work/out/plot.png; it cannot be shown here]',
    );
    expect(formatForModel(response, { acceptsImages: true })).toBe(formatForModel(response));
    expect(
      formatForModel({
        content: [{ type: 'image', data: 'A'.repeat(4096), mimeType: 'image/png' }],
      }),
    ).toBe('[image (image/png, 3 KiB); it cannot be shown here]');
    expect(
      formatForModel({
        content: [{ type: 'file', path: '/tmp/report.pdf', mimeType: 'application/pdf' }],
      }),
    ).toBe('[file report.pdf (application/pdf) at /tmp/report.pdf]');
  });

  it('phrases errors so the model can act on them', () => {
    const invalid = formatForModel(
      errorResponse(new ToolArgumentError('search', [{ path: ['query'], message: 'is required' }])),
    );
    expect(invalid).toMatch(
      /^Error \(tool_argument_invalid\): Invalid arguments for tool "search"\.\n- "query": is required\nCorrect the arguments/,
    );
    const transient = formatForModel(
      errorResponse(
        new ToolExecutionError('search', 'HTTP 429', { isRetryable: true, retryAfterMs: 2_500 }),
      ),
    );
    expect(transient).toBe(
      'Error (tool_execution_failed): HTTP 429\nThis failure is temporary: the same call may succeed after about 3 s.',
    );
    const open = formatForModel(errorResponse(new CircuitOpenError('search', 5, 30_000)));
    expect(open).toMatch(
      /^Error \(circuit_open\): Tool "search" failed 5 times in a row.*\nDo not call this tool again for now/s,
    );
  });

  it('adds a note for a rollback', () => {
    const text = formatForModel({
      content: [{ type: 'text', text: 'No results found' }],
      metadata: { rollback: { reason: 'the search returned no results' } },
    });
    expect(text).toBe(
      'No results found\n\n[This result looks unusable: the search returned no results. Try a different approach or different arguments.]',
    );
    expect(
      formatForModel(
        { content: [{ type: 'text', text: 'x' }], metadata: { rollback: { reason: 'r' } } },
        { rollbackNote: false },
      ),
    ).toBe('x');
  });
});
