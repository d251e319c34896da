import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ToolExecutionError } from '@quiver/core';
import {
  createBingProvider,
  createBraveProvider,
  createHttpClient,
  createNetworkPolicy,
  createSearxngProvider,
  createSerperProvider,
  createTavilyProvider,
  type HttpClient,
  ProviderError,
  type ProviderCallContext,
  type SearchRequest,
} from '../src/index.js';
import {
  fixture,
  type FixtureServer,
  sendJson,
  startFixtureServer,
} from './helpers/fixture-server.js';

const NOW = Date.parse('2026-11-22T00:00:00Z');
const REQUEST: SearchRequest = {
  query: 'mozilla history',
  count: 8,
  language: 'en',
  country: 'us',
  freshness: 'year',
};

async function providerError(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ProviderError) return error;
    throw error;
  }
  throw new Error('expected a ProviderError');
}

describe('search providers replaying documented responses from 127.0.0.1', () => {
  let server: FixtureServer;
  let http: HttpClient;
  let context: ProviderCallContext;

  beforeAll(async () => {
    server = await startFixtureServer();
    http = createHttpClient({ policy: createNetworkPolicy({ allow: ['127.0.0.1'] }) });
    context = { http, timeoutMs: 5_000, toolName: 'web_search', now: NOW };
    server.route('GET /search', (request, response) => {
      const category = new URL(request.url!, 'http://x').searchParams.get('categories');
      sendJson(
        response,
        fixture('providers', category === 'images' ? 'searxng-images.json' : 'searxng-web.json'),
      );
    });
    server.route('GET /res/v1/web/search', (_request, response) =>
      sendJson(response, fixture('providers', 'brave-web.json')),
    );
    server.route('GET /res/v1/images/search', (_request, response) =>
      sendJson(response, fixture('providers', 'brave-images.json')),
    );
    server.route('POST /search', (_request, response, body) => {
      const images = (JSON.parse(body) as { include_images?: boolean }).include_images === true;
      sendJson(response, fixture('providers', images ? 'tavily-images.json' : 'tavily-web.json'));
    });
    server.route('POST /serper/search', (_request, response) =>
      sendJson(response, fixture('providers', 'serper-web.json')),
    );
    server.route('POST /serper/images', (_request, response) =>
      sendJson(response, fixture('providers', 'serper-images.json')),
    );
    server.route('GET /v7.0/search', (_request, response) =>
      sendJson(response, fixture('providers', 'bing-web.json')),
    );
    server.route('GET /v7.0/images/search', (_request, response) =>
      sendJson(response, fixture('providers', 'bing-images.json')),
    );
  });
  beforeEach(() => {
    server.requests.length = 0;
  });
  afterAll(async () => {
    await http.close();
    await server.close();
  });

  it('SearXNG: sends format=json and maps results and images', async () => {
    const provider = createSearxngProvider({ baseUrl: server.origin });
    const results = await provider.search(REQUEST, context);
    const sent = new URL(server.requests[0]!.url, 'http://x').searchParams;
    expect(Object.fromEntries(sent)).toMatchObject({
      q: 'mozilla history',
      format: 'json',
      categories: 'general',
      language: 'en',
      time_range: 'year',
    });
    expect(results).toEqual([
      {
        title: 'Mozilla - Wikipedia',
        url: 'https://en.wikipedia.org/wiki/Mozilla',
        snippet: 'Mozilla is a free software community founded in 1998 by members of Netscape.',
        source: 'searxng',
      },
      {
        title: 'A brief history of Mozilla – Mozilla Hacks',
        url: 'https://hacks.mozilla.org/2018/03/a-brief-history-of-mozilla/',
        snippet: 'Twenty years ago, on March 31, 1998, the Mozilla project began.',
        publishedAt: expect.stringMatching(/^2018-03-31T/),
        source: 'searxng',
      },
    ]);
    const images = await provider.searchImages!({ query: 'firefox logo', count: 5 }, context);
    expect(images[0]).toMatchObject({
      imageUrl: 'https://upload.wikimedia.org/wikipedia/commons/a/a0/Firefox_logo%2C_2019.svg',
      pageUrl: 'https://commons.wikimedia.org/wiki/File:Firefox_logo,_2019.svg',
      width: 2048,
      height: 2117,
      source: 'searxng',
    });
  });

  it('Brave: sends the subscription token, strips <strong>, resolves dates, drops non-http URLs', async () => {
    const provider = createBraveProvider({ apiKey: 'brave-test-key', baseUrl: server.origin });
    const results = await provider.search(REQUEST, context);
    const sent = server.requests[0]!;
    expect(sent.headers['x-subscription-token']).toBe('brave-test-key');
    expect(Object.fromEntries(new URL(sent.url, 'http://x').searchParams)).toMatchObject({
      q: 'mozilla history',
      count: '8',
      search_lang: 'en',
      country: 'US',
      freshness: 'py',
    });
    expect(results).toHaveLength(3);
    expect(results[0]).toEqual({
      title: 'Mozilla - Wikipedia',
      url: 'https://en.wikipedia.org/wiki/Mozilla',
      snippet:
        'Mozilla is a free software community founded in 1998 by members of Netscape. The Mozilla community uses, develops, publishes and supports Mozilla products & promotes free software.',
      publishedAt: expect.stringMatching(/^2024-11-02T09:15/),
      source: 'brave',
    });
    // "3 days ago", resolved against the injected clock.
    expect(results[2]!.publishedAt).toBe('2026-11-19');
    const images = await provider.searchImages!({ query: 'firefox logo', count: 5 }, context);
    expect(images.map((image) => image.imageUrl)).toEqual([
      'https://blog.mozilla.org/design/files/2019/10/Fx-Browser-icon-fullColor.png',
      'https://www.mozilla.org/media/img/logos/firefox/logo-word-hor.svg',
    ]);
    expect(images[0]).toMatchObject({
      width: 1024,
      height: 1024,
      thumbnailUrl: 'https://imgs.search.brave.com/thumb-firefox-logo.jpg',
    });
  });

  it('Tavily: POSTs with a Bearer key and maps results and image descriptions', async () => {
    const provider = createTavilyProvider({ apiKey: 'tvly-test', baseUrl: server.origin });
    const results = await provider.search(REQUEST, context);
    const sent = server.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.headers.authorization).toBe('Bearer tvly-test');
    expect(JSON.parse(sent.body)).toMatchObject({
      query: 'mozilla history',
      max_results: 8,
      time_range: 'year',
      include_images: false,
    });
    expect(results.map((result) => result.url)).toEqual([
      'https://en.wikipedia.org/wiki/Mozilla_Foundation',
      'http://en.wikipedia.org/wiki/Mozilla#History',
      'https://www.computerhistory.org/timeline/1998/',
    ]);
    expect(results[1]!.publishedAt).toBe('2024-11-02T09:15:00.000Z');
    const images = await provider.searchImages!({ query: 'firefox logo', count: 5 }, context);
    expect(images[0]).toEqual({
      title: 'The 2019 Firefox browser icon: an orange fox curled around a purple globe.',
      imageUrl: 'https://blog.mozilla.org/design/files/2019/10/Fx-Browser-icon-fullColor.png',
      source: 'tavily',
    });
  });

  it('Serper: POSTs q/num/gl/hl/tbs with X-API-KEY and maps organic results and images', async () => {
    const provider = createSerperProvider({
      apiKey: 'serper-key',
      baseUrl: `${server.origin}/serper`,
    });
    const results = await provider.search(REQUEST, context);
    const sent = server.requests[0]!;
    expect(sent.headers['x-api-key']).toBe('serper-key');
    expect(JSON.parse(sent.body)).toEqual({
      q: 'mozilla history',
      num: 8,
      gl: 'us',
      hl: 'en',
      tbs: 'qdr:y',
    });
    expect(results.map((result) => result.source)).toEqual(['serper', 'serper', 'serper']);
    expect(results[1]!.publishedAt).toBe('2024-03-05T00:00:00.000Z');
    expect(results[2]!.publishedAt).toBe('2026-11-08');
    const images = await provider.searchImages!({ query: 'firefox logo', count: 5 }, context);
    expect(images[1]).toMatchObject({
      width: 1024,
      pageUrl: 'https://blog.mozilla.org/design/the-evolution-of-the-firefox-brand/',
    });
  });

  it('Bing: sends the subscription key and market, maps webPages and images', async () => {
    const provider = createBingProvider({ apiKey: 'bing-key', baseUrl: server.origin });
    const results = await provider.search(REQUEST, context);
    const sent = server.requests[0]!;
    expect(sent.headers['ocp-apim-subscription-key']).toBe('bing-key');
    expect(Object.fromEntries(new URL(sent.url, 'http://x').searchParams)).toMatchObject({
      q: 'mozilla history',
      mkt: 'en-US',
      count: '8',
      responseFilter: 'Webpages',
    });
    expect(results[1]).toMatchObject({
      title: 'Netscape - Wikipedia',
      publishedAt: expect.stringMatching(/^2024-10-01/),
    });
    const images = await provider.searchImages!({ query: 'firefox logo', count: 5 }, context);
    expect(images[0]).toMatchObject({
      imageUrl: 'https://upload.wikimedia.org/wikipedia/commons/a/a0/Firefox_logo%2C_2019.svg',
      thumbnailUrl: 'https://tse1.mm.bing.net/th?id=OIP.firefox2019',
      width: 2048,
      height: 2117,
      source: 'bing',
    });
  });
});

describe('provider failures', () => {
  let server: FixtureServer;
  let http: HttpClient;
  let context: ProviderCallContext;

  beforeAll(async () => {
    server = await startFixtureServer();
    http = createHttpClient({ policy: createNetworkPolicy({ allow: ['127.0.0.1'] }) });
    context = { http, timeoutMs: 5_000, toolName: 'web_search', now: NOW };
  });
  afterAll(async () => {
    await http.close();
    await server.close();
  });

  it('429 with Retry-After is retryable and carries retryAfterMs', async () => {
    server.route('GET /rate-limited/res/v1/web/search', (_request, response) =>
      sendJson(
        response,
        JSON.stringify({
          type: 'ErrorResponse',
          error: {
            code: 'RATE_LIMITED',
            detail: 'Request rate limit exceeded for plan.',
            status: 429,
          },
        }),
        429,
        {
          'retry-after': '3',
        },
      ),
    );
    const error = await providerError(
      createBraveProvider({ apiKey: 'k', baseUrl: `${server.origin}/rate-limited` }).search(
        REQUEST,
        context,
      ),
    );
    expect(error).toMatchObject({
      provider: 'brave',
      statusCode: 429,
      isRetryable: true,
      retryAfterMs: 3_000,
      toolName: 'web_search',
    });
    // A core ToolExecutionError: the governance package retries it.
    expect(error).toBeInstanceOf(ToolExecutionError);
    expect(error.toJSON()).toMatchObject({ isRetryable: true, retryAfterMs: 3_000 });
    expect(error.message).toContain('Request rate limit exceeded for plan.');
  });

  it('5xx is retryable; an HTTP-date Retry-After is converted to a delay', async () => {
    server.route('POST /down/search', (_request, response) =>
      sendJson(response, '{"detail":{"error":"Internal server error"}}', 503, {
        'retry-after': new Date(NOW + 12_000).toUTCString(),
      }),
    );
    const error = await providerError(
      createTavilyProvider({ apiKey: 'k', baseUrl: `${server.origin}/down` }).search(
        REQUEST,
        context,
      ),
    );
    expect(error).toMatchObject({ statusCode: 503, isRetryable: true, retryAfterMs: 12_000 });
    expect(error.message).toContain('Internal server error');
  });

  it('401 is final and does not leak the key', async () => {
    server.route('GET /auth/v7.0/search', (_request, response) =>
      sendJson(
        response,
        JSON.stringify({
          _type: 'ErrorResponse',
          errors: [
            {
              code: 'InvalidAuthorization',
              subCode: 'AuthorizationMissing',
              message: 'Authorization is required.',
              moreDetails: 'Subscription key is not recognized.',
            },
          ],
        }),
        401,
      ),
    );
    const error = await providerError(
      createBingProvider({ apiKey: 'super-secret-key', baseUrl: `${server.origin}/auth` }).search(
        REQUEST,
        context,
      ),
    );
    expect(error).toMatchObject({ statusCode: 401, isRetryable: false });
    expect(error.message).toContain('Authorization is required.');
    expect(error.message).toContain('Check the API key');
    expect(error.message).not.toContain('super-secret-key');
  });

  it('malformed JSON and wrong shapes become search_provider_bad_response', async () => {
    server.route('POST /broken/search', (_request, response) =>
      sendJson(response, '{"organic": [{"title": "cut off'),
    );
    const broken = await providerError(
      createSerperProvider({ apiKey: 'k', baseUrl: `${server.origin}/broken` }).search(
        REQUEST,
        context,
      ),
    );
    expect(broken).toMatchObject({
      code: 'search_provider_bad_response',
      isRetryable: false,
      provider: 'serper',
    });
    expect(broken.message).toContain('not valid JSON');

    server.route('GET /html/search', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html><body>Captive portal login</body></html>');
    });
    const html = await providerError(
      createSearxngProvider({ baseUrl: `${server.origin}/html` }).search(REQUEST, context),
    );
    expect(html.code).toBe('search_provider_bad_response');

    server.route('GET /shape/res/v1/web/search', (_request, response) =>
      sendJson(response, '{"web": {"results": "not-an-array"}}'),
    );
    const shape = await providerError(
      createBraveProvider({ apiKey: 'k', baseUrl: `${server.origin}/shape` }).search(
        REQUEST,
        context,
      ),
    );
    expect(shape.code).toBe('search_provider_bad_response');
    expect(shape.message).toContain('web.results');
  });
});
