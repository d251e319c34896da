import { z } from 'zod';
import type { JsonSchemaObject } from './json-schema.js';

/** Languages Quiver's tool descriptions and prompts come in. */
export type Language = 'en' | 'zh';

/** A text given once, or per language (`{ en, zh }`); the English one is the fallback. */
export type LocalizedText = string | ({ en: string } & Partial<Record<Language, string>>);

/** Pick the text for `language` from a {@link LocalizedText}, falling back to English. */
export function localize(text: LocalizedText, language: Language = 'en'): string {
  if (typeof text === 'string') return text;
  return text[language] ?? text.en;
}

/** A call the model asked for. `arguments` is the raw string the model produced, not yet parsed. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** zod schema of {@link ToolCall}: `arguments` must be the raw string, not parsed JSON. */
export const toolCallSchema = z.object({
  id: z.string(),
  name: z.string().min(1),
  arguments: z.string(),
});

/** What a tool may touch, for policies and for the user to see. */
export interface ToolFlags {
  /** Reads or writes local files. */
  fileAccess?: boolean;
  /** Makes network requests. */
  networkAccess?: boolean;
  /** Runs code supplied by the model. */
  codeExecution?: boolean;
  /** Has effects outside the conversation (sends mail, writes data): not safe to repeat blindly. */
  sideEffects?: boolean;
  /** Same arguments give the same result: safe to cache. */
  deterministic?: boolean;
}

/** The description of a tool that is given to a model. */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments; the root is always an object. */
  parameters: JsonSchemaObject;
  /** Tool group; `basic` is always active. */
  group?: string;
  flags?: ToolFlags;
}

/** A tool in the OpenAI Chat Completions `tools` format. */
export interface OpenAITool {
  type: 'function';
  function: {
    name: string;
    description: string;
    parameters: Record<string, unknown>;
    strict?: boolean;
  };
}

/** Convert a {@link ToolDefinition} to the OpenAI `tools` entry. */
export function toOpenAITool(
  definition: ToolDefinition,
  options?: { strict?: boolean },
): OpenAITool {
  return {
    type: 'function',
    function: {
      name: definition.name,
      description: definition.description,
      parameters: definition.parameters,
      ...(options?.strict !== undefined ? { strict: options.strict } : {}),
    },
  };
}

/** Tool names every major API accepts: letters, digits, `_` and `-`, 1 to 64 characters. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
