import { z } from 'zod';

/** Text part of a multimodal message. */
export interface TextPart {
  type: 'text';
  text: string;
}

/** Image part (OpenAI `image_url`: an http(s) URL or a `data:` URL). */
export interface ImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

/**
 * File part: a document the user attached. OpenAI's shape (`file_id`, `filename`, `file_data`)
 * plus `path` and `url` for files the agent's tools can read.
 */
export interface FilePart {
  type: 'file';
  file: { file_id?: string; filename?: string; file_data?: string; path?: string; url?: string };
}

/** Audio input part (OpenAI `input_audio`). */
export interface AudioPart {
  type: 'input_audio';
  input_audio: { data: string; format: 'wav' | 'mp3' };
}

/** One part of a multimodal message. */
export type ContentPart = TextPart | ImagePart | FilePart | AudioPart;

/** A tool call inside an assistant message, in the OpenAI wire shape. */
export interface AssistantToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** Instructions for the model. */
export interface SystemMessage {
  role: 'system';
  content: string | TextPart[];
  name?: string;
}

/** What the user said, as text or multimodal parts. */
export interface UserMessage {
  role: 'user';
  content: string | ContentPart[];
  name?: string;
}

/** What the model answered: text, tool calls, or both. */
export interface AssistantMessage {
  role: 'assistant';
  content: string | TextPart[] | null;
  name?: string;
  tool_calls?: AssistantToolCall[];
  /** Reasoning text some providers stream separately (DeepSeek, Qwen). */
  reasoning_content?: string;
}

/** The result of one tool call, answering the assistant's `tool_calls[].id`. */
export interface ToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string | ContentPart[];
  name?: string;
}

/** A chat message in the OpenAI Chat Completions format. */
export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** The roles of {@link ChatMessage}. */
export type Role = ChatMessage['role'];

const textPartSchema = z.object({ type: z.literal('text'), text: z.string() });
const imagePartSchema = z.object({
  type: z.literal('image_url'),
  image_url: z.object({
    url: z.string().min(1),
    detail: z.enum(['auto', 'low', 'high']).optional(),
  }),
});
const filePartSchema = z.object({
  type: z.literal('file'),
  file: z
    .object({
      file_id: z.string().optional(),
      filename: z.string().optional(),
      file_data: z.string().optional(),
      path: z.string().optional(),
      url: z.string().optional(),
    })
    .refine((file) => Object.values(file).some((value) => value !== undefined), {
      message: 'a file part needs file_id, file_data, path or url',
    }),
});
const audioPartSchema = z.object({
  type: z.literal('input_audio'),
  input_audio: z.object({ data: z.string(), format: z.enum(['wav', 'mp3']) }),
});

/** zod schema of {@link ContentPart}. */
export const contentPartSchema = z.discriminatedUnion('type', [
  textPartSchema,
  imagePartSchema,
  filePartSchema,
  audioPartSchema,
]);

/** zod schema of {@link AssistantToolCall}. */
export const assistantToolCallSchema = z.object({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});

/** zod schema of {@link SystemMessage}. */
export const systemMessageSchema = z.object({
  role: z.literal('system'),
  content: z.union([z.string(), z.array(textPartSchema)]),
  name: z.string().optional(),
});
/** zod schema of {@link UserMessage}. */
export const userMessageSchema = z.object({
  role: z.literal('user'),
  content: z.union([z.string(), z.array(contentPartSchema)]),
  name: z.string().optional(),
});
/** zod schema of {@link AssistantMessage}. */
export const assistantMessageSchema = z.object({
  role: z.literal('assistant'),
  content: z.union([z.string(), z.array(textPartSchema), z.null()]),
  name: z.string().optional(),
  tool_calls: z.array(assistantToolCallSchema).optional(),
  reasoning_content: z.string().optional(),
});
/** zod schema of {@link ToolMessage}. */
export const toolMessageSchema = z.object({
  role: z.literal('tool'),
  tool_call_id: z.string().min(1),
  content: z.union([z.string(), z.array(contentPartSchema)]),
  name: z.string().optional(),
});

/** zod schema of {@link ChatMessage}: validate messages where they enter (HTTP bodies, files). */
export const chatMessageSchema = z.discriminatedUnion('role', [
  systemMessageSchema,
  userMessageSchema,
  assistantMessageSchema,
  toolMessageSchema,
]);

/** The text of a message's content (text parts joined; other parts left out). */
export function messageText(message: Pick<ChatMessage, 'content'>): string {
  const { content } = message;
  if (content === null) return '';
  if (typeof content === 'string') return content;
  const parts: readonly ContentPart[] = content;
  return parts
    .filter((part): part is TextPart => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
}
