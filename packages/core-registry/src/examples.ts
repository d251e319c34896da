import { ToolExecutionError } from '@quiver/core';
import type { ToolContext } from '@quiver/core';
import { z } from 'zod';
import { defineTool } from './define-tool.js';

/**
 * Example tools, used by the demo and the tests, and a template for writing your own:
 * `calculator` (plain value), `current_time` (validated enum-like input), `countdown` (streaming).
 */

// --- calculator: a small recursive-descent parser; never `eval`. ---------------------------------

const FUNCTIONS: Record<string, (...values: number[]) => number> = {
  sqrt: Math.sqrt,
  abs: Math.abs,
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  ln: Math.log,
  log: Math.log10,
  exp: Math.exp,
  round: Math.round,
  floor: Math.floor,
  ceil: Math.ceil,
  min: Math.min,
  max: Math.max,
};
const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E };

class ExpressionError extends Error {}

/**
 * Evaluate an arithmetic expression: numbers, + - * / % ^ (power, right-associative), parentheses,
 * unary minus, the constants pi and e, and the functions in FUNCTIONS.
 * @throws ExpressionError with the position of the problem
 */
export function evaluateExpression(expression: string): number {
  const tokens = [
    ...expression.matchAll(
      /\s*(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+|[A-Za-z_]\w*|\*\*|[-+*/%^(),])/gy,
    ),
  ];
  const consumed = tokens.reduce((length, match) => length + match[0].length, 0);
  const rest = expression.slice(consumed);
  if (rest.trim() !== '') {
    const position = consumed + (rest.length - rest.trimStart().length) + 1;
    throw new ExpressionError(`Unexpected character "${rest.trim()[0]}" at position ${position}.`);
  }
  const items = tokens.map((match) => match[1]!);
  let index = 0;
  const peek = () => items[index];
  const take = (expected?: string): string => {
    const token = items[index];
    if (token === undefined) throw new ExpressionError('The expression ends too early.');
    if (expected !== undefined && token !== expected)
      throw new ExpressionError(`Expected "${expected}" but found "${token}".`);
    index++;
    return token;
  };
  const expressionRule = (): number => {
    let value = term();
    while (peek() === '+' || peek() === '-')
      value = take() === '+' ? value + term() : value - term();
    return value;
  };
  const term = (): number => {
    let value = unary();
    while (peek() === '*' || peek() === '/' || peek() === '%') {
      const operator = take();
      const right = unary();
      value = operator === '*' ? value * right : operator === '/' ? value / right : value % right;
    }
    return value;
  };
  const unary = (): number => {
    if (peek() === '-') {
      take();
      return -unary();
    }
    if (peek() === '+') {
      take();
      return unary();
    }
    return power();
  };
  const power = (): number => {
    const base = primary();
    if (peek() === '^' || peek() === '**') {
      take();
      return base ** unary();
    }
    return base;
  };
  const primary = (): number => {
    const token = take();
    if (token === '(') {
      const value = expressionRule();
      take(')');
      return value;
    }
    if (/^[\d.]/.test(token)) return Number(token);
    const name = token.toLowerCase();
    if (name in CONSTANTS) return CONSTANTS[name]!;
    const fn = FUNCTIONS[name];
    if (fn) {
      take('(');
      const args = [expressionRule()];
      while (peek() === ',') {
        take();
        args.push(expressionRule());
      }
      take(')');
      return fn(...args);
    }
    throw new ExpressionError(
      `Unknown name "${token}". Known functions: ${Object.keys(FUNCTIONS).join(', ')}; constants: pi, e.`,
    );
  };
  if (items.length === 0) throw new ExpressionError('The expression is empty.');
  const value = expressionRule();
  if (index < items.length)
    throw new ExpressionError(`Unexpected "${items[index]}" after the end of the expression.`);
  return value;
}

/** Evaluates arithmetic exactly as written (a parser, never `eval`); answers the value as text and in `metadata.value`. */
export const calculatorTool = defineTool({
  name: 'calculator',
  description: {
    en: 'Evaluate an arithmetic expression exactly as written, e.g. "(2 + 3) * 4 ^ 2" or "sqrt(2) * pi". Supports + - * / % ^, parentheses, pi, e, and sqrt, abs, sin, cos, tan, ln, log, exp, round, floor, ceil, min, max.',
    zh: '计算算术表达式，例如 "(2 + 3) * 4 ^ 2" 或 "sqrt(2) * pi"。支持 + - * / % ^、括号、pi、e，以及 sqrt、abs、sin、cos、tan、ln、log、exp、round、floor、ceil、min、max。',
  },
  parameters: z.object({
    expression: z.string().min(1).max(1000).describe('The arithmetic expression to evaluate'),
  }),
  flags: { deterministic: true },
  execute: ({ expression }) => {
    let value: number;
    try {
      value = evaluateExpression(expression);
    } catch (error) {
      if (error instanceof ExpressionError) {
        throw new ToolExecutionError(
          'calculator',
          `Cannot evaluate "${expression}": ${error.message}`,
          { code: 'invalid_expression' },
        );
      }
      throw error;
    }
    if (!Number.isFinite(value)) {
      throw new ToolExecutionError(
        'calculator',
        `"${expression}" has no finite value (division by zero or overflow).`,
        {
          code: 'invalid_expression',
        },
      );
    }
    return {
      content: [{ type: 'text', text: String(Number(value.toPrecision(15))) }],
      metadata: { value },
    };
  },
});

// --- current_time ------------------------------------------------------------------------------

/** The current date, time and weekday in an IANA time zone (default UTC). */
export const currentTimeTool = defineTool({
  name: 'current_time',
  description: {
    en: 'Get the current date and time in a time zone (IANA name such as "Asia/Shanghai" or "UTC").',
    zh: '获取某个时区（IANA 名称，如 "Asia/Shanghai" 或 "UTC"）的当前日期和时间。',
  },
  parameters: z.object({
    timezone: z
      .string()
      .default('UTC')
      .refine((zone) => {
        try {
          new Intl.DateTimeFormat('en-US', { timeZone: zone });
          return true;
        } catch {
          return false;
        }
      }, 'must be an IANA time zone name such as "UTC", "Europe/Berlin" or "Asia/Shanghai"')
      .describe('IANA time zone name'),
  }),
  execute: ({ timezone }) => {
    const now = new Date();
    const local = new Intl.DateTimeFormat('sv-SE', {
      timeZone: timezone,
      dateStyle: 'short',
      timeStyle: 'medium',
    }).format(now);
    const weekday = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      weekday: 'long',
    }).format(now);
    return { timezone, local, weekday, iso: now.toISOString() };
  },
});

// --- countdown: a streaming tool that honours its signal ---------------------------------------

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Streams a countdown, one chunk per step; honours its signal. */
export const countdownTool = defineTool({
  name: 'countdown',
  description: {
    en: 'Count down from a number, streaming one line per step. Useful to see streaming tool output.',
    zh: '从给定数字开始倒数，每一步流式输出一行，用于观察工具的流式输出。',
  },
  parameters: z.object({
    from: z.number().int().min(1).max(100).describe('Number to count down from'),
    intervalMs: z
      .number()
      .int()
      .min(0)
      .max(5000)
      .default(100)
      .describe('Pause between steps, in milliseconds'),
  }),
  async *execute({ from, intervalMs }, context: ToolContext) {
    for (let value = from; value > 0; value--) {
      yield `${value}\n`;
      await sleep(intervalMs, context.signal);
    }
    return 'liftoff';
  },
});

/** All example tools. */
export const exampleTools = [calculatorTool, currentTimeTool, countdownTool] as const;
