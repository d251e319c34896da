import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { ConfigurationError } from '@quiver/core';
import {
  createWebSearch,
  ProviderError,
  resolveSearchProviders,
  type WebSearch,
} from '../src/index.js';
import {
  fixture,
  type FixtureServer,
  sendJson,
  startFixtureServer,
} from './helpers/fixture-server.js';

describe('createWebSearch: several providers, merged, de-duplicated, cached', () => {
  let server: FixtureServer;
  const searches: WebSearch[] = [];
  let clock = Date.parse('2026-11-22T00:00:00Z');
  let tavilyStatus = 200;

  const make = (options: Parameters<typeof createWebSearch>[0]): WebSearch => {
    const search = createWebSearch({ now: () => clock, ...options });
    searches.push(search);
    return search;
  };
  const env = (): Record<string, string> => ({
    BRAVE_API_KEY: 'brave-key',
    TAVILY_API_KEY: 'tvly-key',
    SERPER_API_KEY: 'serper-key',
    BING_API_KEY: 'bing-key',
    SEARXNG_URL: server.origin,
  });
  const configs = () => [
    { provider: 'brave' as const, apiKey: 'brave-key', baseUrl: server.origin },
    { provider: 'serper' as const, apiKey: 'serper-key', baseUrl: `${server.origin}/serper` },
    { provider: 'tavily' as const, apiKey: 'tvly-key', baseUrl: `${server.origin}/tavily` },
  ];

  beforeAll(async () => {
    server = await startFixtureServer();
    server.route('GET /search', (_request, response) =>
      sendJson(response, fixture('providers', 'searxng-web.json')),
    );
    server.route('GET /res/v1/web/search', (_request, response) =>
      sendJson(response, fixture('providers', 'brave-web.json')),
    );
    server.route('GET /res/v1/images/search', (_request, response) =>
      sendJson(response, fixture('providers', 'brave-images.json')),
    );
    server.route('POST /serper/search', (_request, response) =>
      sendJson(response, fixture('providers', 'serper-web.json')),
    );
    server.route('POST /serper/images', (_request, response) =>
      sendJson(response, fixture('providers', 'serper-images.json')),
    );
    server.route('POST /tavily/search', (_request, response) =>
      tavilyStatus === 200
        ? sendJson(response, fixture('providers', 'tavily-web.json'))
        : sendJson(response, '{"detail":{"error":"Too many requests"}}', tavilyStatus, {
            'retry-after': '2',
          }),
    );
  });
  afterEach(() => {
    server.requests.length = 0;
    tavilyStatus = 200;
  });
  afterAll(async () => {
    await Promise.all(searches.map((search) => search.close()));
    await server.close();
  });

  it('interleaves providers by rank and merges duplicates by canonical URL', async () => {
    // Provider endpoints set by the operator are trusted by the SSRF guard without an allow-list.
    const search = make({ providers: configs(), env: {} });
    const response = await search.search('mozilla history', { count: 10 });
    expect(response.providers).toEqual(['brave', 'serper', 'tavily']);
    const urls = response.results.map((result) => result.url);
    // brave#1 == serper#1 == tavily#2 (http, #fragment); brave#2 == serper#2 (www, utm_source, trailing slash).
    expect(urls).toEqual([
      'https://en.wikipedia.org/wiki/Mozilla',
      'https://en.wikipedia.org/wiki/Mozilla_Foundation',
      'https://www.mozilla.org/en-US/about/history/?utm_source=brave',
      'https://en.wikipedia.org/wiki/Firefox',
      'https://www.mozilla.org/en-US/about/manifesto/',
      'https://www.computerhistory.org/timeline/1998/',
    ]);
    expect(response.results[0]!.source).toBe('brave');
    // The duplicate from Serper had a date Brave's copy of result 3 lacked: it is kept.
    expect(response.results[2]!.publishedAt).toBe('2024-03-05T00:00:00.000Z');
    expect(
      response.results.every((result) => typeof result.snippet === 'string' && result.title !== ''),
    ).toBe(true);
  });

  it('caches answers for the TTL and queries again once it expires', async () => {
    const search = make({
      providers: [{ provider: 'brave', apiKey: 'brave-key', baseUrl: server.origin }],
      env: {},
      cache: { ttlMs: 60_000 },
    });
    const first = await search.search('Mozilla   History');
    const second = await search.search('mozilla history');
    expect(first.cached).toBe(false);
    expect(second.cached).toBe(true);
    expect(second.results).toEqual(first.results);
    expect(server.requests).toHaveLength(1);
    clock += 61_000;
    const third = await search.search('mozilla history');
    expect(third.cached).toBe(false);
    expect(server.requests).toHaveLength(2);
  });

  it('returns the other providers’ results when one fails, and does not cache that', async () => {
    tavilyStatus = 429;
    const search = make({ providers: configs(), env: {} });
    const response = await search.search('mozilla history');
    expect(response.providers).toEqual(['brave', 'serper']);
    expect(response.failures).toEqual([
      expect.objectContaining({
        provider: 'tavily',
        isRetryable: true,
        message: expect.stringContaining('429'),
      }),
    ]);
    tavilyStatus = 200;
    const again = await search.search('mozilla history');
    expect(again.cached).toBe(false);
    expect(again.providers).toEqual(['brave', 'serper', 'tavily']);
  });

  it('throws a retryable ProviderError when every provider fails transiently', async () => {
    tavilyStatus = 503;
    const only = make({
      providers: [{ provider: 'tavily', apiKey: 'tvly-key', baseUrl: `${server.origin}/tavily` }],
      env: {},
    });
    await expect(only.search('x')).rejects.toMatchObject({
      statusCode: 503,
      isRetryable: true,
      retryAfterMs: 2_000,
    });
    const both = make({
      providers: [
        { provider: 'tavily', apiKey: 'tvly-key', baseUrl: `${server.origin}/tavily` },
        { provider: 'bing', apiKey: 'bing-key', baseUrl: `${server.origin}/no-bing-here` },
      ],
      env: {},
    });
    const error = await both.search('x').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ isRetryable: true, retryAfterMs: 2_000 });
    expect((error as ProviderError).message).toContain('Every search provider failed');
  });

  it('chooses providers from the environment', async () => {
    const fromVariables = make({ env: env() });
    expect(fromVariables.providers).toEqual(['searxng', 'brave', 'tavily', 'serper', 'bing']);
    const chosen = make({ env: { ...env(), QUIVER_SEARCH_PROVIDERS: 'searxng' } });
    expect(chosen.providers).toEqual(['searxng']);
    const response = await chosen.search('mozilla history');
    expect(response.results[0]!.source).toBe('searxng');
  });

  it('searches images with the providers that can, de-duplicated by image URL', async () => {
    const search = make({
      providers: [
        { provider: 'brave', apiKey: 'brave-key', baseUrl: server.origin },
        { provider: 'serper', apiKey: 'serper-key', baseUrl: `${server.origin}/serper` },
      ],
      env: {},
    });
    const response = await search.searchImages('firefox logo', { count: 10 });
    const urls = response.results.map((image) => image.imageUrl);
    expect(urls).toEqual([
      'https://blog.mozilla.org/design/files/2019/10/Fx-Browser-icon-fullColor.png',
      'https://upload.wikimedia.org/wikipedia/commons/a/a0/Firefox_logo%2C_2019.svg',
      'https://www.mozilla.org/media/img/logos/firefox/logo-word-hor.svg',
    ]);
  });
});

describe('provider configuration errors', () => {
  it('names the environment variable to set for a missing key', () => {
    const cases: Array<[string, string]> = [
      ['brave', 'BRAVE_API_KEY'],
      ['tavily', 'TAVILY_API_KEY'],
      ['serper', 'SERPER_API_KEY'],
      ['bing', 'BING_API_KEY'],
      ['searxng', 'SEARXNG_URL'],
    ];
    for (const [name, variable] of cases) {
      expect(() => resolveSearchProviders([name as 'brave'], {})).toThrow(ConfigurationError);
      expect(() => resolveSearchProviders([name as 'brave'], {})).toThrow(variable);
    }
  });

  it('names every variable when nothing is configured, and rejects unknown names', () => {
    expect(() => createWebSearch({ env: {} })).toThrow(
      /SEARXNG_URL, BRAVE_API_KEY, TAVILY_API_KEY, SERPER_API_KEY, BING_API_KEY/,
    );
    expect(() => resolveSearchProviders(undefined, { QUIVER_SEARCH_PROVIDERS: 'google' })).toThrow(
      /unknown search provider "google"/,
    );
    expect(() => resolveSearchProviders(undefined, { QUIVER_SEARCH_PROVIDERS: 'brave' })).toThrow(
      'BRAVE_API_KEY',
    );
    expect(() =>
      resolveSearchProviders(['searxng'], { SEARXNG_URL: 'http://localhost:8080/' }),
    ).not.toThrow();
    expect(() => resolveSearchProviders(['searxng'], { SEARXNG_URL: 'localhost:8080/' })).toThrow(
      'SEARXNG_URL',
    );
    expect(() => resolveSearchProviders(['searxng'], { SEARXNG_URL: 'not a url' })).toThrow(
      ConfigurationError,
    );
  });
});
