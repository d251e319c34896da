import { z } from 'zod';
import { QuiverError, errorMessage } from './errors.js';

/** Plain text. */
export interface TextBlock {
  type: 'text';
  text: string;
}

/** An image, given inline as base64 `data` or by `url`; `path` names a local copy when one was saved. */
export interface ImageBlock {
  type: 'image';
  /** Base64-encoded bytes (no `data:` prefix). */
  data?: string;
  url?: string;
  /** Local file the image was saved to, if any. */
  path?: string;
  mimeType: string;
  alt?: string;
}

/** A file (document, audio, archive …) by local `path`, `url`, or inline base64 `data`. */
export interface FileBlock {
  type: 'file';
  path?: string;
  url?: string;
  data?: string;
  mimeType?: string;
  name?: string;
}

/** Structured data. */
export interface JsonBlock {
  type: 'json';
  value: unknown;
}

/** One piece of a tool's output. */
export type ContentBlock = TextBlock | ImageBlock | FileBlock | JsonBlock;

/** Well-known metadata keys on a {@link ToolResponse}; any other key is allowed. */
export interface ToolResponseMetadata {
  /** Structured error details when `isError` is set (see `QuiverError.toJSON`). */
  error?: Record<string, unknown>;
  /** Set by quality rules: this successful-looking result is useless; drop the turn and ask again. */
  rollback?: { reason: string };
  [key: string]: unknown;
}

/**
 * What a tool returns, in one piece or as a stream of chunks. A streamed chunk is a partial
 * response; the chunk with `isLast: true` (or the last chunk of the stream) ends the call.
 */
export interface ToolResponse {
  content: ContentBlock[];
  isError?: boolean;
  isLast?: boolean;
  metadata?: ToolResponseMetadata;
}

/** zod schema of {@link TextBlock}. */
export const textBlockSchema = z.object({ type: z.literal('text'), text: z.string() });
/** zod schema of {@link ImageBlock}: it must say where the image is (`data`, `url` or `path`). */
export const imageBlockSchema = z
  .object({
    type: z.literal('image'),
    data: z.string().optional(),
    url: z.string().optional(),
    path: z.string().optional(),
    mimeType: z.string(),
    alt: z.string().optional(),
  })
  .refine(
    (block) => block.data !== undefined || block.url !== undefined || block.path !== undefined,
    {
      message: 'an image block needs data, url or path',
    },
  );
/** zod schema of {@link FileBlock}: it must say where the file is (`path`, `url` or `data`). */
export const fileBlockSchema = z
  .object({
    type: z.literal('file'),
    path: z.string().optional(),
    url: z.string().optional(),
    data: z.string().optional(),
    mimeType: z.string().optional(),
    name: z.string().optional(),
  })
  .refine(
    (block) => block.data !== undefined || block.url !== undefined || block.path !== undefined,
    {
      message: 'a file block needs path, url or data',
    },
  );
/** zod schema of {@link JsonBlock}. */
export const jsonBlockSchema = z.object({ type: z.literal('json'), value: z.unknown() });

/** zod schema of {@link ContentBlock}, for validating content that crosses a boundary. */
export const contentBlockSchema = z.union([
  textBlockSchema,
  imageBlockSchema,
  fileBlockSchema,
  jsonBlockSchema,
]);

/** zod schema of {@link ToolResponse}. */
export const toolResponseSchema = z.object({
  content: z.array(contentBlockSchema),
  isError: z.boolean().optional(),
  isLast: z.boolean().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** A text block. */
export function textBlock(text: string): TextBlock {
  return { type: 'text', text };
}

/** A JSON block. */
export function jsonBlock(value: unknown): JsonBlock {
  return { type: 'json', value };
}

/** A successful response with one text block. */
export function textResponse(text: string, metadata?: ToolResponseMetadata): ToolResponse {
  return metadata === undefined
    ? { content: [textBlock(text)] }
    : { content: [textBlock(text)], metadata };
}

/**
 * Turn whatever a tool returned into a {@link ToolResponse}: a response passes through; a string
 * becomes a text block; a content block or an array of them becomes the content; `undefined`
 * becomes an empty response; anything else becomes a JSON block.
 */
export function toToolResponse(value: unknown): ToolResponse {
  if (isToolResponse(value)) return value;
  if (typeof value === 'string') return { content: [textBlock(value)] };
  if (value === undefined || value === null) return { content: [] };
  if (isContentBlock(value)) return { content: [value] };
  if (Array.isArray(value) && value.length > 0 && value.every(isContentBlock)) {
    return { content: value as ContentBlock[] };
  }
  return { content: [jsonBlock(value)] };
}

/** True when `value` looks like a {@link ToolResponse} (an object with a `content` array of blocks). */
export function isToolResponse(value: unknown): value is ToolResponse {
  return (
    typeof value === 'object' &&
    value !== null &&
    Array.isArray((value as { content?: unknown }).content) &&
    (value as { content: unknown[] }).content.every(isContentBlock)
  );
}

/** True when `value` is one of the four content block shapes. */
export function isContentBlock(value: unknown): value is ContentBlock {
  if (typeof value !== 'object' || value === null) return false;
  const block = value as Record<string, unknown>;
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string';
    case 'image':
      return typeof block.mimeType === 'string';
    case 'file':
      return true;
    case 'json':
      return 'value' in block;
    default:
      return false;
  }
}

/**
 * Concatenate the text of a response: text blocks as they are, JSON blocks serialised, images and
 * files as a one-line placeholder naming them.
 */
export function responseText(response: Pick<ToolResponse, 'content'>): string {
  return response.content.map(blockText).join('\n');
}

function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'json':
      return safeStringify(block.value);
    case 'image':
      return `[image ${block.mimeType}${block.path ? ` saved at ${block.path}` : block.url ? ` at ${block.url}` : ''}]`;
    case 'file':
      return `[file ${block.name ?? block.path ?? block.url ?? ''}${block.mimeType ? ` (${block.mimeType})` : ''}]`;
  }
}

/** JSON.stringify that never throws (cycles and BigInts are rendered, not fatal). */
export function safeStringify(value: unknown, space?: number): string {
  const seen = new WeakSet<object>();
  try {
    return (
      JSON.stringify(
        value,
        (_key, item: unknown) => {
          if (typeof item === 'bigint') return item.toString();
          if (typeof item === 'object' && item !== null) {
            if (seen.has(item)) return '[Circular]';
            seen.add(item);
          }
          return item;
        },
        space,
      ) ?? String(value)
    );
  } catch {
    return String(value);
  }
}

/**
 * An error response the model can act on: the message as text, the structured error (code,
 * fields) in `metadata.error`. Accepts anything thrown.
 */
export function errorResponse(error: unknown, metadata?: ToolResponseMetadata): ToolResponse {
  const details = QuiverError.isInstance(error)
    ? error.toJSON()
    : {
        name: error instanceof Error ? error.name : 'Error',
        code: 'tool_execution_failed',
        message: errorMessage(error),
      };
  return {
    content: [textBlock(`Error: ${errorMessage(error)}`)],
    isError: true,
    metadata: { ...metadata, error: details },
  };
}
