import type { ContentBlock, ToolResponse } from '@quiver/core';

/**
 * Gather the chunks of a streamed call into one response: contents in order, a text block that
 * starts a chunk joined onto the text block that ended the previous one (a stream split
 * mid-text), `isError` if any chunk is an error, metadata merged (later chunks win).
 */
export function mergeResponses(chunks: readonly ToolResponse[]): ToolResponse {
  if (chunks.length === 1) {
    // One chunk (most calls): a copy of it, marked last; nothing to join.
    const chunk = chunks[0]!;
    const merged: ToolResponse = { content: chunk.content.slice(), isLast: true };
    if (chunk.isError) merged.isError = true;
    if (chunk.metadata) merged.metadata = { ...chunk.metadata };
    return merged;
  }
  const content: ContentBlock[] = [];
  let isError = false;
  let metadata: Record<string, unknown> | undefined;
  for (const chunk of chunks) {
    for (const [index, block] of chunk.content.entries()) {
      // Join text only across chunk boundaries (a stream split mid-text); separate blocks of one
      // chunk stay separate.
      const previous = content[content.length - 1];
      if (index === 0 && block.type === 'text' && previous?.type === 'text') {
        content[content.length - 1] = { type: 'text', text: previous.text + block.text };
      } else {
        content.push(block);
      }
    }
    if (chunk.isError) isError = true;
    if (chunk.metadata) metadata = { ...metadata, ...chunk.metadata };
  }
  return {
    content,
    ...(isError ? { isError: true } : {}),
    isLast: true,
    ...(metadata ? { metadata } : {}),
  };
}
