import { z } from 'zod';
import { ProviderError, SearchToolsErrorCodes } from '../errors.js';
import { joinUrl, requestProviderJson } from '../provider-request.js';
import type { ProviderCallContext } from '../search-types.js';
import type { DailyForecast, WeatherProvider, WeatherReport } from './weather-types.js';

/** Options of {@link createAmapProvider}. */
export interface AmapProviderOptions {
  /** AMap (高德) Web Service API key (env `AMAP_API_KEY`). */
  apiKey: string;
  /** API base (default `https://restapi.amap.com`). */
  baseUrl?: string;
}

// Every AMap Web Service answer carries these; `status` "0" is an error even with HTTP 200.
const envelope = {
  status: z.string(),
  info: z.string().optional(),
  infocode: z.string().optional(),
};
const geocodeSchema = z.object({
  ...envelope,
  geocodes: z
    .array(
      z.object({
        formatted_address: z.string().nullish(),
        province: z.union([z.string(), z.array(z.string())]).nullish(),
        city: z.union([z.string(), z.array(z.string())]).nullish(),
        adcode: z.string(),
        location: z.string().nullish(),
      }),
    )
    .optional(),
});
const weatherSchema = z.object({
  ...envelope,
  lives: z
    .array(
      z.object({
        province: z.string().nullish(),
        city: z.string(),
        adcode: z.string(),
        weather: z.string(),
        temperature: z.string(),
        winddirection: z.string().nullish(),
        windpower: z.string().nullish(),
        humidity: z.string().nullish(),
        reporttime: z.string(),
      }),
    )
    .optional(),
  forecasts: z
    .array(
      z.object({
        city: z.string(),
        adcode: z.string(),
        province: z.string().nullish(),
        reporttime: z.string().nullish(),
        casts: z.array(
          z.object({
            date: z.string(),
            dayweather: z.string(),
            nightweather: z.string().nullish(),
            daytemp: z.string(),
            nighttemp: z.string(),
            daywind: z.string().nullish(),
            daypower: z.string().nullish(),
          }),
        ),
      }),
    )
    .optional(),
});

// AMap infocodes for quota and rate limits that clear by themselves (per-second limits), and
// for server-side faults.
const RETRYABLE_INFOCODES = new Set([
  '10004',
  '10014',
  '10015',
  '10019',
  '10020',
  '10021',
  '10029',
]);

/**
 * AMap (高德地图) weather: live conditions and a 4-day forecast for places in China. A place name
 * is turned into an adcode with AMap's geocoding API; a 6-digit adcode is used as is. Needs a
 * Web Service key.
 *
 * @param options - API key and optional base URL.
 * @returns A weather provider.
 * @example
 * const provider = createAmapProvider({ apiKey: process.env.AMAP_API_KEY! });
 */
export function createAmapProvider(options: AmapProviderOptions): WeatherProvider {
  const base = options.baseUrl ?? 'https://restapi.amap.com';
  const call = async <
    T extends { status: string; info?: string | undefined; infocode?: string | undefined },
  >(
    context: ProviderCallContext,
    path: string,
    parameters: Record<string, string>,
    schema: z.ZodType<T>,
  ): Promise<T> => {
    const url = new URL(joinUrl(base, path));
    url.searchParams.set('key', options.apiKey);
    for (const [key, value] of Object.entries(parameters)) url.searchParams.set(key, value);
    const body = await requestProviderJson(
      context,
      { provider: 'amap', url: url.href, secrets: [options.apiKey] },
      schema,
    );
    if (body.status !== '1') {
      const infocode = body.infocode ?? '';
      const retryable = RETRYABLE_INFOCODES.has(infocode) || infocode.startsWith('3');
      throw new ProviderError(
        `AMap answered ${body.info ?? 'an error'} (infocode ${infocode || 'unknown'}).${infocode === '10001' ? ' Check AMAP_API_KEY: the key is invalid.' : retryable ? ' This is temporary; retry later.' : ''}`,
        {
          provider: 'amap',
          toolName: context.toolName,
          code: SearchToolsErrorCodes.providerStatus,
          isRetryable: retryable,
          ...(retryable && infocode.startsWith('1') ? { retryAfterMs: 1_000 } : {}),
        },
      );
    }
    return body;
  };

  return {
    name: 'amap',
    trustedHosts: options.baseUrl === undefined ? [] : [new URL(options.baseUrl).hostname],
    async forecast(request, context) {
      let adcode = request.location.trim();
      if (!/^\d{6}$/.test(adcode)) {
        const geocoded = await call(context, 'v3/geocode/geo', { address: adcode }, geocodeSchema);
        const first = geocoded.geocodes?.[0];
        if (first === undefined) {
          throw new ProviderError(
            request.language === 'zh'
              ? `高德地图找不到地点“${request.location}”。请给出中国的城市或区县名称，或 6 位行政区划代码。`
              : `AMap found no place called "${request.location}". Give a city or district in China, or a 6-digit adcode.`,
            { provider: 'amap', toolName: context.toolName, code: 'location_not_found' },
          );
        }
        adcode = first.adcode;
      }
      const [live, forecast] = await Promise.all([
        call(
          context,
          'v3/weather/weatherInfo',
          { city: adcode, extensions: 'base' },
          weatherSchema,
        ),
        call(context, 'v3/weather/weatherInfo', { city: adcode, extensions: 'all' }, weatherSchema),
      ]);
      const now = live.lives?.[0];
      const days = forecast.forecasts?.[0];
      if (now === undefined && days === undefined) {
        throw new ProviderError(`AMap has no weather for adcode ${adcode}.`, {
          provider: 'amap',
          toolName: context.toolName,
          code: 'location_not_found',
        });
      }
      const daily: DailyForecast[] = (days?.casts ?? []).map((cast) => ({
        date: cast.date,
        condition:
          cast.nightweather && cast.nightweather !== cast.dayweather
            ? `${cast.dayweather}转${cast.nightweather}`
            : cast.dayweather,
        temperatureMax: Number(cast.daytemp),
        temperatureMin: Number(cast.nighttemp),
        ...(cast.daywind ? { wind: `${cast.daywind}风 ${cast.daypower ?? ''}级`.trim() } : {}),
      }));
      const report: WeatherReport = {
        location: {
          name: now?.city ?? days!.city,
          ...((now?.province ?? days?.province)
            ? { region: (now?.province ?? days?.province)! }
            : {}),
          country: '中国',
        },
        daily: daily.slice(0, request.days),
        provider: 'amap',
      };
      if (now !== undefined) {
        report.current = {
          time: now.reporttime,
          condition: now.weather,
          temperature: Number(now.temperature),
          ...(now.humidity ? { humidity: Number(now.humidity) } : {}),
          ...(now.winddirection
            ? { wind: `${now.winddirection}风 ${now.windpower ?? ''}级`.trim() }
            : {}),
        };
      }
      return report;
    },
  };
}
