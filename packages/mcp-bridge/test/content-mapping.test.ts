import { describe, expect, it } from '@jest/globals';
import { fromMCPResult, toMCPContent } from '../src/index.js';

const context = { serverName: 'srv', toolName: 'tool' };

describe('fromMCPResult', () => {
  it('maps every MCP content type onto core blocks', () => {
    const response = fromMCPResult(
      {
        content: [
          { type: 'text', text: 'hello' },
          { type: 'image', data: 'aW1n', mimeType: 'image/png' },
          { type: 'audio', data: 'YXVk', mimeType: 'audio/wav' },
          { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt', mimeType: 'text/plain' },
          { type: 'resource', resource: { uri: 'mem://note', text: 'embedded text' } },
          {
            type: 'resource',
            resource: {
              uri: 'mem://bin/x.bin',
              blob: 'AAE=',
              mimeType: 'application/octet-stream',
            },
          },
        ],
      },
      context,
    );
    expect(response.isError).toBeUndefined();
    expect(response.content).toEqual([
      { type: 'text', text: 'hello' },
      { type: 'image', data: 'aW1n', mimeType: 'image/png' },
      { type: 'file', data: 'YXVk', mimeType: 'audio/wav' },
      { type: 'file', url: 'file:///a.txt', name: 'a.txt', mimeType: 'text/plain' },
      { type: 'text', text: 'embedded text' },
      {
        type: 'file',
        data: 'AAE=',
        url: 'mem://bin/x.bin',
        name: 'x.bin',
        mimeType: 'application/octet-stream',
      },
    ]);
    expect(response.metadata?.mcpResources).toEqual([
      { uri: 'file:///a.txt', embedded: false, mimeType: 'text/plain', name: 'a.txt' },
      { uri: 'mem://note', embedded: true },
      { uri: 'mem://bin/x.bin', embedded: true, mimeType: 'application/octet-stream' },
    ]);
  });

  it('turns structuredContent into a JSON block and drops its JSON-text copy', () => {
    const value = { temperature: 21, unit: 'C' };
    const response = fromMCPResult(
      {
        content: [
          { type: 'text', text: JSON.stringify(value, null, 2) },
          { type: 'text', text: 'other' },
        ],
        structuredContent: value,
      },
      context,
    );
    expect(response.content).toEqual([
      { type: 'text', text: 'other' },
      { type: 'json', value },
    ]);
  });

  it('turns isError into an error response with the server text as the message', () => {
    const response = fromMCPResult(
      { content: [{ type: 'text', text: 'ENOENT: no such file' }], isError: true },
      context,
    );
    expect(response.isError).toBe(true);
    expect(response.metadata?.error).toMatchObject({
      code: 'mcp_tool_error',
      message: 'ENOENT: no such file',
      serverName: 'srv',
      toolName: 'tool',
    });
  });
});

describe('toMCPContent', () => {
  it('maps core blocks onto MCP content', () => {
    expect(
      toMCPContent([
        { type: 'text', text: 't' },
        { type: 'json', value: { a: 1 } },
        { type: 'image', data: 'aW1n', mimeType: 'image/png' },
        { type: 'image', url: 'https://example.com/a.png', mimeType: 'image/png' },
        { type: 'file', data: 'YXVk', mimeType: 'audio/mpeg' },
        { type: 'file', data: 'AAE=', mimeType: 'application/pdf', name: 'r.pdf' },
        { type: 'file', path: '/tmp/my file.txt' },
      ]),
    ).toEqual([
      { type: 'text', text: 't' },
      { type: 'text', text: '{"a":1}' },
      { type: 'image', data: 'aW1n', mimeType: 'image/png' },
      {
        type: 'resource_link',
        uri: 'https://example.com/a.png',
        name: 'image',
        mimeType: 'image/png',
      },
      { type: 'audio', data: 'YXVk', mimeType: 'audio/mpeg' },
      {
        type: 'resource',
        resource: { uri: 'quiver://file/r.pdf', blob: 'AAE=', mimeType: 'application/pdf' },
      },
      { type: 'resource_link', uri: 'file:///tmp/my%20file.txt', name: 'my file.txt' },
    ]);
  });
});
