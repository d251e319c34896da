/**
 * A JSON Schema document (draft 2020-12 or draft-07). Kept loose on purpose: schemas come from
 * zod, from MCP servers and from users, and validation is done by a real validator, not by types.
 */
export interface JsonSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema | JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  additionalProperties?: boolean | JsonSchema;
  default?: unknown;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  definitions?: Record<string, JsonSchema>;
  [keyword: string]: unknown;
}

/** A JSON Schema whose root is an object: what tool parameters must be. */
export interface JsonSchemaObject extends JsonSchema {
  type: 'object';
  properties?: Record<string, JsonSchema>;
}
