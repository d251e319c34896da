import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ConfigurationError, responseText } from '@quiver/core';
import { Toolkit } from '@quiver/core-registry';
import { createWeatherTool } from '../src/weather/index.js';
import {
  fixture,
  type FixtureServer,
  sendJson,
  startFixtureServer,
} from './helpers/fixture-server.js';

describe('weather tool (Open-Meteo and AMap replayed from 127.0.0.1)', () => {
  let server: FixtureServer;
  let amapMode: 'ok' | 'invalid-key' | 'qps' = 'ok';

  beforeAll(async () => {
    server = await startFixtureServer();
    server.route('GET /v1/search', (request, response) => {
      const name = new URL(request.url!, 'http://x').searchParams.get('name');
      sendJson(
        response,
        fixture(
          'weather',
          name === 'Berlin' ? 'open-meteo-geocoding.json' : 'open-meteo-geocoding-empty.json',
        ),
      );
    });
    server.route('GET /v1/forecast', (_request, response) =>
      sendJson(response, fixture('weather', 'open-meteo-forecast.json')),
    );
    server.route('GET /v3/geocode/geo', (_request, response) =>
      sendJson(
        response,
        fixture(
          'weather',
          amapMode === 'invalid-key' ? 'amap-invalid-key.json' : 'amap-geocode.json',
        ),
      ),
    );
    server.route('GET /v3/weather/weatherInfo', (request, response) => {
      if (amapMode === 'qps') return sendJson(response, fixture('weather', 'amap-qps-limit.json'));
      const extensions = new URL(request.url!, 'http://x').searchParams.get('extensions');
      sendJson(
        response,
        fixture(
          'weather',
          extensions === 'all' ? 'amap-weather-all.json' : 'amap-weather-base.json',
        ),
      );
    });
  });
  beforeEach(() => {
    server.requests.length = 0;
    amapMode = 'ok';
  });
  afterAll(() => server.close());

  it('Open-Meteo: geocodes a place, then reports current weather and the forecast', async () => {
    const toolkit = new Toolkit();
    toolkit.register(
      createWeatherTool({
        provider: 'open-meteo',
        baseUrl: server.origin,
        geocodingBaseUrl: server.origin,
        env: {},
      }),
    );
    const response = await toolkit.callToCompletion({
      id: 'w1',
      name: 'weather',
      arguments: '{"location":"Berlin","days":3}',
    });
    expect(response.isError).toBeFalsy();
    const text = responseText(response);
    expect(text).toContain(
      'Weather for Berlin, Land Berlin, Germany (52.52437, 13.41053) (via open-meteo)',
    );
    expect(text).toContain(
      'Now (2026-11-22T03:00): Overcast, 2.4 °C, feels like -1.3 °C, humidity 88%, wind 13.7 km/h',
    );
    expect(text).toContain(
      '- 2026-11-23: Slight rain, 2.2 – 5.6 °C, precipitation 3.4 mm, wind 24.1 km/h',
    );
    const forecast = new URL(server.requests[1]!.url, 'http://x').searchParams;
    expect(forecast.get('latitude')).toBe('52.52437');
    expect(forecast.get('forecast_days')).toBe('3');
    expect(forecast.get('timezone')).toBe('auto');
  });

  it('Open-Meteo: coordinates skip geocoding; Chinese output; unknown places are a clear error', async () => {
    const toolkit = new Toolkit();
    toolkit.register(
      createWeatherTool({
        provider: 'open-meteo',
        baseUrl: server.origin,
        geocodingBaseUrl: server.origin,
        env: {},
      }),
    );
    const response = await toolkit.callToCompletion(
      { id: 'w2', name: 'weather', arguments: '{"location":"52.52, 13.41"}' },
      { language: 'zh' },
    );
    expect(server.requests.map((request) => new URL(request.url, 'http://x').pathname)).toEqual([
      '/v1/forecast',
    ]);
    expect(responseText(response)).toContain('当前 (2026-11-22T03:00): 阴，2.4 °C，体感 -1.3 °C');
    const unknown = await toolkit.callToCompletion({
      id: 'w3',
      name: 'weather',
      arguments: '{"location":"Atlantis"}',
    });
    expect(unknown.isError).toBe(true);
    expect(responseText(unknown)).toContain('No place called "Atlantis"');
  });

  it('AMap: turns a name into an adcode and reports live weather and the 4-day forecast', async () => {
    const toolkit = new Toolkit();
    toolkit.register(
      createWeatherTool({ provider: 'amap', apiKey: 'amap-key', baseUrl: server.origin, env: {} }),
    );
    const response = await toolkit.callToCompletion(
      { id: 'w4', name: 'weather', arguments: '{"location":"北京市朝阳区","days":2}' },
      { language: 'zh' },
    );
    const text = responseText(response);
    expect(text).toContain('朝阳区, 北京, 中国 的天气（数据来源：amap）');
    expect(text).toContain('当前 (2026-11-22 10:32:07): 晴，3 °C，湿度 21%，风 西北风 ≤3级');
    expect(text).toContain('- 2026-11-23: 多云转阴, -2 – 6 °C');
    expect(text).not.toContain('2026-11-24');
    const weatherCalls = server.requests.filter((request) =>
      request.url.startsWith('/v3/weather/weatherInfo'),
    );
    expect(weatherCalls).toHaveLength(2);
    for (const call of weatherCalls) {
      const parameters = new URL(call.url, 'http://x').searchParams;
      expect(parameters.get('key')).toBe('amap-key');
      expect(parameters.get('city')).toBe('110105');
    }
  });

  it('AMap: the key comes from AMAP_API_KEY and a missing key is a ConfigurationError naming it', () => {
    expect(() => createWeatherTool({ provider: 'amap', env: {} })).toThrow(ConfigurationError);
    expect(() => createWeatherTool({ provider: 'amap', env: {} })).toThrow('AMAP_API_KEY');
    expect(() =>
      createWeatherTool({ env: { AMAP_API_KEY: 'from-env' }, baseUrl: server.origin }),
    ).not.toThrow();
  });

  it('AMap: status "0" answers become errors; QPS limits are retryable, a bad key is not and is not echoed', async () => {
    const toolkit = new Toolkit();
    toolkit.register(
      createWeatherTool({
        provider: 'amap',
        apiKey: 'secret-amap-key',
        baseUrl: server.origin,
        env: {},
      }),
    );
    amapMode = 'invalid-key';
    const invalid = await toolkit.callToCompletion({
      id: 'w5',
      name: 'weather',
      arguments: '{"location":"北京"}',
    });
    expect(invalid.isError).toBe(true);
    expect(invalid.metadata?.error).toMatchObject({ isRetryable: false, provider: 'amap' });
    expect(responseText(invalid)).toContain('INVALID_USER_KEY');
    expect(responseText(invalid)).not.toContain('secret-amap-key');
    amapMode = 'qps';
    const limited = await toolkit.callToCompletion({
      id: 'w6',
      name: 'weather',
      arguments: '{"location":"110105"}',
    });
    expect(limited.metadata?.error).toMatchObject({ isRetryable: true, retryAfterMs: 1_000 });
  });

  it('has English and Chinese descriptions', () => {
    const tool = createWeatherTool({ env: {} });
    expect(tool.definition('en').description).toContain('forecast');
    expect(tool.definition('zh').description).toContain('天气');
  });
});
