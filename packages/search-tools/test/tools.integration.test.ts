import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { responseText } from '@quiver/core';
import { Toolkit, ToolRegistry } from '@quiver/core-registry';
import {
  createImageSearchTool,
  createWebExtractor,
  createWebExtractorTool,
  createWebSearch,
  createWebSearchTool,
  type WebExtractor,
  type WebSearch,
  webSearchToolFactory,
} from '../src/index.js';
import {
  fixture,
  type FixtureServer,
  sendJson,
  startFixtureServer,
} from './helpers/fixture-server.js';

describe('the tools inside a Toolkit', () => {
  let server: FixtureServer;
  let search: WebSearch;
  let limited: WebSearch;
  let extractor: WebExtractor;
  const toolkit = new Toolkit();

  beforeAll(async () => {
    server = await startFixtureServer();
    server.route('GET /res/v1/web/search', (_request, response) =>
      sendJson(response, fixture('providers', 'brave-web.json')),
    );
    server.route('GET /res/v1/images/search', (_request, response) =>
      sendJson(response, fixture('providers', 'brave-images.json')),
    );
    server.route('GET /limited/res/v1/web/search', (_request, response) =>
      sendJson(response, '{"type":"ErrorResponse","error":{"detail":"Rate limit exceeded"}}', 429, {
        'retry-after': '1',
      }),
    );
    server.route('GET /wiki/Mozilla', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(fixture('pages', 'wikipedia-mozilla.html'));
    });
    search = createWebSearch({
      providers: [{ provider: 'brave', apiKey: 'k', baseUrl: server.origin }],
      env: {},
    });
    limited = createWebSearch({
      providers: [{ provider: 'brave', apiKey: 'k', baseUrl: `${server.origin}/limited` }],
      env: {},
    });
    extractor = createWebExtractor({ allow: ['127.0.0.1'] });
    toolkit.register(createWebSearchTool({ search }));
    toolkit.register(createImageSearchTool({ search }));
    toolkit.register(createWebExtractorTool({ extractor, maxChars: 2_000, maxLinks: 5 }));
  });
  afterAll(async () => {
    await Promise.all([search.close(), limited.close(), extractor.close()]);
    await server.close();
  });

  it('web_search answers with a numbered list and structured results', async () => {
    const response = await toolkit.callToCompletion({
      id: 'c1',
      name: 'web_search',
      arguments: '{"query":"mozilla history","count":2}',
    });
    expect(response.isError).toBeFalsy();
    const text = responseText(response);
    expect(text).toContain('Search results for "mozilla history" (from brave)');
    expect(text).toContain('1. Mozilla - Wikipedia\n   https://en.wikipedia.org/wiki/Mozilla');
    expect(text).toContain('Published: 2024-11-02 · via brave');
    expect(response.metadata?.results).toHaveLength(2);
  });

  it('web_search answers in Chinese when the conversation is in Chinese', async () => {
    const response = await toolkit.callToCompletion(
      { id: 'c2', name: 'web_search', arguments: '{"query":"mozilla history","count":1}' },
      { language: 'zh' },
    );
    expect(responseText(response)).toContain('“mozilla history”的搜索结果（来源：brave）');
  });

  it('a provider 429 becomes an error response marked retryable, with retryAfterMs', async () => {
    const local = new Toolkit();
    local.register(createWebSearchTool({ search: limited }));
    const response = await local.callToCompletion({
      id: 'c3',
      name: 'web_search',
      arguments: '{"query":"x"}',
    });
    expect(response.isError).toBe(true);
    expect(response.metadata?.error).toMatchObject({
      isRetryable: true,
      retryAfterMs: 1_000,
      provider: 'brave',
      statusCode: 429,
    });
  });

  it('web_extractor returns title, URL, text and links, cut to maxChars', async () => {
    const response = await toolkit.callToCompletion({
      id: 'c4',
      name: 'web_extractor',
      arguments: JSON.stringify({ url: `${server.origin}/wiki/Mozilla` }),
    });
    const text = responseText(response);
    expect(
      text.startsWith(
        `# Mozilla - Wikipedia\nURL: ${server.origin}/wiki/Mozilla\nCanonical URL: https://en.wikipedia.org/wiki/Mozilla`,
      ),
    ).toBe(true);
    expect(text).toContain('Mozilla is a free-software community');
    expect(text).toMatch(/\[… \d+ more characters not shown\]/);
    expect(text).toMatch(/## Links\n(- .+\n){5}- … \d+ more$/);
    expect(response.metadata).toMatchObject({
      title: 'Mozilla - Wikipedia',
      format: 'html',
      truncated: false,
    });
  });

  it('web_extractor refuses private addresses as an error response the model can read', async () => {
    const response = await toolkit.callToCompletion({
      id: 'c5',
      name: 'web_extractor',
      arguments: '{"url":"http://169.254.169.254/latest/meta-data/"}',
    });
    expect(response.isError).toBe(true);
    expect(responseText(response)).toContain('link-local');
    expect(response.metadata?.error).toMatchObject({ code: 'url_blocked', isRetryable: false });
  });

  it('image_search lists image URLs, sizes and pages', async () => {
    const response = await toolkit.callToCompletion({
      id: 'c6',
      name: 'image_search',
      arguments: '{"query":"firefox logo"}',
    });
    const text = responseText(response);
    expect(text).toContain('1. Firefox logo history (1024×1024)');
    expect(text).toContain(
      'Image: https://blog.mozilla.org/design/files/2019/10/Fx-Browser-icon-fullColor.png',
    );
  });

  it('every tool has English and Chinese descriptions and a JSON Schema', () => {
    for (const name of ['web_search', 'image_search', 'web_extractor']) {
      const tool = toolkit.get(name)!.tool;
      expect(tool.definition('en').description).toMatch(/^[A-Z]/);
      expect(tool.definition('zh').description).toMatch(/[\u4e00-\u9fff]/);
      expect(tool.flags.networkAccess).toBe(true);
      expect(tool.parameters.type).toBe('object');
    }
  });

  it('the registry factory builds a configured web_search and reports missing keys', () => {
    const registry = new ToolRegistry();
    registry.register(webSearchToolFactory);
    expect(() => registry.getTool('web_search', { providers: ['tavily'], env: {} })).toThrow(
      'TAVILY_API_KEY',
    );
    const tool = registry.getTool('web_search', { search });
    expect(tool.name).toBe('web_search');
  });
});
