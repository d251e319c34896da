import type { ContentBlock, ToolResponse, ToolResponseMetadata } from '@quiver/core';
import { safeStringify } from '@quiver/core';
import type {
  CallToolResult,
  ContentBlock as MCPContentBlock,
  EmbeddedResource,
} from '@modelcontextprotocol/sdk/types.js';
import { MCPErrorCodes } from './errors.js';

/** A resource an MCP result pointed to or embedded, kept in the response metadata. */
export interface MCPResourceReference {
  uri: string;
  mimeType?: string;
  name?: string;
  /** True when the content came with the result, false for a link the client may read later. */
  embedded: boolean;
}

/**
 * Map the content of an MCP `tools/call` result onto Quiver content blocks:
 * text → text; image → image; audio → file (base64 data, audio MIME type); resource link → file
 * with the resource URI as `url`; embedded text resource → text; embedded blob resource → file
 * with base64 `data`; `structuredContent` → a JSON block after the others. Resources are listed in
 * `metadata.mcpResources`; `isError: true` becomes an error response (`metadata.error.code`
 * `mcp_tool_error`).
 *
 * @param result - the result as the MCP SDK returned it
 * @param context - names used in the error details
 * @returns one complete {@link ToolResponse}
 */
export function fromMCPResult(
  result: CallToolResult,
  context: { serverName: string; toolName: string },
): ToolResponse {
  const content: ContentBlock[] = [];
  const resources: MCPResourceReference[] = [];
  for (const block of result.content ?? []) {
    const mapped = fromMCPBlock(block, resources);
    if (mapped) content.push(mapped);
  }
  if (result.structuredContent !== undefined) {
    // Servers are asked to repeat structured content as JSON text for older clients; the JSON
    // block carries it now, so drop that copy rather than give the model the data twice.
    const serialised = JSON.stringify(result.structuredContent);
    const copy = content.findIndex(
      (block) => block.type === 'text' && sameJson(block.text, serialised),
    );
    if (copy !== -1) content.splice(copy, 1);
    content.push({ type: 'json', value: result.structuredContent });
  }
  const metadata: ToolResponseMetadata = { mcpServer: context.serverName };
  if (resources.length > 0) metadata.mcpResources = resources;
  if (result._meta !== undefined) metadata.mcpMeta = result._meta;
  if (result.isError === true) {
    const text = content
      .filter((block) => block.type === 'text')
      .map((block) => block.text)
      .join('\n');
    metadata.error = {
      name: 'MCPToolError',
      code: MCPErrorCodes.toolError,
      message: text || `MCP tool "${context.toolName}" reported an error without a message.`,
      serverName: context.serverName,
      toolName: context.toolName,
    };
    return { content, isError: true, metadata };
  }
  return { content, metadata };
}

function fromMCPBlock(
  block: MCPContentBlock,
  resources: MCPResourceReference[],
): ContentBlock | undefined {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
      return { type: 'image', data: block.data, mimeType: block.mimeType };
    case 'audio':
      return { type: 'file', data: block.data, mimeType: block.mimeType };
    case 'resource_link': {
      resources.push({
        uri: block.uri,
        embedded: false,
        ...(block.mimeType !== undefined ? { mimeType: block.mimeType } : {}),
        name: block.name,
      });
      return {
        type: 'file',
        url: block.uri,
        name: block.name,
        ...(block.mimeType !== undefined ? { mimeType: block.mimeType } : {}),
      };
    }
    case 'resource':
      return fromEmbeddedResource(block.resource, resources);
    default:
      // A content type newer than this bridge: keep it, as data, rather than drop it silently.
      return { type: 'json', value: block as unknown };
  }
}

function fromEmbeddedResource(
  resource: EmbeddedResource['resource'],
  resources: MCPResourceReference[],
): ContentBlock {
  resources.push({
    uri: resource.uri,
    embedded: true,
    ...(resource.mimeType !== undefined ? { mimeType: resource.mimeType } : {}),
  });
  if ('text' in resource && typeof resource.text === 'string') {
    return { type: 'text', text: resource.text };
  }
  const blob = (resource as { blob: string }).blob;
  return {
    type: 'file',
    data: blob,
    url: resource.uri,
    name: resource.uri.split('/').pop() || resource.uri,
    ...(resource.mimeType !== undefined ? { mimeType: resource.mimeType } : {}),
  };
}

/**
 * Map Quiver content blocks onto MCP content (the server side). Text stays text; an image with
 * data is an image, with only a URL or path a resource link; a file with data is audio (for
 * `audio/*`) or an embedded blob resource, with only a URL or path a resource link; a JSON block
 * becomes its JSON text.
 *
 * @param blocks - the content of a (merged) tool response
 * @returns MCP `content` for a `tools/call` result
 */
export function toMCPContent(blocks: readonly ContentBlock[]): MCPContentBlock[] {
  return blocks.map(toMCPBlock);
}

function toMCPBlock(block: ContentBlock): MCPContentBlock {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'json':
      return { type: 'text', text: safeStringify(block.value) };
    case 'image':
      if (block.data !== undefined) {
        return { type: 'image', data: block.data, mimeType: block.mimeType };
      }
      return linkTo(block.url ?? block.path ?? '', block.alt ?? 'image', block.mimeType);
    case 'file': {
      const name = block.name ?? block.path?.split('/').pop() ?? block.url ?? 'file';
      if (block.data !== undefined) {
        if (block.mimeType?.startsWith('audio/')) {
          return { type: 'audio', data: block.data, mimeType: block.mimeType };
        }
        return {
          type: 'resource',
          resource: {
            uri: block.url ?? (block.path ? fileUri(block.path) : `quiver://file/${name}`),
            blob: block.data,
            ...(block.mimeType !== undefined ? { mimeType: block.mimeType } : {}),
          },
        };
      }
      return linkTo(block.url ?? (block.path ? fileUri(block.path) : ''), name, block.mimeType);
    }
  }
}

function linkTo(uri: string, name: string, mimeType: string | undefined): MCPContentBlock {
  return {
    type: 'resource_link',
    uri: /^[a-z][a-z0-9+.-]*:/i.test(uri) ? uri : fileUri(uri),
    name,
    ...(mimeType !== undefined ? { mimeType } : {}),
  };
}

function fileUri(path: string): string {
  return `file://${path
    .split('/')
    .map((part) => encodeURIComponent(part))
    .join('/')}`;
}

/**
 * The structured content of a final response: the value of its only JSON block, when that value is
 * an object (what MCP's `structuredContent` must be).
 * @internal
 */
export function structuredContentOf(
  blocks: readonly ContentBlock[],
): Record<string, unknown> | undefined {
  const json = blocks.filter((block) => block.type === 'json');
  if (json.length !== 1) return undefined;
  const value = json[0]!.value;
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function sameJson(text: string, serialised: string): boolean {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return false;
  try {
    return JSON.stringify(JSON.parse(trimmed)) === serialised;
  } catch {
    return false;
  }
}
