import type {
  JsonSchemaObject,
  Language,
  LocalizedText,
  ToolContext,
  ToolDefinition,
  ToolFlags,
} from '@quiver/core';
import { TOOL_NAME_PATTERN, ToolRegistrationError, localize } from '@quiver/core';
import type {
  CompiledSchema,
  ParametersSchema,
  ValidationResult,
  ZodSchema,
} from './tool-schema.js';
import { compileSchema } from './tool-schema.js';

/**
 * What `execute` may return: a value (string, content block(s), ToolResponse, any JSON), a
 * Promise of one, a sync or async generator yielding partial ToolResponse chunks (its return
 * value, if any, is the last chunk), or a Promise of a generator.
 */
export type ToolResult = unknown;

/** Decides per call whether a human must approve it before it runs. */
export type ApprovalPredicate<TArgs> = (
  args: TArgs,
  context: ToolContext,
) => boolean | Promise<boolean>;

/** The argument type a parameters schema describes. */
export type InferArguments<TSchema> =
  TSchema extends ZodSchema<infer T> ? T : Record<string, unknown>;

/** Everything needed to define a tool. */
export interface ToolSpec<TArgs = Record<string, unknown>> {
  /** Letters, digits, `_` and `-`; at most 64 characters (what every major API accepts). */
  name: string;
  /** What the tool does and when to use it, for the model; a string or `{ en, zh }`. */
  description: LocalizedText;
  /** A zod object schema (descriptions from `.describe()`) or a JSON Schema with an object root. */
  parameters: ParametersSchema<TArgs>;
  /** Run the tool. Receives validated arguments. See {@link ToolResult} for what it may return. */
  execute: (args: TArgs, context: ToolContext) => ToolResult;
  /** Tool group; defaults to `basic` (always active). */
  group?: string;
  flags?: ToolFlags;
  /** Pause the agent for a human's approval before running (always, or per call). */
  needsApproval?: boolean | ApprovalPredicate<TArgs>;
  /** Default time limit of a call in milliseconds. */
  timeoutMs?: number;
  /** Run in the background: the call returns a task id at once (see the Toolkit's task tools). */
  background?: boolean;
}

const toolBrand = Symbol.for('quiver.tool');

/** A defined tool: validated schema, metadata, and its `execute` function. */
export interface Tool<TArgs = Record<string, unknown>> {
  /** @internal */
  readonly [toolBrand]: true;
  readonly name: string;
  readonly description: LocalizedText;
  /** The JSON Schema of the parameters, as a model sees it. */
  readonly parameters: JsonSchemaObject;
  readonly group: string | undefined;
  readonly flags: ToolFlags;
  readonly needsApproval: boolean | ApprovalPredicate<TArgs>;
  readonly timeoutMs: number | undefined;
  readonly background: boolean;
  /** Validate (and, for zod, transform) arguments without running the tool. */
  validate(args: Record<string, unknown>): ValidationResult;
  execute(args: TArgs, context: ToolContext): ToolResult;
  /** The provider-neutral definition, with the description in `language`. */
  definition(language?: Language): ToolDefinition;
}

/**
 * A tool of any argument type, for collections of tools (toolkits, registries). `Tool<TArgs>`
 * takes its arguments contravariantly (`needsApproval` is a function of them), so no concrete
 * argument type would accept every tool.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the one deliberate variance escape hatch
export type AnyTool = Tool<any>;

/** A tool spec of any argument type (see {@link AnyTool}). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- same variance escape hatch as AnyTool
export type AnyToolSpec = ToolSpec<any>;

/** True when `value` was made by {@link defineTool}. */
export function isTool(value: unknown): value is AnyTool {
  return typeof value === 'object' && value !== null && toolBrand in value;
}

/**
 * Define a tool. The schema is compiled (and, for JSON Schema, checked against its meta-schema)
 * here, so a broken schema fails at definition, not on the first call.
 *
 * @example
 * ```ts
 * const add = defineTool({
 *   name: 'add',
 *   description: { en: 'Add two numbers', zh: '两数相加' },
 *   parameters: z.object({ a: z.number(), b: z.number() }),
 *   execute: ({ a, b }) => String(a + b),
 * });
 * ```
 * @throws ToolRegistrationError when the name or the schema is invalid
 */
export function defineTool<TSchema extends ParametersSchema<unknown>>(
  spec: ToolSpec<InferArguments<TSchema>> & { parameters: TSchema },
): Tool<InferArguments<TSchema>>;
export function defineTool<TArgs>(spec: ToolSpec<TArgs>): Tool<TArgs>;
export function defineTool<TArgs>(spec: ToolSpec<TArgs>): Tool<TArgs> {
  if (typeof spec !== 'object' || spec === null) {
    throw new ToolRegistrationError('', 'defineTool needs a tool spec object');
  }
  const name = spec.name;
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    throw new ToolRegistrationError(
      String(name),
      `Invalid tool name ${JSON.stringify(name)}: use 1 to 64 letters, digits, "_" or "-".`,
    );
  }
  if (typeof spec.execute !== 'function') {
    throw new ToolRegistrationError(name, `Tool "${name}" has no execute function.`);
  }
  const description = spec.description;
  if (
    typeof description !== 'string' &&
    (typeof description !== 'object' || typeof description?.en !== 'string')
  ) {
    throw new ToolRegistrationError(
      name,
      `Tool "${name}" needs a description: a string or { en, zh }.`,
    );
  }
  if (spec.timeoutMs !== undefined && !(spec.timeoutMs > 0)) {
    throw new ToolRegistrationError(
      name,
      `Tool "${name}": timeoutMs must be a positive number of milliseconds.`,
    );
  }
  let compiled: CompiledSchema;
  try {
    compiled = compileSchema(spec.parameters as ParametersSchema);
  } catch (error) {
    throw new ToolRegistrationError(
      name,
      `Tool "${name}" has an invalid parameter schema: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const flags = { ...spec.flags };
  const group = spec.group;
  const execute = spec.execute;
  return Object.freeze({
    [toolBrand]: true as const,
    name,
    description,
    parameters: compiled.jsonSchema,
    group,
    flags,
    needsApproval: spec.needsApproval ?? false,
    timeoutMs: spec.timeoutMs,
    background: spec.background ?? false,
    validate: compiled.validate,
    execute,
    definition(language?: Language): ToolDefinition {
      return {
        name,
        description: localize(description, language),
        parameters: compiled.jsonSchema,
        ...(group !== undefined ? { group } : {}),
        flags,
      };
    },
  });
}
