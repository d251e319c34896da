import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { AnySchema, ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { z } from 'zod';
import type { ArgumentIssue, JsonSchema, JsonSchemaObject } from '@quiver/core';

/** A zod 4 schema (also `zod/v4` from zod 3.25), recognised structurally so any copy of zod works. */
export type ZodSchema<T = unknown> = z.ZodType<T>;

/** Tool parameters: a zod object schema, or a JSON Schema whose root is an object. */
export type ParametersSchema<TArgs = Record<string, unknown>> =
  ZodSchema<TArgs> | JsonSchemaObject | JsonSchema;

/** @internal The outcome of validating arguments against a tool's schema. */
export type ValidationResult =
  { ok: true; value: Record<string, unknown> } | { ok: false; issues: ArgumentIssue[] };

/** @internal A compiled parameter schema: the JSON Schema the model sees, and a validator. */
export interface CompiledSchema {
  readonly jsonSchema: JsonSchemaObject;
  validate(args: Record<string, unknown>): ValidationResult;
}

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as (ajv: Ajv | Ajv2020) => void;

let ajv2020: Ajv2020 | undefined;
let ajv07: Ajv | undefined;

// `logger: false`: an unknown `format` (MCP servers use some, e.g. "json") is ignored, as the spec
// says; ajv would also print a console warning for each one, which is noise in a user's terminal.
function validatorFor(schema: JsonSchema): Ajv | Ajv2020 {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (
    /draft-0[4-7]/.test(dialect) ||
    (schema.definitions !== undefined && schema.$defs === undefined)
  ) {
    ajv07 ??= configure(
      new Ajv({ allErrors: true, strict: false, useDefaults: true, logger: false }),
    );
    return ajv07;
  }
  ajv2020 ??= configure(
    new Ajv2020({ allErrors: true, strict: false, useDefaults: true, logger: false }),
  );
  return ajv2020;
}

function configure<T extends Ajv | Ajv2020>(ajv: T): T {
  addFormats(ajv);
  return ajv;
}

/** True when `value` is a zod schema. */
export function isZodSchema(value: unknown): value is ZodSchema {
  return typeof value === 'object' && value !== null && '_zod' in value && 'safeParse' in value;
}

/**
 * @internal Compile tool parameters into the model-facing JSON Schema and a validator.
 * @throws Error when the schema is invalid (the caller wraps it into a ToolRegistrationError)
 */
export function compileSchema(parameters: ParametersSchema): CompiledSchema {
  return isZodSchema(parameters)
    ? compileZod(parameters)
    : compileJsonSchema(parameters as JsonSchema);
}

function compileZod(schema: ZodSchema): CompiledSchema {
  const input = cleanZodJsonSchema(
    z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema,
  );
  if (input.type !== 'object') {
    throw new Error(
      `tool parameters must be a zod object schema (z.object), got JSON Schema type ${JSON.stringify(input.type)}`,
    );
  }
  const output = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
  const closed = output.additionalProperties === false;
  const known = new Set(Object.keys(input.properties ?? {}));
  if (closed) input.additionalProperties = false;
  return {
    jsonSchema: input as JsonSchemaObject,
    validate(args) {
      const issues: ArgumentIssue[] = [];
      if (closed) {
        for (const key of Object.keys(args)) {
          if (!known.has(key)) issues.push(unknownFieldIssue([key], known));
        }
      }
      const result = schema.safeParse(args);
      if (result.success && issues.length === 0)
        return { ok: true, value: result.data as Record<string, unknown> };
      if (!result.success) {
        for (const issue of result.error.issues) {
          // Unknown top-level keys were reported above, with the list of real parameters.
          if (closed && issue.code === 'unrecognized_keys' && issue.path.length === 0) continue;
          issues.push(zodIssue(issue, args, input));
        }
      }
      return { ok: false, issues };
    },
  };
}

function compileJsonSchema(schema: JsonSchema): CompiledSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new Error('tool parameters must be a JSON Schema object');
  }
  const root = { ...schema };
  if (root.type === undefined && root.properties !== undefined) root.type = 'object';
  if (root.type !== 'object') {
    throw new Error(
      `the root of a tool's parameter schema must have type "object", got ${JSON.stringify(root.type)}`,
    );
  }
  const ajv = validatorFor(root);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(root as AnySchema);
  } catch (error) {
    throw new Error(
      `invalid JSON Schema: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const jsonSchema = { ...root } as JsonSchemaObject;
  delete jsonSchema.$schema;
  delete jsonSchema.$id;
  const known = new Set(Object.keys(root.properties ?? {}));
  // ajv changes the object it validates only to fill in defaults (useDefaults): a schema without
  // any `default` validates the arguments as they are, with no copy.
  const mutates = hasDefault(root);
  return {
    jsonSchema,
    validate(args) {
      // ajv applies defaults in place: validate a copy so the caller's object is never changed.
      const copy = mutates ? structuredClone(args) : args;
      if (validate(copy)) return { ok: true, value: copy };
      return {
        ok: false,
        issues: (validate.errors ?? []).map((error) => ajvIssue(error, root, known)),
      };
    },
  };
}

/** Whether a `default` keyword appears anywhere in the schema (over-counting is harmless). */
function hasDefault(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(hasDefault);
  if (typeof node !== 'object' || node === null) return false;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'default' || hasDefault(value)) return true;
  }
  return false;
}

/** Remove what zod adds that models do not need ($schema, ±2^53 bounds on integers). */
function cleanZodJsonSchema(schema: JsonSchema): JsonSchema {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node !== 'object' || node === null) return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === '$schema') continue;
      if (
        (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) ||
        (key === 'maximum' && value === Number.MAX_SAFE_INTEGER)
      ) {
        continue;
      }
      out[key] = walk(value);
    }
    return out;
  };
  return walk(schema) as JsonSchema;
}

function unknownFieldIssue(path: (string | number)[], known: Set<string>): ArgumentIssue {
  const allowed = [...known];
  return {
    path,
    message:
      allowed.length > 0
        ? `is not a parameter of this tool; the parameters are: ${allowed.join(', ')}`
        : 'is not a parameter of this tool; it takes no parameters',
  };
}

function describeExpected(schema: JsonSchema | undefined): string {
  if (!schema) return '';
  const parts: string[] = [];
  if (schema.enum)
    parts.push(`one of ${schema.enum.map((value) => JSON.stringify(value)).join(', ')}`);
  else if (schema.type)
    parts.push(Array.isArray(schema.type) ? schema.type.join(' or ') : schema.type);
  if (schema.description) parts.push(`(${schema.description})`);
  return parts.join(' ');
}

function schemaAt(root: JsonSchema, path: readonly PropertyKey[]): JsonSchema | undefined {
  let node: JsonSchema | undefined = root;
  for (const key of path) {
    if (!node) return undefined;
    if (typeof key === 'number') node = Array.isArray(node.items) ? node.items[key] : node.items;
    else node = node.properties?.[String(key)];
  }
  return node;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  const text = JSON.stringify(value);
  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  return text && text.length <= 60 ? `${kind} ${text}` : kind;
}

function zodIssue(
  issue: z.core.$ZodIssue,
  args: Record<string, unknown>,
  jsonSchema: JsonSchema,
): ArgumentIssue {
  const path = issue.path.filter((key): key is string | number => typeof key !== 'symbol');
  const actual = valueAt(args, path);
  const expected = describeExpected(schemaAt(jsonSchema, path));
  if (issue.code === 'invalid_type' && actual === undefined) {
    return { path, message: `is required${expected ? `: ${expected}` : ''}` };
  }
  if (issue.code === 'unrecognized_keys') {
    return {
      path: [...path, ...issue.keys.slice(0, 1)],
      message: `unknown field(s) ${issue.keys.join(', ')}`,
    };
  }
  if (issue.code === 'invalid_type') {
    return {
      path,
      message: `expected ${expected || issue.expected}, got ${describeValue(actual)}`,
    };
  }
  const message = issue.message.replace(/^Invalid (input|option): /, '');
  return { path, message: `${message}; got ${describeValue(actual)}` };
}

function ajvIssue(error: ErrorObject, root: JsonSchema, known: Set<string>): ArgumentIssue {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const missing = String(params.missingProperty);
      const expected = describeExpected(schemaAt(root, [...path, missing]));
      return { path: [...path, missing], message: `is required${expected ? `: ${expected}` : ''}` };
    }
    case 'additionalProperties': {
      const extra = String(params.additionalProperty);
      const siblings =
        path.length === 0 ? known : new Set(Object.keys(schemaAt(root, path)?.properties ?? {}));
      return unknownFieldIssue([...path, extra], siblings);
    }
    case 'enum':
      return {
        path,
        message: `must be one of ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`,
      };
    case 'type':
      return { path, message: `must be ${String(params.type)}` };
    default:
      return { path, message: error.message ?? `fails the "${error.keyword}" rule` };
  }
}

/** True when a value of `null` is valid for `schema` (so `null` is a real value, not "absent"). */
export function allowsNull(schema: JsonSchema | boolean | undefined): boolean {
  if (schema === undefined || schema === true) return true;
  if (schema === false) return false;
  if (Object.keys(schema).filter((key) => key !== 'description' && key !== 'title').length === 0)
    return true;
  if (schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null')))
    return true;
  if (schema.nullable === true) return true;
  if (schema.const === null || schema.enum?.includes(null)) return true;
  return [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].some((branch) => allowsNull(branch));
}

/**
 * @internal Drop `null` values where the schema does not accept null, recursively (through
 * nested objects, array items, local `$ref`s and nullable unions): strict provider schemas make
 * optional fields nullable, and the model's `null` then means "absent".
 * Returns the same object when nothing changes.
 *
 * @param value - the parsed arguments
 * @param schema - the tool's parameter schema (its root holds the `$defs` that `$ref`s point to)
 */
export function nullsToAbsent(
  value: Record<string, unknown>,
  schema: JsonSchema,
): Record<string, unknown> {
  return stripNulls(value, schema, schema, 0) as Record<string, unknown>;
}

/** Deeper than this, arguments are left as they are (recursive schemas, hostile input). */
const MAX_NULL_DEPTH = 32;

function stripNulls(
  value: unknown,
  schema: JsonSchema | undefined,
  root: JsonSchema,
  depth: number,
): unknown {
  if (typeof value !== 'object' || value === null || depth > MAX_NULL_DEPTH) return value;
  const shape = objectShape(schema, root);
  if (shape === undefined) return value;
  if (Array.isArray(value)) {
    const items = shape.items;
    if (typeof items !== 'object' || items === null || Array.isArray(items)) return value;
    let out: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const next = stripNulls(item, items, root, depth + 1);
      if (next !== item) {
        out ??= [...value];
        out[index] = next;
      }
    }
    return out ?? value;
  }
  const properties = shape.properties;
  if (!properties) return value;
  const record = value as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(record)) {
    if (!Object.hasOwn(properties, key)) continue;
    const property = properties[key];
    const item = record[key];
    if (item === null) {
      if (allowsNull(resolveLocalRef(property, root))) continue;
      out ??= { ...record };
      delete out[key];
      continue;
    }
    const next = stripNulls(item, property, root, depth + 1);
    if (next !== item) {
      out ??= { ...record };
      out[key] = next;
    }
  }
  return out ?? value;
}

/** Follow a local `$ref` (`#/$defs/…` or `#/definitions/…`); anything else is returned as is. */
function resolveLocalRef(schema: JsonSchema | undefined, root: JsonSchema): JsonSchema | undefined {
  let node = schema;
  for (let hops = 0; hops < 8 && typeof node?.$ref === 'string'; hops++) {
    const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(node.$ref);
    const definitions = match
      ? (root[match[1] as '$defs' | 'definitions'] as Record<string, JsonSchema> | undefined)
      : undefined;
    node =
      match && definitions && Object.hasOwn(definitions, match[2]!)
        ? definitions[match[2]!]
        : undefined;
  }
  return node;
}

/** The schema that describes a non-null value: a `$ref` followed, the one non-null branch of a union picked. */
function objectShape(schema: JsonSchema | undefined, root: JsonSchema): JsonSchema | undefined {
  const node = resolveLocalRef(schema, root);
  const branches = node?.anyOf ?? node?.oneOf;
  if (!branches) return node;
  const nonNull = branches.filter((branch) => !(branch.type === 'null' || branch.const === null));
  return nonNull.length === 1 ? resolveLocalRef(nonNull[0], root) : node;
}
