import type { JsonSchema, JsonSchemaObject } from '@quiver/core';

/** The APIs whose tool-schema dialects `getJsonSchemas` can emit. */
export type SchemaTarget = 'openai' | 'openai-strict' | 'anthropic' | 'gemini';

/** The outcome of converting one schema: the converted schema, or why the target cannot express it. */
export type SchemaConversion =
  { ok: true; schema: JsonSchemaObject | undefined } | { ok: false; reason: string };

class Inexpressible extends Error {}

const MAX_DEPTH = 10;

/**
 * Convert a tool's parameter schema to what `target` accepts. Conversions only loosen what the
 * model is told (a dropped `maxLength`, say); the toolkit still validates calls against the
 * original schema, so nothing unchecked gets through. A schema the target cannot express at all
 * (a free-form map under OpenAI strict mode, a recursive type for Gemini) gives `ok: false`.
 */
export function convertSchema(schema: JsonSchemaObject, target: SchemaTarget): SchemaConversion {
  try {
    switch (target) {
      case 'openai':
        return { ok: true, schema: stripMeta(schema) as JsonSchemaObject };
      case 'anthropic':
        for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
          if (schema[keyword] !== undefined)
            throw new Inexpressible(`"${keyword}" at the top level`);
        }
        return { ok: true, schema: stripMeta(schema) as JsonSchemaObject };
      case 'openai-strict':
        return {
          ok: true,
          schema: toOpenAIStrict(stripMeta(schema), '', 0, true) as JsonSchemaObject,
        };
      case 'gemini': {
        const converted = toGemini(schema, schema, '', 0, new Set());
        const empty = !converted.properties || Object.keys(converted.properties).length === 0;
        return { ok: true, schema: empty ? undefined : (converted as JsonSchemaObject) };
      }
    }
  } catch (error) {
    if (error instanceof Inexpressible) return { ok: false, reason: error.message };
    throw error;
  }
}

function stripMeta(schema: JsonSchema): JsonSchema {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

const STRICT_DROP = new Set([
  'minLength',
  'maxLength',
  'patternProperties',
  'unevaluatedProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'unevaluatedItems',
  'contains',
  'minContains',
  'maxContains',
  'uniqueItems',
  'not',
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
  'default',
  'examples',
  '$comment',
]);
const STRICT_FORMATS = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
]);

function at(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function toOpenAIStrict(schema: JsonSchema, path: string, depth: number, root = false): JsonSchema {
  if (depth > MAX_DEPTH)
    throw new Inexpressible(`nesting deeper than ${MAX_DEPTH} levels at "${path}"`);
  if (schema.allOf !== undefined) throw new Inexpressible(`"allOf" at "${path || 'root'}"`);
  if (root && (schema.anyOf !== undefined || schema.oneOf !== undefined)) {
    throw new Inexpressible('"anyOf" at the top level');
  }
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (STRICT_DROP.has(key)) continue;
    if (key === 'format' && !STRICT_FORMATS.has(String(value))) continue;
    if (key === 'oneOf') {
      out.anyOf = (value as JsonSchema[]).map((branch, index) =>
        toOpenAIStrict(branch, at(path, `oneOf[${index}]`), depth + 1),
      );
      continue;
    }
    if (key === 'anyOf') {
      out.anyOf = (value as JsonSchema[]).map((branch, index) =>
        toOpenAIStrict(branch, at(path, `anyOf[${index}]`), depth + 1),
      );
      continue;
    }
    if (key === 'items' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      out.items = toOpenAIStrict(value as JsonSchema, at(path, '[]'), depth + 1);
      continue;
    }
    if ((key === '$defs' || key === 'definitions') && typeof value === 'object' && value !== null) {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, JsonSchema>).map(([name, definition]) => [
          name,
          toOpenAIStrict(definition, at(path, name), depth + 1),
        ]),
      );
      continue;
    }
    if (key === 'properties' || key === 'required' || key === 'additionalProperties') continue;
    out[key] = value;
  }
  const isObject =
    schema.type === 'object' || (Array.isArray(schema.type) && schema.type.includes('object'));
  if (isObject || schema.properties !== undefined) {
    if (typeof schema.additionalProperties === 'object') {
      throw new Inexpressible(
        `a free-form map (additionalProperties with a schema) at "${path || 'root'}"`,
      );
    }
    const properties = schema.properties ?? {};
    if (Object.keys(properties).length === 0 && !root) {
      throw new Inexpressible(`an object with no declared properties at "${path}"`);
    }
    const required = new Set(schema.required ?? []);
    out.properties = Object.fromEntries(
      Object.entries(properties).map(([name, property]) => {
        const converted = toOpenAIStrict(property, at(path, name), depth + 1);
        return [name, required.has(name) ? converted : nullable(converted)];
      }),
    );
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  }
  return out;
}

/** Make a strict-mode property accept null (how strict mode says "optional"). */
function nullable(schema: JsonSchema): JsonSchema {
  if (schema.$ref !== undefined || schema.anyOf !== undefined) {
    const branches = schema.anyOf ?? [{ $ref: schema.$ref }];
    if (branches.some((branch) => branch.type === 'null')) return schema;
    const { anyOf: _anyOf, $ref: _ref, description, ...rest } = schema;
    return {
      ...rest,
      ...(description ? { description } : {}),
      anyOf: [...branches, { type: 'null' }],
    };
  }
  const out: JsonSchema = { ...schema };
  if (typeof schema.type === 'string')
    out.type = schema.type === 'null' ? 'null' : [schema.type, 'null'];
  else if (Array.isArray(schema.type))
    out.type = schema.type.includes('null') ? schema.type : [...schema.type, 'null'];
  else return { anyOf: [schema, { type: 'null' }] };
  if (out.enum !== undefined && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return out;
}

const GEMINI_KEEP = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'anyOf',
  'items',
  'minimum',
  'maximum',
  'default',
]);
const GEMINI_TYPES = new Set(['string', 'integer', 'number', 'boolean', 'array', 'object']);

function resolveRef(root: JsonSchema, ref: string): JsonSchema {
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  const definition = match
    ? (root[match[1] as '$defs' | 'definitions'] as Record<string, JsonSchema> | undefined)?.[
        match[2]!
      ]
    : undefined;
  if (!definition) throw new Inexpressible(`an unresolvable $ref "${ref}"`);
  return definition;
}

function toGemini(
  schema: JsonSchema,
  root: JsonSchema,
  path: string,
  depth: number,
  refs: Set<string>,
): JsonSchema {
  if (depth > MAX_DEPTH)
    throw new Inexpressible(`nesting deeper than ${MAX_DEPTH} levels at "${path}"`);
  if (schema.$ref !== undefined) {
    if (refs.has(schema.$ref))
      throw new Inexpressible(`a recursive type (${schema.$ref}) at "${path}"`);
    const { $ref, ...siblings } = schema;
    return toGemini(
      { ...resolveRef(root, $ref), ...siblings },
      root,
      path,
      depth,
      new Set([...refs, $ref]),
    );
  }
  if (schema.allOf !== undefined) throw new Inexpressible(`"allOf" at "${path || 'root'}"`);
  let working: JsonSchema = { ...schema };
  if (working.oneOf !== undefined) {
    working.anyOf = working.oneOf;
    delete working.oneOf;
  }
  if (working.const !== undefined) {
    working.enum = [working.const];
    delete working.const;
  }
  // Nullability: Gemini says `nullable: true` instead of a null type or a null branch.
  if (Array.isArray(working.type)) {
    const types = working.type.filter((type) => type !== 'null');
    if (types.length < working.type.length) working.nullable = true;
    if (types.length === 1) working.type = types[0]!;
    else {
      const { type: _type, ...rest } = working;
      working = { ...rest, anyOf: types.map((type) => ({ type })) };
    }
  }
  if (working.anyOf !== undefined) {
    const branches = working.anyOf.filter((branch) => branch.type !== 'null');
    if (branches.length < working.anyOf.length) working.nullable = true;
    if (branches.length === 1) {
      const { anyOf: _anyOf, ...rest } = working;
      working = {
        ...branches[0]!,
        ...rest,
        description: rest.description ?? branches[0]!.description,
      };
      if (working.$ref !== undefined) return toGemini(working, root, path, depth, refs);
    } else working.anyOf = branches;
  }
  if (working.enum !== undefined && working.enum.some((value) => typeof value !== 'string')) {
    const listed = working.enum
      .filter((value) => value !== null)
      .map((value) => JSON.stringify(value))
      .join(', ');
    working.description = `${working.description ? `${working.description} ` : ''}(one of: ${listed})`;
    delete working.enum;
  } else if (working.enum !== undefined) {
    working.type = 'string';
  }
  if (typeof working.type === 'string' && !GEMINI_TYPES.has(working.type)) {
    throw new Inexpressible(`type "${working.type}" at "${path || 'root'}"`);
  }
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(working)) {
    if (!GEMINI_KEEP.has(key)) continue;
    if (key === 'properties') {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, JsonSchema>).map(([name, property]) => [
          name,
          toGemini(property, root, at(path, name), depth + 1, refs),
        ]),
      );
    } else if (
      key === 'items' &&
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value)
    ) {
      out.items = toGemini(value as JsonSchema, root, at(path, '[]'), depth + 1, refs);
    } else if (key === 'anyOf') {
      out.anyOf = (value as JsonSchema[]).map((branch, index) =>
        toGemini(branch, root, at(path, `anyOf[${index}]`), depth + 1, refs),
      );
    } else {
      out[key] = value;
    }
  }
  if (
    out.type === 'object' &&
    path !== '' &&
    (!out.properties || Object.keys(out.properties).length === 0)
  ) {
    throw new Inexpressible(`an object with no declared properties at "${path}"`);
  }
  return out;
}
