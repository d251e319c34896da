import { z } from 'zod';
import { ProviderError } from '../errors.js';
import { joinUrl, requestProviderJson } from '../provider-request.js';
import type { DailyForecast, WeatherProvider, WeatherReport } from './weather-types.js';
import { describeWeatherCode } from './wmo-codes.js';

/** Options of {@link createOpenMeteoProvider}. */
export interface OpenMeteoProviderOptions {
  /** Forecast API base (default `https://api.open-meteo.com`). */
  forecastBaseUrl?: string;
  /** Geocoding API base (default `https://geocoding-api.open-meteo.com`). */
  geocodingBaseUrl?: string;
}

// Open-Meteo geocoding `GET /v1/search`: `results` is absent when nothing matches.
const geocodingSchema = z.object({
  results: z
    .array(
      z.object({
        name: z.string(),
        latitude: z.number(),
        longitude: z.number(),
        country: z.string().nullish(),
        admin1: z.string().nullish(),
        timezone: z.string().nullish(),
      }),
    )
    .optional(),
});
// Open-Meteo forecast `GET /v1/forecast` with `current` and `daily` variables.
const forecastSchema = z.object({
  latitude: z.number(),
  longitude: z.number(),
  timezone: z.string().optional(),
  current: z
    .object({
      time: z.string(),
      temperature_2m: z.number(),
      relative_humidity_2m: z.number().nullish(),
      apparent_temperature: z.number().nullish(),
      precipitation: z.number().nullish(),
      weather_code: z.number(),
      wind_speed_10m: z.number().nullish(),
    })
    .optional(),
  daily: z.object({
    time: z.array(z.string()),
    weather_code: z.array(z.number().nullable()),
    temperature_2m_max: z.array(z.number().nullable()),
    temperature_2m_min: z.array(z.number().nullable()),
    precipitation_sum: z.array(z.number().nullable()).optional(),
    wind_speed_10m_max: z.array(z.number().nullable()).optional(),
  }),
});

const COORDINATES = /^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$/;

/**
 * Open-Meteo: free weather forecasts, no API key. Place names are resolved with Open-Meteo's
 * geocoding API; `latitude,longitude` is used as is.
 *
 * @param options - Optional endpoint overrides (proxies, tests).
 * @returns A weather provider.
 * @example
 * const provider = createOpenMeteoProvider();
 */
export function createOpenMeteoProvider(options: OpenMeteoProviderOptions = {}): WeatherProvider {
  const forecastBase = options.forecastBaseUrl ?? 'https://api.open-meteo.com';
  const geocodingBase = options.geocodingBaseUrl ?? 'https://geocoding-api.open-meteo.com';
  const trustedHosts = [options.forecastBaseUrl, options.geocodingBaseUrl]
    .filter((value): value is string => value !== undefined)
    .map((value) => new URL(value).hostname);
  return {
    name: 'open-meteo',
    trustedHosts,
    async forecast(request, context) {
      let location: WeatherReport['location'];
      const coordinates = COORDINATES.exec(request.location);
      if (coordinates) {
        location = {
          name: request.location.trim(),
          latitude: Number(coordinates[1]),
          longitude: Number(coordinates[2]),
        };
      } else {
        const url = new URL(joinUrl(geocodingBase, 'v1/search'));
        url.searchParams.set('name', request.location.trim());
        url.searchParams.set('count', '1');
        url.searchParams.set('language', request.language);
        url.searchParams.set('format', 'json');
        const geocoded = await requestProviderJson(
          context,
          { provider: 'open-meteo', url: url.href },
          geocodingSchema,
        );
        const place = geocoded.results?.[0];
        if (place === undefined) {
          throw new ProviderError(
            request.language === 'zh'
              ? `找不到地点“${request.location}”。请换一个写法，或直接给出“纬度,经度”。`
              : `No place called "${request.location}" was found. Try another spelling, or give "latitude,longitude".`,
            { provider: 'open-meteo', toolName: context.toolName, code: 'location_not_found' },
          );
        }
        location = {
          name: place.name,
          ...(place.admin1 ? { region: place.admin1 } : {}),
          ...(place.country ? { country: place.country } : {}),
          latitude: place.latitude,
          longitude: place.longitude,
          ...(place.timezone ? { timezone: place.timezone } : {}),
        };
      }
      const url = new URL(joinUrl(forecastBase, 'v1/forecast'));
      url.searchParams.set('latitude', String(location.latitude));
      url.searchParams.set('longitude', String(location.longitude));
      url.searchParams.set(
        'current',
        'temperature_2m,relative_humidity_2m,apparent_temperature,precipitation,weather_code,wind_speed_10m',
      );
      url.searchParams.set(
        'daily',
        'weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,wind_speed_10m_max',
      );
      url.searchParams.set('timezone', 'auto');
      url.searchParams.set('forecast_days', String(request.days));
      const forecast = await requestProviderJson(
        context,
        { provider: 'open-meteo', url: url.href },
        forecastSchema,
      );
      const daily: DailyForecast[] = [];
      forecast.daily.time.forEach((date, index) => {
        const code = forecast.daily.weather_code[index];
        const max = forecast.daily.temperature_2m_max[index];
        const min = forecast.daily.temperature_2m_min[index];
        if (code == null || max == null || min == null) return;
        const precipitation = forecast.daily.precipitation_sum?.[index];
        const wind = forecast.daily.wind_speed_10m_max?.[index];
        daily.push({
          date,
          condition: describeWeatherCode(code, request.language),
          temperatureMax: max,
          temperatureMin: min,
          ...(precipitation != null ? { precipitation } : {}),
          ...(wind != null ? { wind: `${wind} km/h` } : {}),
        });
      });
      const current = forecast.current;
      return {
        location: { ...location, ...(forecast.timezone ? { timezone: forecast.timezone } : {}) },
        ...(current !== undefined
          ? {
              current: {
                time: current.time,
                condition: describeWeatherCode(current.weather_code, request.language),
                temperature: current.temperature_2m,
                ...(current.apparent_temperature != null
                  ? { apparentTemperature: current.apparent_temperature }
                  : {}),
                ...(current.relative_humidity_2m != null
                  ? { humidity: current.relative_humidity_2m }
                  : {}),
                ...(current.wind_speed_10m != null
                  ? { wind: `${current.wind_speed_10m} km/h` }
                  : {}),
                ...(current.precipitation != null ? { precipitation: current.precipitation } : {}),
              },
            }
          : {}),
        daily: daily.slice(0, request.days),
        provider: 'open-meteo',
      };
    },
  };
}
