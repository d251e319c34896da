import type { ContentBlock, ContentPart, ImageBlock, ToolResponse } from '@quiver/core';
import { safeStringify } from '@quiver/core';

/** Options of {@link formatForModel}. */
export interface FormatForModelOptions {
  /** The model takes images in tool results: images become image parts. Default false. */
  acceptsImages?: boolean;
  /** Add a line telling the model a result was judged useless (`metadata.rollback`). Default true. */
  rollbackNote?: boolean;
  /** Indentation of JSON blocks. Default 2; 0 for compact JSON. */
  jsonIndent?: number;
}

/** Advice appended to an error, by error code, so the model knows what to do next. */
const ERROR_ADVICE: Record<string, string> = {
  tool_not_found: 'Call one of the available tools instead.',
  tool_argument_invalid: 'Correct the arguments listed above and call the tool again.',
  tool_timeout: 'Try a smaller or simpler request, or another tool.',
  tool_aborted: 'The call was cancelled; call it again only if it is still needed.',
  circuit_open:
    'Do not call this tool again for now; use another tool or answer with what you have.',
  duplicate_call_refused: 'Do not repeat this call.',
  concurrency_queue_full: 'Wait for the results of your earlier calls before making more.',
};

/**
 * Turn a ToolResponse into the content of the tool message the model sees.
 *
 * - Text blocks as they are; JSON blocks as (indented) JSON text.
 * - Images: with `acceptsImages`, an `image_url` part (a `data:` URL for inline data, or the
 *   image's URL); otherwise, or for an image known only by a local path, a text placeholder
 *   naming the file so the model can refer to it.
 * - Files: a placeholder with name, type and location.
 * - Errors: `Error (<code>): <message>` plus what to do next, with a retry hint when the
 *   failure is transient.
 *
 * @param response - the tool's response
 * @param options - what the model accepts
 * @returns a string when everything is text, else an array of content parts
 * @example
 * ```ts
 * const content = formatForModel(response, { acceptsImages: true });
 * messages.push({ role: 'tool', tool_call_id: call.id, content });
 * ```
 */
export function formatForModel(
  response: ToolResponse,
  options: FormatForModelOptions = {},
): string | ContentPart[] {
  const parts: ContentPart[] = [];
  const pushText = (text: string) => {
    const previous = parts[parts.length - 1];
    if (previous?.type === 'text')
      previous.text = previous.text ? `${previous.text}\n${text}` : text;
    else parts.push({ type: 'text', text });
  };
  if (response.isError) {
    pushText(errorText(response));
  } else {
    for (const block of response.content) {
      const image =
        block.type === 'image' ? imagePart(block, options.acceptsImages === true) : undefined;
      if (image !== undefined) parts.push(image);
      else pushText(blockText(block, options.jsonIndent ?? 2));
    }
    if (parts.length === 0) pushText('(The tool finished without output.)');
  }
  const rollback = response.metadata?.rollback?.reason;
  if (rollback !== undefined && options.rollbackNote !== false) {
    pushText(
      `\n[This result looks unusable: ${rollback}. Try a different approach or different arguments.]`,
    );
  }
  if (parts.every((part) => part.type === 'text'))
    return parts.map((part) => (part as { text: string }).text).join('\n');
  return parts;
}

function errorText(response: ToolResponse): string {
  const error = response.metadata?.error ?? {};
  const code = typeof error.code === 'string' ? error.code : 'tool_execution_failed';
  const text = response.content
    .map((block) =>
      block.type === 'text' ? block.text : block.type === 'json' ? safeStringify(block.value) : '',
    )
    .join('\n')
    .trim();
  const message =
    text.replace(/^Error:\s*/, '') ||
    (typeof error.message === 'string' ? error.message : 'The tool failed.');
  const lines = [`Error (${code}): ${message}`];
  const advice = ERROR_ADVICE[code];
  if (advice !== undefined && !message.includes(advice)) lines.push(advice);
  if (error.isRetryable === true && code !== 'circuit_open') {
    const after =
      typeof error.retryAfterMs === 'number'
        ? ` after about ${Math.ceil(error.retryAfterMs / 1000)} s`
        : ' later';
    lines.push(`This failure is temporary: the same call may succeed${after}.`);
  }
  return lines.join('\n');
}

function imagePart(block: ImageBlock, acceptsImages: boolean): ContentPart | undefined {
  if (!acceptsImages) return undefined;
  if (block.data !== undefined)
    return { type: 'image_url', image_url: { url: `data:${block.mimeType};base64,${block.data}` } };
  if (block.url !== undefined) return { type: 'image_url', image_url: { url: block.url } };
  return undefined;
}

function blockText(block: ContentBlock, indent: number): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'json':
      return safeStringify(block.value, indent > 0 ? indent : undefined);
    case 'image': {
      const where = block.path ?? block.url;
      const label = block.alt ? ` "${block.alt}"` : '';
      return where !== undefined
        ? `[image${label} (${block.mimeType}) saved at ${where}; it cannot be shown here]`
        : `[image${label} (${block.mimeType}, ${approximateBytes(block.data)}); it cannot be shown here]`;
    }
    case 'file': {
      const name = block.name ?? block.path?.split(/[\\/]/).pop() ?? block.url ?? 'unnamed';
      const where = block.path ?? block.url;
      return `[file ${name}${block.mimeType ? ` (${block.mimeType})` : ''}${where && where !== name ? ` at ${where}` : block.data ? `, ${approximateBytes(block.data)} inline` : ''}]`;
    }
  }
}

function approximateBytes(base64: string | undefined): string {
  const bytes = Math.floor(((base64?.length ?? 0) * 3) / 4);
  return bytes >= 1024 ? `${Math.round(bytes / 1024)} KiB` : `${bytes} bytes`;
}
