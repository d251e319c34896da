import type { Logger, ToolResponse } from '@quiver/core';
import { errorMessage, responseText } from '@quiver/core';
import type { ToolInvocation } from '@quiver/core-registry';
import type { GovernanceMiddleware } from './governance-middleware.js';
import { createGovernanceMiddleware, namespaceOf } from './governance-middleware.js';
import { annotate } from './governance-metadata.js';

/** What a quality rule sees. */
export interface QualityCheck {
  toolName: string;
  response: ToolResponse;
  /** The response's text (text blocks, JSON serialised), computed once for all rules. */
  text: string;
  /** The tool's kind by the `kinds` option or its name (`search`, `page`, or `undefined`). */
  kind: ToolKind | undefined;
}

/** Tool kinds the built-in rules know. */
export type ToolKind = 'search' | 'page';

/**
 * A result quality rule: returns a reason when the result is useless (the response is then
 * marked `metadata.rollback = { reason }`), or `undefined` when it is fine.
 */
export interface QualityRule {
  name: string;
  /** What the rule catches, for documentation and logs. */
  description: string;
  check(input: QualityCheck): string | undefined;
}

/**
 * The data behind the built-in rules. Pass a modified copy to {@link builtinQualityRules} to
 * tune them (e.g. add a phrase your search backend uses for "nothing found").
 */
export interface QualityRuleData {
  /** Names of tools treated as search tools. */
  searchToolPattern: RegExp;
  /** Names of tools treated as page readers (fetch, browse, scrape). */
  pageToolPattern: RegExp;
  /** A whole search result matching one of these means "no results". */
  emptySearchPatterns: RegExp[];
  /** JSON fields holding search hits; an empty array there means "no results". */
  searchResultFields: string[];
  /** A page whose text (whitespace collapsed) is shorter than this is empty. */
  minPageChars: number;
  /** A page matching one of these (in its first `blockedScanChars`) is a block or captcha page. */
  blockedPagePatterns: RegExp[];
  /** Only pages shorter than this are checked for block phrases (long pages merely mention them). */
  blockedPageMaxChars: number;
  /** A short successful result starting with one of these is an error in disguise. */
  errorTextPatterns: RegExp[];
  /** Results longer than this are not checked for error text. */
  errorTextMaxChars: number;
}

/** The defaults of {@link QualityRuleData}. */
export const DEFAULT_QUALITY_RULE_DATA: QualityRuleData = Object.freeze({
  searchToolPattern: /search|lookup|retriev|query/i,
  pageToolPattern: /fetch|browse|scrape|crawl|read_?url|web_?page|visit|open_?url|extract/i,
  emptySearchPatterns: [
    /^\s*$/,
    /^\s*(\[\s*\]|\{\s*\})\s*$/,
    /^\s*(no|0|zero)\s+(search\s+)?results?(\s+(were\s+)?found)?\b.{0,80}$/is,
    /^\s*(nothing|no matches|no documents?)\s+(was\s+|were\s+)?found\b.{0,80}$/is,
    /^\s*(没有|未)(找到|搜索到)(任何)?(相关)?(结果|内容|信息)?.{0,40}$/s,
    /^\s*(无|暂无)(搜索)?结果.{0,40}$/s,
  ],
  searchResultFields: [
    'results',
    'items',
    'hits',
    'documents',
    'organic',
    'organic_results',
    'data',
    'web',
  ],
  minPageChars: 40,
  blockedPagePatterns: [
    /captcha/i,
    /are you (a )?(robot|human)/i,
    /verify (that )?you are (a )?human/i,
    /checking (if the site connection is secure|your browser)/i,
    /enable javascript and cookies to continue/i,
    /access (to this page has been )?denied/i,
    /\b(403 forbidden|429 too many requests)\b/i,
    /unusual traffic from your (computer )?network/i,
    /request (was )?blocked/i,
    /请(输入|完成)验证码|人机验证|安全验证|访问(被)?拒绝|请求过于频繁/,
  ],
  blockedPageMaxChars: 3000,
  errorTextPatterns: [
    /^\s*(error|exception|fatal)\b\s*[:：]/i,
    /^\s*traceback \(most recent call last\)/i,
    /^\s*(failed|unable) to\b/i,
    /^\s*\{\s*"error"\s*:/,
    /^\s*(错误|失败|异常)\s*[:：]/,
  ],
  errorTextMaxChars: 2000,
}) as QualityRuleData;

/**
 * The built-in rules, driven by `data`:
 * - `unknown_tool`: the model called a tool that does not exist;
 * - `error_text`: a successful result that is an error message in disguise;
 * - `empty_search_results`: a search tool found nothing;
 * - `empty_page`: a page reader got (almost) no text;
 * - `blocked_page`: a page reader got a captcha, bot check or access-denied page.
 */
export function builtinQualityRules(
  data: QualityRuleData = DEFAULT_QUALITY_RULE_DATA,
): QualityRule[] {
  return [
    {
      name: 'unknown_tool',
      description: 'The model called a tool that does not exist.',
      check: ({ response, toolName }) =>
        response.isError && response.metadata?.error?.code === 'tool_not_found'
          ? `the tool "${toolName}" does not exist`
          : undefined,
    },
    {
      name: 'error_text',
      description:
        'A successful result whose text is an error message (starts with "Error:", a Python traceback…).',
      check: ({ response, text }) => {
        if (response.isError || text.length > data.errorTextMaxChars) return undefined;
        return data.errorTextPatterns.some((pattern) => pattern.test(text))
          ? `the result is an error message: ${firstLine(text)}`
          : undefined;
      },
    },
    {
      name: 'empty_search_results',
      description:
        'A search tool returned no results (empty text, "No results found", an empty result list).',
      check: ({ response, text, kind }) => {
        if (response.isError || kind !== 'search' || hasMedia(response)) return undefined;
        if (data.emptySearchPatterns.some((pattern) => pattern.test(text)))
          return 'the search returned no results';
        for (const block of response.content) {
          const value =
            block.type === 'json'
              ? block.value
              : block.type === 'text'
                ? parseJsonObject(block.text)
                : undefined;
          if (isEmptyResultSet(value, data.searchResultFields))
            return 'the search returned no results';
        }
        return undefined;
      },
    },
    {
      name: 'empty_page',
      description: `A page reader returned fewer than ${data.minPageChars} characters of text.`,
      check: ({ response, text, kind }) => {
        if (response.isError || kind !== 'page' || hasMedia(response)) return undefined;
        return text.replace(/\s+/g, '').length < data.minPageChars
          ? 'the page has no readable text'
          : undefined;
      },
    },
    {
      name: 'blocked_page',
      description:
        'A page reader got a captcha, bot check or access-denied page instead of content.',
      check: ({ response, text, kind }) => {
        if (response.isError || kind !== 'page' || text.length > data.blockedPageMaxChars)
          return undefined;
        const hit = data.blockedPagePatterns.find((pattern) => pattern.test(text));
        return hit
          ? `the page is a captcha or access-denied page (matched ${hit.source.slice(0, 40)})`
          : undefined;
      },
    },
  ];
}

function firstLine(text: string): string {
  const line = text.trim().split('\n', 1)[0] ?? '';
  return line.length > 120 ? `${line.slice(0, 120)}…` : line;
}

function hasMedia(response: ToolResponse): boolean {
  return response.content.some((block) => block.type === 'image' || block.type === 'file');
}

function parseJsonObject(text: string): unknown {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{') || text.length > 100_000) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isEmptyResultSet(value: unknown, fields: string[]): boolean {
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  const present = fields.filter((field) => Array.isArray(record[field]));
  return present.length > 0 && present.every((field) => (record[field] as unknown[]).length === 0);
}

/** Options of {@link resultQuality}. */
export interface ResultQualityOptions {
  /** The rules. Default {@link builtinQualityRules}(). */
  rules?: QualityRule[];
  /** Tool kinds by tool name, overriding the name patterns (`null` for neither). */
  kinds?: Record<string, ToolKind | null>;
  /** The data the kind patterns come from. Default {@link DEFAULT_QUALITY_RULE_DATA}. */
  data?: Pick<QualityRuleData, 'searchToolPattern' | 'pageToolPattern'>;
  /**
   * After this many rollbacks in a row in one namespace, the next useless result is delivered
   * as it is (with `metadata.governance.rollbackSuppressed`), so an agent loop cannot spin
   * forever. Default 3.
   */
  maxConsecutiveRollbacks?: number;
  /** Where a throwing rule is reported. Default: the call's logger. */
  logger?: Logger;
}

/** The result quality middleware; see {@link resultQuality}. */
export interface ResultQualityMiddleware extends GovernanceMiddleware {
  /** Rollbacks in a row so far in a namespace. */
  consecutiveRollbacks(namespace?: string): number;
  reset(namespace?: string): void;
}

/**
 * Middleware that judges each result with quality rules and marks a useless one
 * `metadata.rollback = { reason }`, so an agent loop can drop the turn and ask the model to
 * try differently. The first rule that fires wins; a rule that throws is logged and ignored.
 *
 * @example
 * ```ts
 * toolkit.use(resultQuality({ kinds: { my_finder: 'search' }, maxConsecutiveRollbacks: 2 }));
 * ```
 */
export function resultQuality(options: ResultQualityOptions = {}): ResultQualityMiddleware {
  const rules = options.rules ?? builtinQualityRules();
  const data = options.data ?? DEFAULT_QUALITY_RULE_DATA;
  const max = options.maxConsecutiveRollbacks ?? 3;
  const streaks = new Map<string, number>();
  const kinds = new Map<string, ToolKind | undefined>();
  const kindOf = (name: string): ToolKind | undefined => {
    if (options.kinds && Object.prototype.hasOwnProperty.call(options.kinds, name))
      return options.kinds[name] ?? undefined;
    if (!kinds.has(name)) {
      kinds.set(
        name,
        data.searchToolPattern.test(name)
          ? 'search'
          : data.pageToolPattern.test(name)
            ? 'page'
            : undefined,
      );
    }
    return kinds.get(name);
  };

  return createGovernanceMiddleware(
    'resultQuality',
    async (invocation: ToolInvocation, next) => {
      const response = await next(invocation);
      const namespace = namespaceOf(invocation);
      if (response.metadata?.rollback !== undefined) return response;
      const input: QualityCheck = {
        toolName: invocation.name,
        response,
        text: '',
        kind: kindOf(invocation.name),
      };
      input.text = responseText(response);
      let reason: string | undefined;
      for (const rule of rules) {
        try {
          reason = rule.check(input);
        } catch (error) {
          (options.logger ?? invocation.context.logger).warn('result quality rule threw; ignored', {
            rule: rule.name,
            tool: invocation.name,
            error: errorMessage(error),
          });
          reason = undefined;
        }
        if (reason !== undefined) break;
      }
      if (reason === undefined) {
        streaks.delete(namespace);
        return response;
      }
      const streak = (streaks.get(namespace) ?? 0) + 1;
      if (streak > max) {
        streaks.delete(namespace);
        return annotate(response, { rollbackSuppressed: reason });
      }
      streaks.set(namespace, streak);
      return { ...response, metadata: { ...response.metadata, rollback: { reason } } };
    },
    {
      consecutiveRollbacks: (namespace = 'default'): number => streaks.get(namespace) ?? 0,
      reset: (namespace?: string): void => {
        if (namespace === undefined) streaks.clear();
        else streaks.delete(namespace);
      },
    },
  );
}
