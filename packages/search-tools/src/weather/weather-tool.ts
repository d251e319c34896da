import { ConfigurationError, textBlock, type ToolContext, type ToolResponse } from '@quiver/core';
import { defineTool, type Tool, type ToolFactory } from '@quiver/core-registry';
import { z } from 'zod';
import type { LookupFunction } from '../guarded-dispatcher.js';
import { createHttpClient, type HttpClient } from '../http-client.js';
import { createNetworkPolicy, type NetworkPolicy } from '../network-policy.js';
import { createAmapProvider } from './amap.js';
import { createOpenMeteoProvider } from './open-meteo.js';
import type { WeatherProvider, WeatherReport } from './weather-types.js';

/** Environment variable holding the AMap Web Service key. */
export const AMAP_ENV_VARIABLE = 'AMAP_API_KEY';

/** Options of {@link createWeatherTool}. */
export interface WeatherToolOptions {
  /**
   * `open-meteo` (no key), `amap` (needs `apiKey` or `AMAP_API_KEY`), or a custom provider.
   * Default: `amap` when `AMAP_API_KEY` is set, else `open-meteo`.
   */
  provider?: 'open-meteo' | 'amap' | WeatherProvider;
  /** AMap key (default: `AMAP_API_KEY` from `env`). */
  apiKey?: string;
  /** Endpoint override for the chosen built-in provider (proxies, tests). */
  baseUrl?: string;
  /** Open-Meteo geocoding endpoint override. */
  geocodingBaseUrl?: string;
  /** Environment (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Network policy (the provider's configured endpoints are added to it). */
  policy?: NetworkPolicy;
  /**
   * HTTP client to send requests with (you then own its lifecycle and its policy is the one
   * enforced). Default: a guarded client made from `policy`.
   */
  httpClient?: HttpClient;
  lookup?: LookupFunction;
  /** Time limit for one provider request in milliseconds (default 10 000). */
  timeoutMs?: number;
}

const parameters = z.object({
  location: z
    .string()
    .min(1)
    .max(200)
    .describe('City or place name (e.g. "Berlin", "北京市朝阳区"), or "latitude,longitude".'),
  days: z.number().int().min(1).max(7).optional().describe('Days of forecast, 1 to 7 (default 3).'),
});

/** Arguments of the `weather` tool. */
export type WeatherArguments = z.infer<typeof parameters>;

/**
 * The `weather` tool, a small keyed-API tool: current conditions and a daily forecast from
 * Open-Meteo (free, no key) or AMap/高德 (China, needs a key).
 *
 * @param options - Provider choice and key.
 * @returns A tool for a Toolkit.
 * @throws {ConfigurationError} naming `AMAP_API_KEY` when AMap is chosen without a key.
 * @example
 * import { createWeatherTool } from '@quiver/search-tools/weather';
 * toolkit.register(createWeatherTool()); // Open-Meteo
 */
export function createWeatherTool(options: WeatherToolOptions = {}): Tool<WeatherArguments> {
  const provider = resolveWeatherProvider(options);
  const policy = (options.policy ?? createNetworkPolicy()).extend([
    ...(provider.trustedHosts ?? []),
  ]);
  const http: HttpClient = createHttpClient({
    policy,
    ...(options.lookup !== undefined ? { lookup: options.lookup } : {}),
  });
  const timeoutMs = options.timeoutMs ?? 10_000;
  return defineTool({
    name: 'weather',
    description: {
      en: 'Get the current weather and a daily forecast (up to 7 days) for a place: condition, temperature, humidity, wind, precipitation.',
      zh: '查询某地的实时天气和逐日预报（最多 7 天）：天气状况、气温、湿度、风力和降水。',
    },
    parameters,
    flags: { networkAccess: true },
    timeoutMs: 20_000,
    async execute(args, context: ToolContext): Promise<ToolResponse> {
      const language = context.language === 'zh' ? 'zh' : 'en';
      const report = await provider.forecast(
        { location: args.location, days: args.days ?? 3, language },
        { http, timeoutMs, toolName: 'weather', now: Date.now(), signal: context.signal },
      );
      return { content: [textBlock(formatReport(report, language))], metadata: { report } };
    },
  });
}

/** Pick the provider from options and environment. @internal */
export function resolveWeatherProvider(options: WeatherToolOptions): WeatherProvider {
  const env = options.env ?? process.env;
  const key = options.apiKey ?? env[AMAP_ENV_VARIABLE]?.trim() ?? '';
  const choice = options.provider ?? (key !== '' ? 'amap' : 'open-meteo');
  if (typeof choice === 'object') return choice;
  if (choice === 'amap') {
    if (key === '') {
      throw new ConfigurationError(
        `The AMap weather provider needs a Web Service key: set the ${AMAP_ENV_VARIABLE} environment variable or pass { provider: 'amap', apiKey }. Use provider 'open-meteo' for a keyless alternative.`,
      );
    }
    return createAmapProvider({
      apiKey: key,
      ...(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}),
    });
  }
  if (choice === 'open-meteo') {
    return createOpenMeteoProvider({
      ...(options.baseUrl !== undefined ? { forecastBaseUrl: options.baseUrl } : {}),
      ...(options.geocodingBaseUrl !== undefined
        ? { geocodingBaseUrl: options.geocodingBaseUrl }
        : {}),
    });
  }
  throw new ConfigurationError(
    `Unknown weather provider "${String(choice)}". Use 'open-meteo', 'amap' or a WeatherProvider object.`,
  );
}

function formatReport(report: WeatherReport, language: 'en' | 'zh'): string {
  const zh = language === 'zh';
  const place = [report.location.name, report.location.region, report.location.country]
    .filter(
      (part, index, parts) => part !== undefined && part !== '' && parts.indexOf(part) === index,
    )
    .join(', ');
  const coordinates =
    report.location.latitude !== undefined && report.location.longitude !== undefined
      ? ` (${report.location.latitude}, ${report.location.longitude})`
      : '';
  const lines = [
    zh
      ? `${place}${coordinates} 的天气（数据来源：${report.provider}）`
      : `Weather for ${place}${coordinates} (via ${report.provider})`,
  ];
  const now = report.current;
  if (now !== undefined) {
    const parts = [`${now.condition}${zh ? '，' : ', '}${now.temperature} °C`];
    if (now.apparentTemperature !== undefined)
      parts.push(
        zh ? `体感 ${now.apparentTemperature} °C` : `feels like ${now.apparentTemperature} °C`,
      );
    if (now.humidity !== undefined)
      parts.push(zh ? `湿度 ${now.humidity}%` : `humidity ${now.humidity}%`);
    if (now.wind !== undefined) parts.push(zh ? `风 ${now.wind}` : `wind ${now.wind}`);
    if (now.precipitation !== undefined)
      parts.push(zh ? `降水 ${now.precipitation} mm` : `precipitation ${now.precipitation} mm`);
    lines.push(`${zh ? '当前' : 'Now'} (${now.time}): ${parts.join(zh ? '，' : ', ')}`);
  }
  if (report.daily.length > 0) {
    lines.push(zh ? '预报：' : 'Forecast:');
    for (const day of report.daily) {
      const extra = [
        day.precipitation !== undefined
          ? zh
            ? `降水 ${day.precipitation} mm`
            : `precipitation ${day.precipitation} mm`
          : undefined,
        day.wind !== undefined ? (zh ? `风 ${day.wind}` : `wind ${day.wind}`) : undefined,
      ].filter(Boolean);
      lines.push(
        `- ${day.date}: ${day.condition}, ${day.temperatureMin} – ${day.temperatureMax} °C${extra.length > 0 ? `, ${extra.join(', ')}` : ''}`,
      );
    }
  }
  return lines.join('\n');
}

/** Registry factory for `weather`. */
export const weatherToolFactory: ToolFactory<WeatherToolOptions> = {
  name: 'weather',
  create: (config) => createWeatherTool(config),
};
