import { describe, expect, it } from '@jest/globals';
import {
  calculatorTool,
  countdownTool,
  currentTimeTool,
  evaluateExpression,
  exampleTools,
} from '../src/examples.js';
import { Toolkit } from '../src/index.js';
import { collect, errorOf, expectWellFormed, finalChunk, textOf } from './helpers.js';

function makeToolkit(): Toolkit {
  const toolkit = new Toolkit();
  for (const tool of exampleTools) toolkit.register(tool);
  return toolkit;
}
const call = (name: string, args: unknown) => ({ id: 'c', name, arguments: JSON.stringify(args) });

describe('evaluateExpression', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['2 ^ 3 ^ 2', 512],
    ['2 ** 10', 1024],
    ['-2 ^ 2', -4],
    ['--3', 3],
    ['10 % 4 - 1', 1],
    ['7 / 2', 3.5],
    ['sqrt(16) + abs(-3)', 7],
    ['max(1, 5, 3) - min(4, 2)', 3],
    ['round(2.5) + floor(2.7) + ceil(2.1)', 8],
    ['1.5e3 + .5', 1500.5],
    ['PI', Math.PI],
    ['ln(e)', 1],
    ['log(1000)', 3],
  ])('%s = %p', (expression, expected) => {
    expect(evaluateExpression(expression)).toBeCloseTo(expected, 12);
  });

  it.each([
    ['', /empty/],
    ['1 +', /ends too early/],
    ['(1 + 2', /ends too early|Expected "\)"/],
    ['1 2', /Unexpected "2"/],
    ['2 $ 3', /Unexpected character "\$" at position 3/],
    ['foo(1)', /Unknown name "foo"/],
    ['sqrt 4', /Expected "\("/],
  ])('rejects %p', (expression, message) => {
    expect(() => evaluateExpression(expression)).toThrow(message);
  });
});

describe('example tools through the toolkit', () => {
  it('calculator answers with the value as text and metadata', async () => {
    const response = await makeToolkit().callToCompletion(
      call('calculator', { expression: '(2 + 3) * 4 ^ 2' }),
    );
    expect(response.content).toEqual([{ type: 'text', text: '80' }]);
    expect(response.metadata).toEqual({ value: 80 });
  });

  it('calculator rounds floating-point noise away', async () => {
    expect(
      textOf(await makeToolkit().callToCompletion(call('calculator', { expression: '0.1 + 0.2' }))),
    ).toBe('0.3');
  });

  it('calculator reports a bad expression and division by zero as tool errors the model can fix', async () => {
    const toolkit = makeToolkit();
    const bad = finalChunk(
      await collect(toolkit.call(call('calculator', { expression: '2 +* 3' }))),
    );
    expect(errorOf(bad).code).toBe('invalid_expression');
    expect(textOf(bad)).toMatch(/Cannot evaluate "2 \+\* 3"/);
    const infinite = finalChunk(
      await collect(toolkit.call(call('calculator', { expression: '1 / 0' }))),
    );
    expect(textOf(infinite)).toMatch(/no finite value/);
  });

  it('calculator validates its input length', async () => {
    const response = finalChunk(
      await collect(makeToolkit().call(call('calculator', { expression: '' }))),
    );
    expect(errorOf(response).code).toBe('tool_argument_invalid');
  });

  it('current_time defaults to UTC and honours a time zone', async () => {
    const toolkit = makeToolkit();
    const utc = (await toolkit.callToCompletion(call('current_time', {}))).content[0] as {
      type: 'json';
      value: Record<string, string>;
    };
    expect(utc.value.timezone).toBe('UTC');
    expect(Number.isNaN(Date.parse(utc.value.iso!))).toBe(false);
    const shanghai = (
      await toolkit.callToCompletion(call('current_time', { timezone: 'Asia/Shanghai' }))
    ).content[0] as {
      value: Record<string, string>;
    };
    expect(shanghai.value.timezone).toBe('Asia/Shanghai');
    expect(shanghai.value.local).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  });

  it('current_time rejects an unknown time zone, saying what is expected', async () => {
    const response = finalChunk(
      await collect(makeToolkit().call(call('current_time', { timezone: 'Mars/Olympus' }))),
    );
    expect(errorOf(response).code).toBe('tool_argument_invalid');
    expect(textOf(response)).toMatch(/"timezone".*IANA time zone/);
  });

  it('countdown streams one chunk per step, then liftoff', async () => {
    const chunks = await collect(makeToolkit().call(call('countdown', { from: 3, intervalMs: 0 })));
    expectWellFormed(chunks);
    expect(chunks.map((chunk) => textOf(chunk))).toEqual(['3\n', '2\n', '1\n', 'liftoff']);
  });

  it('countdown stops when its signal is aborted', async () => {
    const controller = new AbortController();
    const chunks = [];
    for await (const chunk of makeToolkit().call(call('countdown', { from: 100, intervalMs: 5 }), {
      signal: controller.signal,
    })) {
      chunks.push(chunk);
      if (chunks.length === 2) controller.abort();
    }
    expectWellFormed(chunks);
    expect(errorOf(finalChunk(chunks)).code).toBe('tool_aborted');
    expect(chunks.length).toBeLessThan(5);
  });

  it('every example has an English and a Chinese description', () => {
    for (const tool of [calculatorTool, currentTimeTool, countdownTool]) {
      expect(tool.definition('en').description).toMatch(/[A-Za-z]/);
      expect(tool.definition('zh').description).toMatch(/[\u4e00-\u9fff]/);
    }
  });
});
