import type { ToolResponse } from '@quiver/core';
import { safeStringify } from '@quiver/core';

/**
 * @internal Approximate size of a response in UTF-8 bytes: text and JSON as serialised,
 * inline base64 data as its length, plus a small constant per block.
 */
export function responseBytes(response: ToolResponse): number {
  let bytes = 0;
  for (const block of response.content) {
    switch (block.type) {
      case 'text':
        bytes += Buffer.byteLength(block.text);
        break;
      case 'json':
        bytes += Buffer.byteLength(safeStringify(block.value));
        break;
      case 'image':
      case 'file':
        bytes += (block.data?.length ?? 0) + (block.url?.length ?? 0) + (block.path?.length ?? 0);
        break;
    }
    bytes += 16;
  }
  return bytes;
}
