import type { JsonSchema, Logger, ToolResponse } from '@quiver/core';
import { errorMessage, textBlock } from '@quiver/core';
import type { ToolInvocation } from '@quiver/core-registry';
import type { GovernanceMiddleware } from './governance-middleware.js';
import { createGovernanceMiddleware } from './governance-middleware.js';
import { annotate } from './governance-metadata.js';

/** One change argument repair made. */
export interface ArgumentRepair {
  /** Where the repaired value now is, e.g. `["options", "max_results"]`. */
  path: (string | number)[];
  /**
   * `alias` (a configured alias map), `rename` (an unknown key matched a schema property),
   * `coerce` (a scalar converted, e.g. `"5"` → 5), `wrap` (a lone value put in an array),
   * `parse` (a JSON string turned into the array or object the schema wants), `enum-case`
   * (an enum value in the wrong case), `rule` (a custom repair rule).
   */
  kind: 'alias' | 'rename' | 'coerce' | 'wrap' | 'parse' | 'enum-case' | 'rule';
  /** The key the model used, for `alias` and `rename`. */
  from?: string;
  /** What was done, in words. */
  detail: string;
}

/** The outcome of {@link repairArguments}. */
export interface RepairResult {
  /** The repaired arguments: a new object when anything changed, else the input itself. */
  arguments: Record<string, unknown>;
  repairs: ArgumentRepair[];
}

/** A custom repair: return changed arguments (a new object), or `undefined` for no change. */
export interface RepairRule {
  name: string;
  repair(
    args: Readonly<Record<string, unknown>>,
    context: { toolName: string; schema: JsonSchema },
  ): Record<string, unknown> | undefined;
}

/** Options of {@link repairArguments}. */
export interface RepairOptions {
  /** Wrong key → schema key, applied first at the top level (e.g. `{ introduction: 'info_to_extract' }`). */
  aliases?: Record<string, string>;
  /** Schema-driven repair (renames, coercions, wrapping). Default true. */
  schemaRepair?: boolean;
  /** Groups of interchangeable parameter names. Default {@link DEFAULT_SYNONYMS}. */
  synonyms?: readonly (readonly string[])[];
  /**
   * Largest edit distance between normalised names for a rename: names of up to 5 characters
   * allow 1, longer ones this value. Default 2; 0 turns edit-distance matching off.
   */
  maxEditDistance?: number;
}

/**
 * Interchangeable parameter names models mix up. Two names match when both are in one group
 * (compared after normalisation: lower case, no `_`/`-`/spaces, camelCase split).
 */
export const DEFAULT_SYNONYMS: readonly (readonly string[])[] = Object.freeze([
  [
    'query',
    'q',
    'search',
    'search_query',
    'search_term',
    'keywords',
    'keyword',
    'question',
    'query_text',
  ],
  ['url', 'uri', 'link', 'href', 'website', 'webpage', 'page_url'],
  ['path', 'file', 'file_path', 'filename', 'file_name', 'pathname'],
  ['max_results', 'limit', 'count', 'num_results', 'top_k', 'max_items', 'number_of_results'],
  ['language', 'lang', 'locale'],
  ['content', 'body', 'text'],
  ['code', 'source', 'script', 'program', 'source_code'],
  ['command', 'cmd'],
  ['location', 'city', 'place'],
  ['prompt', 'instruction', 'instructions'],
  ['description', 'desc'],
]);

const synonymIndexCache = new WeakMap<readonly (readonly string[])[], Map<string, number>>();

function synonymIndex(groups: readonly (readonly string[])[]): Map<string, number> {
  let index = synonymIndexCache.get(groups);
  if (index === undefined) {
    index = new Map();
    groups.forEach((group, position) => {
      for (const name of group) index!.set(normalizeName(name), position);
    });
    synonymIndexCache.set(groups, index);
  }
  return index;
}

/** @internal `maxResults`, `max-results`, `MAX_RESULTS` → `maxresults`. */
export function normalizeName(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[\s_\-.]+/g, '');
}

/**
 * @internal Edit distance counting insertions, deletions, substitutions and swaps of adjacent
 * characters (optimal string alignment: `queyr` is one edit from `query`), stopping early once
 * it exceeds `limit`.
 */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, before[j - 2]! + 1);
      current.push(value);
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > limit) return limit + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}

interface Walk {
  root: JsonSchema;
  repairs: ArgumentRepair[];
  synonyms: Map<string, number>;
  maxEditDistance: number;
}

/**
 * Repair a model's tool arguments against the tool's JSON Schema, conservatively: a change is
 * made only when exactly one reading is possible, so a repair never changes what the model
 * meant. Ambiguous cases are left for validation to report.
 *
 * - an alias (configured) or an unknown key that matches exactly one missing property — by
 *   normalised name, then synonym, then edit distance — is renamed (never over an existing key);
 * - a scalar of the wrong type is converted when the schema wants exactly one type and the text
 *   is unambiguous (`"5"` → 5, `"true"` → true, 5 → `"5"`);
 * - a lone value becomes `[value]` for an array, a JSON string becomes the array or object the
 *   schema wants, an enum value in the wrong case becomes the enum's spelling;
 * - nested objects and array items are repaired the same way.
 *
 * The input is never mutated.
 *
 * @param args - the parsed arguments
 * @param schema - the tool's parameter schema (root `type: "object"`)
 * @param options - aliases and matching settings
 * @returns the repaired arguments and the list of repairs
 * @example
 * ```ts
 * const schema = { type: 'object', properties: { query: { type: 'string' }, max_results: { type: 'integer' } } };
 * repairArguments({ q: 'quiver', maxResults: '5' }, schema).arguments; // { query: 'quiver', max_results: 5 }
 * ```
 */
export function repairArguments(
  args: Record<string, unknown>,
  schema: JsonSchema,
  options: RepairOptions = {},
): RepairResult {
  const repairs: ArgumentRepair[] = [];
  let value = args;
  if (options.aliases !== undefined) value = applyAliases(value, options.aliases, repairs);
  if (options.schemaRepair !== false) {
    const walk: Walk = {
      root: schema,
      repairs,
      synonyms: synonymIndex(options.synonyms ?? DEFAULT_SYNONYMS),
      maxEditDistance: options.maxEditDistance ?? 2,
    };
    value = repairObject(value, schema, [], walk);
  }
  return { arguments: value, repairs };
}

function applyAliases(
  args: Record<string, unknown>,
  aliases: Record<string, string>,
  repairs: ArgumentRepair[],
): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const [from, to] of Object.entries(aliases)) {
    if (
      from === to ||
      !hasOwn(args, from) ||
      hasOwn(args, to) ||
      (out !== undefined && hasOwn(out, to))
    )
      continue;
    out ??= { ...args };
    out[to] = out[from];
    delete out[from];
    repairs.push({
      path: [to],
      kind: 'alias',
      from,
      detail: `renamed "${from}" to "${to}" (alias)`,
    });
  }
  return out ?? args;
}

function hasOwn(object: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

function resolve(
  schema: JsonSchema | boolean | undefined,
  root: JsonSchema,
): JsonSchema | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  let node: JsonSchema | undefined = schema;
  for (let depth = 0; node?.$ref !== undefined && depth < 8; depth++) {
    const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(node.$ref);
    if (!match) return undefined;
    const table = match[1] === '$defs' ? root.$defs : root.definitions;
    node = table?.[decodeURIComponent(match[2]!.replace(/~1/g, '/').replace(/~0/g, '~'))];
  }
  return node;
}

function repairObject(
  value: Record<string, unknown>,
  schema: JsonSchema,
  path: (string | number)[],
  walk: Walk,
): Record<string, unknown> {
  const properties = schema.properties;
  if (properties === undefined) return value;
  let out: Record<string, unknown> | undefined;

  // 1. Renames: only where unknown keys are not data (additionalProperties absent or false).
  const open = schema.additionalProperties !== undefined && schema.additionalProperties !== false;
  if (!open && schema.patternProperties === undefined) {
    const unknown = Object.keys(value).filter((key) => !hasOwn(properties, key));
    if (unknown.length > 0) {
      const missing = Object.keys(properties).filter((key) => !hasOwn(value, key));
      const chosen = new Map<string, string[]>();
      for (const key of unknown) {
        const target = matchProperty(key, missing, walk);
        if (target === undefined) continue;
        const property = resolve(properties[target], walk.root);
        // A value that cannot be read as the target's type suggests another meaning: leave it.
        if (
          property !== undefined &&
          coerce(value[key], property, [], { ...walk, repairs: [] }) === NO_FIT
        )
          continue;
        chosen.set(target, [...(chosen.get(target) ?? []), key]);
      }
      for (const [target, keys] of chosen) {
        if (keys.length !== 1) continue; // two unknown keys want the same property: ambiguous
        const key = keys[0]!;
        out ??= { ...value };
        out[target] = out[key];
        delete out[key];
        walk.repairs.push({
          path: [...path, target],
          kind: 'rename',
          from: key,
          detail: `renamed "${key}" to "${target}"`,
        });
      }
    }
  }

  // 2. Values: coerce scalars, wrap lone values, recurse into objects and arrays.
  const source = out ?? value;
  for (const key of Object.keys(source)) {
    const property = resolve(properties[key], walk.root);
    if (property === undefined) continue;
    const item = source[key];
    const repaired = coerce(item, property, [...path, key], walk);
    if (repaired !== NO_FIT && repaired !== item) {
      out ??= { ...value };
      out[key] = repaired;
    }
  }
  return out ?? value;
}

function matchProperty(key: string, missing: string[], walk: Walk): string | undefined {
  if (missing.length === 0) return undefined;
  const normalized = normalizeName(key);
  const levels: ((candidate: string) => boolean)[] = [
    (candidate) => normalizeName(candidate) === normalized,
    (candidate) => {
      const group = walk.synonyms.get(normalized);
      return group !== undefined && walk.synonyms.get(normalizeName(candidate)) === group;
    },
    (candidate) => {
      const other = normalizeName(candidate);
      if (walk.maxEditDistance <= 0 || Math.min(other.length, normalized.length) < 3) return false;
      const limit = Math.min(other.length, normalized.length) <= 5 ? 1 : walk.maxEditDistance;
      return editDistance(normalized, other, limit) <= limit;
    },
  ];
  for (const test of levels) {
    const candidates = missing.filter(test);
    if (candidates.length === 1) return candidates[0];
    if (candidates.length > 1) return undefined; // ambiguous at this level: do not guess further
  }
  return undefined;
}

/** Marker: the value does not fit the schema and cannot be made to, unambiguously. */
const NO_FIT = Symbol('no-fit');

type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | 'null';

function typesOf(schema: JsonSchema): JsonType[] | undefined {
  if (schema.type === undefined) return undefined;
  return (Array.isArray(schema.type) ? schema.type : [schema.type]) as JsonType[];
}

function fits(value: unknown, type: JsonType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'null':
      return value === null;
  }
  return false;
}

const INTEGER_TEXT = /^\s*-?\d+(\.0+)?\s*$/;
const NUMBER_TEXT = /^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

/**
 * The value repaired to fit `schema`: the same value when it fits (children repaired), a new
 * value when one unambiguous conversion makes it fit, NO_FIT otherwise. Records repairs.
 */
function coerce(
  value: unknown,
  schema: JsonSchema,
  path: (string | number)[],
  walk: Walk,
): unknown {
  if (value === null || value === undefined) return value;
  let types = typesOf(schema);
  if (types === undefined) {
    const branches = (schema.anyOf ?? schema.oneOf)?.map((branch) => resolve(branch, walk.root));
    if (branches === undefined || branches.some((branch) => branch === undefined))
      return withEnum(value, schema, path, walk);
    const concrete = branches.filter(
      (branch) => !typesOf(branch!)?.every((type) => type === 'null'),
    );
    const fitting = concrete.filter(
      (branch) => typesOf(branch!)?.some((type) => fits(value, type)) ?? true,
    );
    if (fitting.length === 1) return coerce(value, fitting[0]!, path, walk);
    if (fitting.length > 1) return value; // several branches accept it: leave it to validation
    return concrete.length === 1 ? coerce(value, concrete[0]!, path, walk) : NO_FIT;
  }
  types = types.filter((type) => type !== 'null');
  const fitting = types.find(
    (type) => fits(value, type) || (type === 'number' && Number.isInteger(value)),
  );
  if (fitting !== undefined) {
    if (fitting === 'object')
      return repairObject(value as Record<string, unknown>, schema, path, walk);
    if (fitting === 'array') return repairArray(value as unknown[], schema, path, walk);
    return withEnum(value, schema, path, walk);
  }
  if (types.length !== 1) return NO_FIT; // e.g. "5" for string|integer would be a guess either way
  const type = types[0]!;
  const record = (kind: ArgumentRepair['kind'], detail: string) =>
    walk.repairs.push({ path, kind, detail });
  switch (type) {
    case 'integer':
    case 'number':
      if (
        typeof value === 'string' &&
        (type === 'integer' ? INTEGER_TEXT : NUMBER_TEXT).test(value)
      ) {
        const number = Number(value);
        if (Number.isFinite(number) && (type === 'number' || Number.isSafeInteger(number))) {
          record(
            'coerce',
            `converted the string ${JSON.stringify(value)} to the ${type} ${number}`,
          );
          return number;
        }
      }
      return NO_FIT;
    case 'boolean':
      if (typeof value === 'string' && /^\s*(true|false)\s*$/i.test(value)) {
        const flag = value.trim().toLowerCase() === 'true';
        record('coerce', `converted the string ${JSON.stringify(value)} to the boolean ${flag}`);
        return flag;
      }
      return NO_FIT;
    case 'string':
      if (typeof value === 'number' && Number.isFinite(value)) {
        record('coerce', `converted the number ${value} to the string "${value}"`);
        return withEnum(String(value), schema, path, walk);
      }
      return NO_FIT;
    case 'array': {
      if (typeof value === 'string' && value.trimStart().startsWith('[')) {
        const parsed = tryJson(value);
        if (Array.isArray(parsed)) {
          record('parse', 'read the JSON text as the array it contains');
          return repairArray(parsed, schema, path, walk);
        }
      }
      const items = resolve(schema.items as JsonSchema | undefined, walk.root);
      if (Array.isArray(schema.items)) return NO_FIT; // tuple: which position is a guess
      const probe: Walk = { ...walk, repairs: [] };
      const item = items === undefined ? value : coerce(value, items, [...path, 0], probe);
      if (item === NO_FIT) return NO_FIT;
      record('wrap', 'put the single value in an array');
      walk.repairs.push(...probe.repairs);
      return [item];
    }
    case 'object': {
      if (typeof value === 'string' && value.trimStart().startsWith('{')) {
        const parsed = tryJson(value);
        if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
          record('parse', 'read the JSON text as the object it contains');
          return repairObject(parsed as Record<string, unknown>, schema, path, walk);
        }
      }
      return NO_FIT;
    }
    default:
      return NO_FIT;
  }
}

function repairArray(
  value: unknown[],
  schema: JsonSchema,
  path: (string | number)[],
  walk: Walk,
): unknown[] {
  const items = Array.isArray(schema.items) ? undefined : resolve(schema.items, walk.root);
  if (items === undefined) return value;
  let out: unknown[] | undefined;
  value.forEach((item, index) => {
    const repaired = coerce(item, items, [...path, index], walk);
    if (repaired !== NO_FIT && repaired !== item) {
      out ??= [...value];
      out[index] = repaired;
    }
  });
  return out ?? value;
}

function withEnum(
  value: unknown,
  schema: JsonSchema,
  path: (string | number)[],
  walk: Walk,
): unknown {
  const options = schema.enum;
  if (typeof value !== 'string' || options === undefined || options.includes(value)) return value;
  const wanted = value.trim().toLowerCase();
  const matches = options.filter(
    (option) => typeof option === 'string' && option.toLowerCase() === wanted,
  );
  if (matches.length !== 1) return value;
  walk.repairs.push({
    path,
    kind: 'enum-case',
    detail: `read ${JSON.stringify(value)} as the enum value ${JSON.stringify(matches[0])}`,
  });
  return matches[0];
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Options of {@link argumentRepair}. */
export interface ArgumentRepairOptions extends Omit<RepairOptions, 'aliases'> {
  /** Alias maps by tool name (wrong key → schema key); `*` applies to every tool. */
  aliases?: Record<string, Record<string, string>>;
  /** Custom rules, run after the alias map and before schema repair. A rule that throws is logged and skipped. */
  rules?: RepairRule[];
  /** Tell the model what was repaired (a short note appended to the result). Default false. */
  tellModel?: boolean;
  /** Where a failing rule is reported. Default: the call's logger. */
  logger?: Logger;
}

/** The argument repair middleware; see {@link argumentRepair}. */
export type ArgumentRepairMiddleware = GovernanceMiddleware;

/**
 * Middleware that repairs a call's arguments before the tool validates them (see
 * {@link repairArguments}) and records the repairs in `metadata.governance.repairs`.
 *
 * @example
 * ```ts
 * toolkit.use(argumentRepair({ aliases: { web_extract: { introduction: 'info_to_extract' } } }));
 * ```
 */
export function argumentRepair(options: ArgumentRepairOptions = {}): ArgumentRepairMiddleware {
  const globalAliases = options.aliases?.['*'];
  const repairOptions: RepairOptions = {
    ...(options.schemaRepair !== undefined ? { schemaRepair: options.schemaRepair } : {}),
    ...(options.synonyms !== undefined ? { synonyms: options.synonyms } : {}),
    ...(options.maxEditDistance !== undefined ? { maxEditDistance: options.maxEditDistance } : {}),
  };
  const rules = options.rules ?? [];
  return createGovernanceMiddleware(
    'argumentRepair',
    async (invocation: ToolInvocation, next) => {
      const tool = invocation.tool;
      const original = invocation.arguments;
      if (tool === undefined || original === undefined || invocation.name !== tool.name)
        return next(invocation);
      const schema = tool.modelParameters;
      const repairs: ArgumentRepair[] = [];
      let args = original;
      const toolAliases = options.aliases?.[tool.name];
      const aliases =
        globalAliases && toolAliases
          ? { ...globalAliases, ...toolAliases }
          : (toolAliases ?? globalAliases);
      if (aliases !== undefined) args = applyAliases(args, aliases, repairs);
      for (const rule of rules) {
        try {
          const changed = rule.repair(args, { toolName: tool.name, schema });
          if (changed !== undefined && changed !== args) {
            args = changed;
            repairs.push({
              path: [],
              kind: 'rule',
              detail: `applied the repair rule "${rule.name}"`,
            });
          }
        } catch (error) {
          (options.logger ?? invocation.context.logger).warn(
            'argument repair rule threw; skipped',
            {
              rule: rule.name,
              tool: tool.name,
              error: errorMessage(error),
            },
          );
        }
      }
      const result = repairArguments(args, schema, repairOptions);
      repairs.push(...result.repairs);
      if (repairs.length === 0) return next(invocation);
      const response = await next({ ...invocation, arguments: result.arguments });
      const annotated = annotate(response, { repairs, repairedArguments: result.arguments });
      if (!options.tellModel) return annotated;
      return appendNote(
        annotated,
        `Note: your arguments were repaired before the call: ${repairs.map((repair) => repair.detail).join('; ')}.`,
      );
    },
    {},
  );
}

/** @internal Append a text note to a response. */
export function appendNote(response: ToolResponse, note: string): ToolResponse {
  return { ...response, content: [...response.content, textBlock(`\n\n${note}`)] };
}
