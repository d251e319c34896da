import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { OutputCollector, htmlToText, sanitizeOutput, stripAnsi } from '../src/output-format.js';

const workDir = mkdtempSync(join(tmpdir(), 'qci-out-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

function collector(maxChars = 100, maxImages = 2) {
  let n = 0;
  return new OutputCollector({
    workDir,
    maxChars,
    maxImages,
    inlineImages: true,
    nextImageNumber: () => ++n,
  });
}

// A 1x1 PNG.
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('output formatting', () => {
  it('strips ANSI colour codes from IPython tracebacks', () => {
    expect(stripAnsi('\u001b[0;31mZeroDivisionError\u001b[0m: division by zero')).toBe(
      'ZeroDivisionError: division by zero',
    );
  });

  it('removes control characters from binary output and applies carriage returns', () => {
    const binary = Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString('latin1');
    const cleaned = sanitizeOutput(`a${binary}b\nprogress 10%\rprogress 100%\n`);
    expect(cleaned).toBe('a\t\nb\nprogress 100%\n');
  });

  it('reduces an HTML table to tab-separated rows', () => {
    const html =
      '<style>.x{}</style><table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>&lt;2&gt; &amp; &#x4e2d;</td></tr></tbody></table>';
    expect(htmlToText(html)).toBe('a\tb\n1\t<2> & 中');
  });

  it('caps text with a count of what was cut, across many pushes', () => {
    const output = collector(10);
    for (let i = 0; i < 5; i++) output.push({ type: 'stream', name: 'stdout', text: 'abcdef' });
    const blocks = output.drain();
    expect(blocks).toEqual([{ type: 'text', text: 'abcdefabcd' }]);
    expect(output.truncated).toBe(true);
    expect(output.omittedChars).toBe(20);
  });

  it('drains increments that concatenate to the whole output', () => {
    const output = collector();
    output.push({ type: 'stream', name: 'stdout', text: 'one\n' });
    const first = output.drain();
    output.push({ type: 'stream', name: 'stderr', text: 'two\n' });
    output.push({ type: 'display', data: { 'text/plain': '3' }, isResult: true });
    expect([...first, ...output.drain()]).toEqual([
      { type: 'text', text: 'one\n' },
      { type: 'text', text: 'two\n3\n' },
    ]);
    expect(output.drain()).toEqual([]);
  });

  it('saves images to the work dir and returns them as image blocks, up to maxImages', () => {
    const output = collector(100, 1);
    output.push({ type: 'stream', name: 'stdout', text: 'chart:\n' });
    output.push({
      type: 'display',
      data: { 'image/png': PNG, 'text/plain': '<Figure size 640x480 with 1 Axes>' },
      isResult: false,
    });
    output.push({ type: 'display', data: { 'image/png': PNG }, isResult: false });
    const blocks = output.drain();
    expect(blocks[0]).toEqual({ type: 'text', text: 'chart:\n' });
    const image = blocks[1] as { type: string; path: string; mimeType: string; data: string };
    expect(image.type).toBe('image');
    expect(image.mimeType).toBe('image/png');
    expect(readFileSync(image.path).subarray(1, 4).toString()).toBe('PNG');
    expect(output.savedFiles.has(image.path)).toBe(true);
    expect(output.omittedImages).toBe(1);
    expect(blocks).toHaveLength(2);
  });

  it('prefers text/plain to HTML and drops bare figure reprs', () => {
    const output = collector();
    output.push({
      type: 'display',
      data: { 'text/plain': '   a\n0  1', 'text/html': '<table></table>' },
      isResult: true,
    });
    output.push({ type: 'display', data: { 'text/html': '<b>bold</b>' }, isResult: false });
    output.push({
      type: 'display',
      data: { 'text/plain': '<Figure size 640x480 with 0 Axes>' },
      isResult: false,
    });
    expect(output.drain()).toEqual([{ type: 'text', text: '   a\n0  1\nbold\n' }]);
  });

  it('keeps the end of a long traceback, without colours', () => {
    const output = new OutputCollector({
      workDir,
      maxChars: 10,
      maxImages: 0,
      inlineImages: false,
      nextImageNumber: () => 1,
      maxTracebackChars: 20,
    });
    output.push({
      type: 'error',
      ename: 'ValueError',
      evalue: 'bad',
      traceback: ['x'.repeat(100), '\u001b[0;31mValueError\u001b[0m: bad'],
    });
    expect(output.errorText).toBe('…xxxx\nValueError: bad');
  });
});
