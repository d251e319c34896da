import type { ContentBlock, Logger, ToolResponse } from '@quiver/core';
import { errorMessage, textBlock } from '@quiver/core';
import type { GovernanceMiddleware } from './governance-middleware.js';
import { createGovernanceMiddleware, perTool } from './governance-middleware.js';
import { annotate } from './governance-metadata.js';
import type { Tokenizer } from './tokenizer.js';
import { gptTokenizer } from './tokenizer.js';

/** A size budget for a tool result: characters, or tokens (measured with a real tokenizer). */
export interface SizeBudget {
  /** Largest result in characters (UTF-16 code units). */
  maxChars?: number;
  /** Largest result in tokens; wins over `maxChars` when both are set. */
  maxTokens?: number;
  /** Share of a cut text kept from its start (the rest from its end). Default 0.7. */
  headRatio?: number;
}

/** What {@link truncateResponse} did. */
export interface TruncationReport {
  unit: 'chars' | 'tokens';
  before: number;
  after: number;
}

const BINARY_SAMPLE = 4096;

/**
 * True when a text looks like binary data decoded as text (more than 10 % of its first 4 KiB
 * are replacement characters or control characters other than tab and line breaks).
 */
export function looksBinary(text: string): boolean {
  const sample = text.length > BINARY_SAMPLE ? text.slice(0, BINARY_SAMPLE) : text;
  if (sample.length === 0) return false;
  let odd = 0;
  for (let index = 0; index < sample.length; index++) {
    const code = sample.charCodeAt(index);
    if (code === 0xfffd || (code < 32 && code !== 9 && code !== 10 && code !== 13) || code === 127)
      odd++;
  }
  return odd / sample.length > 0.1;
}

interface Measure {
  unit: 'chars' | 'tokens';
  size(text: string): number;
  /** Cut `text` to at most `max` units: head + marker + tail. */
  cut(text: string, max: number): string;
}

function marker(removed: number, total: number, unit: string): string {
  return `\n[… ${removed.toLocaleString('en-US')} ${unit} removed of ${total.toLocaleString('en-US')} …]\n`;
}

function charMeasure(headRatio: number): Measure {
  return {
    unit: 'chars',
    size: (text) => text.length,
    cut(text, max) {
      if (text.length <= max) return text;
      // The marker's own length depends on the numbers in it: size it for the worst case.
      const room = Math.max(0, max - marker(text.length, text.length, 'characters').length);
      let head = Math.floor(room * headRatio);
      let tail = room - head;
      head = snapBack(text, head);
      let tailStart = text.length - tail;
      tailStart = snapForward(text, tailStart);
      tail = text.length - tailStart;
      const removed = text.length - head - tail;
      return (
        text.slice(0, head) + marker(removed, text.length, 'characters') + text.slice(tailStart)
      );
    },
  };
}

/** Move a cut point back to a line break or space close by, and off a surrogate pair. */
function snapBack(text: string, index: number): number {
  const window = Math.min(200, Math.floor(index / 10));
  for (let position = index; position > index - window && position > 0; position--) {
    if (text[position - 1] === '\n') return position;
  }
  const code = text.charCodeAt(index - 1);
  return code >= 0xd800 && code <= 0xdbff ? index - 1 : index;
}

function snapForward(text: string, index: number): number {
  const window = Math.min(200, Math.floor((text.length - index) / 10));
  for (let position = index; position < index + window && position < text.length; position++) {
    if (text[position - 1] === '\n') return position;
  }
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff ? index + 1 : index;
}

function tokenMeasure(tokenizer: Tokenizer, headRatio: number): Measure {
  return {
    unit: 'tokens',
    size(text) {
      // Every token covers at least one UTF-8 byte: a short text needs no encoding to be sized
      // as "within budget", but sizes are exact whenever they are used for a cut.
      return tokenizer.encode(text).length;
    },
    cut(text, max) {
      const tokens = tokenizer.encode(text);
      if (tokens.length <= max) return text;
      const mark = marker(tokens.length, tokens.length, 'tokens');
      const room = Math.max(0, max - tokenizer.encode(mark).length - 2);
      const head = Math.floor(room * headRatio);
      const tail = room - head;
      const removed = tokens.length - head - tail;
      return (
        tokenizer.decode(tokens.slice(0, head)) +
        marker(removed, tokens.length, 'tokens') +
        tokenizer.decode(tokens.slice(tokens.length - tail))
      );
    },
  };
}

type Item =
  | { index: number; kind: 'text'; text: string; json: unknown; pretty: boolean }
  | { index: number; kind: 'json'; json: unknown; pretty: false };

/**
 * Cut a response to a size budget, keeping it usable:
 * - a long text keeps its head and tail with a marker saying how much was removed;
 * - JSON (a JSON block, or a text block holding JSON) stays valid JSON: long string fields are
 *   cut inside, then long arrays lose middle items (with a marker item), never the envelope;
 * - binary data decoded as text is replaced by a one-line placeholder;
 * - the budget is shared between blocks: small blocks are kept whole, large ones share the rest.
 * Images and files are not counted (they are not text). The input is never mutated.
 *
 * @param response - the response to cut
 * @param budget - `maxChars` or `maxTokens`
 * @param tokenizer - required for `maxTokens` (see {@link gptTokenizer})
 * @returns the response (the same object when nothing was cut) and a report when it was cut
 * @example
 * ```ts
 * const { response: short } = truncateResponse(longResponse, { maxChars: 8_000 });
 * ```
 */
export function truncateResponse(
  response: ToolResponse,
  budget: SizeBudget,
  tokenizer?: Tokenizer,
): { response: ToolResponse; report?: TruncationReport } {
  const headRatio = Math.min(0.95, Math.max(0.05, budget.headRatio ?? 0.7));
  const useTokens = budget.maxTokens !== undefined;
  if (useTokens && tokenizer === undefined) {
    throw new TypeError(
      'truncateResponse needs a tokenizer for maxTokens: pass one, e.g. await gptTokenizer().',
    );
  }
  const max = useTokens ? budget.maxTokens! : budget.maxChars;
  if (max === undefined) return { response };
  const measure = useTokens ? tokenMeasure(tokenizer!, headRatio) : charMeasure(headRatio);

  let content: ContentBlock[] | undefined;
  const items: Item[] = [];
  response.content.forEach((block, index) => {
    if (block.type === 'text') {
      if (looksBinary(block.text)) {
        content ??= [...response.content];
        content[index] = textBlock(
          `[binary content omitted: ${block.text.length.toLocaleString('en-US')} characters that are not readable text]`,
        );
        return;
      }
      items.push({ index, kind: 'text', text: block.text, json: undefined, pretty: false });
    } else if (block.type === 'json') {
      items.push({ index, kind: 'json', json: block.value, pretty: false });
    }
  });
  // Cheap upper bound first: a token is at least one byte (and a character at most 4 bytes).
  const upperBounds = items.map(
    (item) =>
      (item.kind === 'text' ? item.text.length : jsonText(item.json).length) * (useTokens ? 3 : 1),
  );
  const roughTotal = upperBounds.reduce((sum, size) => sum + size, 0);
  if (roughTotal <= max && content === undefined) return { response };

  const texts = items.map((item) => (item.kind === 'text' ? item.text : jsonText(item.json)));
  const sizes = roughTotal <= max ? upperBounds : texts.map((text) => measure.size(text));
  const before = sizes.reduce((sum, size) => sum + size, 0);
  if (before <= max) {
    return content === undefined
      ? { response }
      : {
          response: { ...response, content },
          report: { unit: measure.unit, before, after: before },
        };
  }
  const shares = waterFill(sizes, max);
  let after = 0;
  items.forEach((item, position) => {
    const share = shares[position]!;
    const size = sizes[position]!;
    if (size <= share) {
      after += size;
      return;
    }
    content ??= [...response.content];
    let replacement: ContentBlock;
    if (item.kind === 'json') {
      const cut = cutJson(item.json, share, measure, false);
      replacement = { type: 'json', value: cut };
      after += measure.size(jsonText(cut));
    } else {
      const parsed = parseJson(item.text);
      if (parsed !== undefined) {
        const pretty = item.text.includes('\n');
        const cut = cutJson(parsed, share, measure, pretty);
        const text = jsonText(cut, pretty);
        replacement = textBlock(text);
        after += measure.size(text);
      } else {
        const text = measure.cut(item.text, share);
        replacement = textBlock(text);
        after += measure.size(text);
      }
    }
    content[item.index] = replacement;
  });
  if (content === undefined) return { response };
  return { response: { ...response, content }, report: { unit: measure.unit, before, after } };
}

/** Split `total` between items: those under the fair share keep their size, the rest share the remainder. */
function waterFill(sizes: number[], total: number): number[] {
  const order = sizes.map((size, index) => ({ size, index })).sort((a, b) => a.size - b.size);
  const shares = new Array<number>(sizes.length).fill(0);
  let remaining = total;
  order.forEach(({ size, index }, position) => {
    const fair = Math.floor(remaining / (order.length - position));
    const share = Math.min(size, fair);
    shares[index] = share;
    remaining -= share;
  });
  return shares;
}

function jsonText(value: unknown, pretty = false): string {
  try {
    return JSON.stringify(value, null, pretty ? 2 : undefined) ?? 'null';
  } catch {
    return String(value);
  }
}

function parseJson(text: string): unknown {
  const trimmed = text.trim();
  const first = trimmed[0];
  const last = trimmed[trimmed.length - 1];
  if (!((first === '{' && last === '}') || (first === '[' && last === ']'))) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}

/**
 * Cut a JSON value to `max` units, keeping it valid JSON. First the long strings are cut (all
 * to one cap, found by water-filling), then, if needed, long arrays lose middle items. As a last
 * resort the value becomes `{ truncated: true, preview }`.
 */
function cutJson(value: unknown, max: number, measure: Measure, pretty: boolean): unknown {
  let current = value;
  // Characters per unit, to turn a token budget into a character target.
  const serialized = jsonText(value, pretty);
  const ratio = serialized.length / Math.max(1, measure.size(serialized));
  let target = Math.floor(max * ratio);
  for (let attempt = 0; attempt < 5; attempt++) {
    current = cutStrings(value, target, pretty);
    let text = jsonText(current, pretty);
    if (text.length > target) {
      current = cutArrays(current, target, pretty);
      text = jsonText(current, pretty);
    }
    const size = measure.size(text);
    if (size <= max) return current;
    target = Math.floor(target * (max / size) * 0.95);
  }
  return { truncated: true, preview: measure.cut(serialized, Math.max(0, max - 40)) };
}

interface StringLeaf {
  length: number;
}

function collectStrings(value: unknown, out: StringLeaf[]): void {
  if (typeof value === 'string') out.push({ length: value.length });
  else if (Array.isArray(value)) for (const item of value) collectStrings(item, out);
  else if (typeof value === 'object' && value !== null)
    for (const item of Object.values(value)) collectStrings(item, out);
}

function cutStrings(value: unknown, target: number, pretty: boolean): unknown {
  const total = jsonText(value, pretty).length;
  if (total <= target) return value;
  const leaves: StringLeaf[] = [];
  collectStrings(value, leaves);
  const lengths = leaves.map((leaf) => leaf.length).sort((a, b) => b - a);
  const excess = total - target;
  const markerCost = 48;
  // Find the largest cap whose savings cover the excess (savings grow as the cap falls).
  let cap = -1;
  let low = 0;
  let high = lengths[0] ?? 0;
  while (low <= high) {
    const middle = Math.floor((low + high) / 2);
    let saved = 0;
    for (const length of lengths) {
      if (length <= middle + markerCost) break;
      saved += length - middle - markerCost;
    }
    if (saved >= excess) {
      cap = middle;
      low = middle + 1;
    } else high = middle - 1;
  }
  if (cap < 0) cap = 0;
  const chars = charMeasure(0.7);
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') {
      if (node.length <= cap + markerCost) return node;
      // Strings are cut in characters; cutJson turns a token budget into a character target.
      return chars.cut(node, cap + markerCost);
    }
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node === 'object' && node !== null) {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(node)) out[key] = walk(item);
      return out;
    }
    return node;
  };
  return walk(value);
}

function cutArrays(value: unknown, target: number, pretty: boolean): unknown {
  let current = value;
  for (let round = 0; round < 12; round++) {
    const text = jsonText(current, pretty);
    if (text.length <= target) return current;
    // Halve the longest array (by serialised size), keeping its first and last items.
    let longest: { path: (string | number)[]; size: number } | undefined;
    const visit = (node: unknown, path: (string | number)[]) => {
      if (Array.isArray(node)) {
        if (node.length > 2) {
          const size = jsonText(node).length;
          if (longest === undefined || size > longest.size) longest = { path, size };
        }
        node.forEach((item, index) => visit(item, [...path, index]));
      } else if (typeof node === 'object' && node !== null) {
        for (const [key, item] of Object.entries(node)) visit(item, [...path, key]);
      }
    };
    visit(current, []);
    if (longest === undefined) return current;
    current = replaceAt(current, longest.path, (array) => shrinkArray(array as unknown[]));
  }
  return current;
}

const ITEMS_MARKER = /^\[… (\d+) items removed …\]$/;

function shrinkArray(array: unknown[]): unknown[] {
  const markerIndex = array.findIndex(
    (item) => typeof item === 'string' && ITEMS_MARKER.test(item),
  );
  const alreadyRemoved =
    markerIndex >= 0 ? Number(ITEMS_MARKER.exec(array[markerIndex] as string)![1]) : 0;
  const items =
    markerIndex >= 0 ? [...array.slice(0, markerIndex), ...array.slice(markerIndex + 1)] : array;
  const keep = Math.max(2, Math.floor(items.length / 2));
  const head = Math.ceil(keep * 0.75);
  const tail = keep - head;
  const removed = items.length - keep + alreadyRemoved;
  return [
    ...items.slice(0, head),
    `[… ${removed} items removed …]`,
    ...items.slice(items.length - tail),
  ];
}

function replaceAt(
  node: unknown,
  path: (string | number)[],
  change: (value: unknown) => unknown,
): unknown {
  if (path.length === 0) return change(node);
  const [head, ...rest] = path;
  if (Array.isArray(node)) {
    const copy = [...node];
    copy[head as number] = replaceAt(copy[head as number], rest, change);
    return copy;
  }
  const copy = { ...(node as Record<string, unknown>) };
  copy[head as string] = replaceAt(copy[head as string], rest, change);
  return copy;
}

/** True when a response is certainly within `maxTokens` (a token covers at least one UTF-8 byte). */
function fitsWithoutCounting(response: ToolResponse, maxTokens: number): boolean {
  let bound = 0;
  for (const block of response.content) {
    if (block.type === 'text') {
      if (looksBinary(block.text)) return false;
      bound += block.text.length * 3;
    } else if (block.type === 'json') bound += jsonText(block.value).length * 3;
  }
  return bound <= maxTokens;
}

/** Options of {@link resultSizeLimit}. */
export interface ResultSizeOptions extends SizeBudget {
  /** Per-tool budgets (replacing the default budget), or `false` to leave a tool's results whole. */
  tools?: Record<string, SizeBudget | false>;
  /**
   * The tokenizer for `maxTokens`, or a function loading it. Default: {@link gptTokenizer}().
   * If it cannot be loaded, the budget falls back to four characters per token (logged).
   */
  tokenizer?: Tokenizer | (() => Promise<Tokenizer>);
  /** Where a tokenizer failure is reported. Default: the call's logger. */
  logger?: Logger;
}

/** The result size middleware; see {@link resultSizeLimit}. */
export type ResultSizeMiddleware = GovernanceMiddleware;

/**
 * Middleware that cuts long results to a character or token budget with
 * {@link truncateResponse}, per tool, and records `metadata.governance.truncated`.
 *
 * @example
 * ```ts
 * toolkit.use(resultSizeLimit({ maxTokens: 4_000, tools: { web_fetch: { maxTokens: 12_000 }, calculator: false } }));
 * ```
 */
export function resultSizeLimit(options: ResultSizeOptions = {}): ResultSizeMiddleware {
  const fallback: SizeBudget = {
    ...(options.maxChars !== undefined ? { maxChars: options.maxChars } : {}),
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    ...(options.headRatio !== undefined ? { headRatio: options.headRatio } : {}),
  };
  if (fallback.maxChars === undefined && fallback.maxTokens === undefined)
    fallback.maxChars = 20_000;
  let tokenizer: Promise<Tokenizer> | undefined;
  const loadTokenizer = (): Promise<Tokenizer> => {
    const source = options.tokenizer;
    tokenizer ??=
      source === undefined
        ? gptTokenizer()
        : typeof source === 'function'
          ? source()
          : Promise.resolve(source);
    return tokenizer;
  };
  return createGovernanceMiddleware(
    'resultSizeLimit',
    async (invocation, next) => {
      const response = await next(invocation);
      let budget = perTool<SizeBudget | false>(invocation.name, options.tools, fallback);
      if (budget === false) return response;
      if (budget.maxTokens !== undefined && fitsWithoutCounting(response, budget.maxTokens)) {
        return response;
      }
      let tokens: Tokenizer | undefined;
      if (budget.maxTokens !== undefined) {
        try {
          tokens = await loadTokenizer();
        } catch (error) {
          // Without a tokenizer, about four characters per token still keeps the context bounded.
          tokenizer = undefined;
          (options.logger ?? invocation.context.logger).warn(
            'tokenizer unavailable; using a character budget',
            { error: errorMessage(error) },
          );
          budget = { ...budget, maxTokens: undefined, maxChars: budget.maxTokens * 4 };
        }
      }
      const result = truncateResponse(response, budget, tokens);
      return result.report === undefined
        ? result.response
        : annotate(result.response, { truncated: result.report });
    },
    {},
  );
}
