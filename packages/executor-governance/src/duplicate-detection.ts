import type { ToolResponse } from '@quiver/core';
import { errorResponse, responseText } from '@quiver/core';
import type { ToolInvocation } from '@quiver/core-registry';
import { appendNote } from './argument-repair.js';
import { canonicalJson } from './canonical-json.js';
import { DuplicateCallRefusedError } from './errors.js';
import type { GovernanceMiddleware } from './governance-middleware.js';
import { createGovernanceMiddleware, namespaceOf, perTool } from './governance-middleware.js';
import { annotate, replayable } from './governance-metadata.js';

/** What to do with a repeat of an identical call (before `refuseAfter` is reached). */
export type DuplicateAction = 'allow' | 'warn' | 'cache';

/** Duplicate handling of one tool. */
export interface DuplicatePolicy {
  /**
   * `allow`: run it; `warn`: run it and add a note telling the model it already made this call
   * and what came back; `cache`: return the earlier successful result (with the note) without
   * running the tool. Default `warn`.
   */
  action?: DuplicateAction;
  /** Refuse identical calls beyond this many (the call numbered N+1 and later). Default: never. */
  refuseAfter?: number;
  /**
   * Argument fields that identify the query (e.g. `['query']`); their string values are
   * compared case-insensitively with whitespace collapsed. Default: every validated argument.
   */
  keyFields?: string[];
}

/** Options of {@link duplicateDetection}. */
export interface DuplicateDetectionOptions extends DuplicatePolicy {
  /** Per-tool overrides, merged over the defaults above. */
  tools?: Record<string, DuplicatePolicy>;
  /** Distinct keys remembered per namespace; the oldest are forgotten first. Default 1000. */
  maxEntries?: number;
  /** Characters of the earlier result quoted in the note. Default 300. */
  quoteChars?: number;
}

interface Entry {
  count: number;
  /** The earlier successful result (for `cache`), or the call in flight. */
  result: Promise<ToolResponse> | undefined;
  summary: string | undefined;
}

/** The duplicate detection middleware; see {@link duplicateDetection}. */
export interface DuplicateDetectionMiddleware extends GovernanceMiddleware {
  /** Forget the history of one namespace, or of all. */
  reset(namespace?: string): void;
}

/**
 * Middleware that notices when the model repeats a call. The key is the tool name plus the
 * canonical JSON of the validated arguments (defaults applied, so `{q}` and `{q, limit: 10}`
 * match when 10 is the default), or of the configured `keyFields`. Counts are kept per
 * namespace (`context.namespace`, e.g. main agent vs sub-agent). Every tool takes part,
 * including tools registered later.
 *
 * Concurrent identical calls under `cache`: the second waits for the first.
 *
 * @example
 * ```ts
 * toolkit.use(duplicateDetection({ action: 'warn', refuseAfter: 3, tools: { web_search: { keyFields: ['query'] } } }));
 * ```
 */
export function duplicateDetection(
  options: DuplicateDetectionOptions = {},
): DuplicateDetectionMiddleware {
  const namespaces = new Map<string, Map<string, Entry>>();
  const maxEntries = options.maxEntries ?? 1000;
  const quoteChars = options.quoteChars ?? 300;
  const policyOf = (
    name: string,
  ): Required<Omit<DuplicatePolicy, 'keyFields'>> & Pick<DuplicatePolicy, 'keyFields'> => {
    const own = perTool(name, options.tools, undefined);
    return {
      action: own?.action ?? options.action ?? 'warn',
      refuseAfter: own?.refuseAfter ?? options.refuseAfter ?? Number.POSITIVE_INFINITY,
      keyFields: own?.keyFields ?? options.keyFields,
    };
  };
  const keyOf = (
    invocation: ToolInvocation,
    keyFields: string[] | undefined,
  ): string | undefined => {
    const args = invocation.arguments;
    if (args === undefined) return undefined;
    let validated: Record<string, unknown> = args;
    const tool = invocation.tool;
    if (tool !== undefined && tool.name === invocation.name) {
      const result = tool.tool.validate(tool.presetArgs ? { ...args, ...tool.presetArgs } : args);
      if (result.ok) validated = result.value;
    }
    if (keyFields === undefined) return `${invocation.name}\u0000${canonicalJson(validated)}`;
    const picked: Record<string, unknown> = {};
    for (const field of keyFields) picked[field] = looseKey(validated[field]);
    return `${invocation.name}\u0000${canonicalJson(picked)}`;
  };
  const tableOf = (namespace: string): Map<string, Entry> => {
    let table = namespaces.get(namespace);
    if (table === undefined) namespaces.set(namespace, (table = new Map()));
    return table;
  };

  return createGovernanceMiddleware(
    'duplicateDetection',
    async (invocation, next) => {
      const policy = policyOf(invocation.name);
      const key = keyOf(invocation, policy.keyFields);
      if (key === undefined) return next(invocation);
      const table = tableOf(namespaceOf(invocation));
      const entry = table.get(key);
      if (entry === undefined) {
        if (table.size >= maxEntries) table.delete(table.keys().next().value!);
        const created: Entry = { count: 1, result: undefined, summary: undefined };
        table.set(key, created);
        const running = next(invocation);
        created.result = running;
        const response = await running;
        remember(created, response, quoteChars);
        return response;
      }
      entry.count++;
      const count = entry.count;
      if (count > policy.refuseAfter) {
        return annotate(
          errorResponse(new DuplicateCallRefusedError(invocation.name, count, entry.summary)),
          {
            duplicate: { count, action: 'refused' },
          },
        );
      }
      if (policy.action === 'cache' && entry.result !== undefined) {
        const earlier = await entry.result;
        if (!earlier.isError) {
          return appendNote(
            annotate(replayable(earlier), { duplicate: { count, action: 'cached' } }),
            repeatNote(invocation.name, count, undefined),
          );
        }
      }
      const response = await next(invocation);
      const previousSummary = entry.summary;
      entry.result = Promise.resolve(response);
      remember(entry, response, quoteChars);
      if (policy.action === 'allow')
        return annotate(response, { duplicate: { count, action: 'allowed' } });
      return appendNote(
        annotate(response, { duplicate: { count, action: 'warned' } }),
        repeatNote(invocation.name, count, previousSummary),
      );
    },
    {
      reset(namespace?: string): void {
        if (namespace === undefined) namespaces.clear();
        else namespaces.delete(namespace);
      },
    },
  );
}

function remember(entry: Entry, response: ToolResponse, quoteChars: number): void {
  if (response.isError) {
    entry.result = undefined;
    return;
  }
  const text = responseText(response).replace(/\s+/g, ' ').trim();
  entry.summary =
    text.length > quoteChars ? `${text.slice(0, quoteChars)}…` : text || '(an empty result)';
}

function repeatNote(toolName: string, count: number, earlier: string | undefined): string {
  const times = count === 2 ? 'once before' : `${count - 1} times before`;
  return (
    `Note: you already called "${toolName}" with these same arguments ${times}` +
    (earlier !== undefined
      ? `; the earlier result began: ${earlier}`
      : '; this is the same result as before') +
    '. Do not repeat the call: use that result, change the arguments, or try another approach.'
  );
}

function looseKey(value: unknown): unknown {
  return typeof value === 'string' ? value.replace(/\s+/g, ' ').trim().toLowerCase() : value;
}
