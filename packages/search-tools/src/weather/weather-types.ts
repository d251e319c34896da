import type { ProviderCallContext } from '../search-types.js';

/** Where a report is for. */
export interface WeatherLocation {
  name: string;
  /** Country, province or region, when the provider names them. */
  region?: string;
  country?: string;
  latitude?: number;
  longitude?: number;
  timezone?: string;
}

/** Conditions now. */
export interface CurrentWeather {
  /** Local time of the observation, as the provider gives it. */
  time: string;
  /** Condition text in the requested language ("Light rain", "小雨"). */
  condition: string;
  /** °C. */
  temperature: number;
  /** °C. */
  apparentTemperature?: number;
  /** %. */
  humidity?: number;
  /** Wind speed in km/h (Open-Meteo) or a Beaufort-style level text (AMap). */
  wind?: string;
  /** mm. */
  precipitation?: number;
}

/** One day of the forecast. */
export interface DailyForecast {
  /** `YYYY-MM-DD`. */
  date: string;
  condition: string;
  /** °C. */
  temperatureMax: number;
  /** °C. */
  temperatureMin: number;
  /** mm, when known. */
  precipitation?: number;
  wind?: string;
}

/** A weather report, whichever provider made it. */
export interface WeatherReport {
  location: WeatherLocation;
  current?: CurrentWeather;
  daily: DailyForecast[];
  /** `open-meteo`, `amap`, or a custom provider's name. */
  provider: string;
}

/** What a weather provider is asked. */
export interface WeatherRequest {
  /** A place name (`Berlin`, `北京`), an AMap adcode (`110000`), or `latitude,longitude`. */
  location: string;
  /** Forecast days, 1..7 (AMap gives at most 4). */
  days: number;
  language: 'en' | 'zh';
}

/** A weather backend. */
export interface WeatherProvider {
  readonly name: string;
  /** Hosts of operator-configured endpoints, trusted by the SSRF guard. */
  readonly trustedHosts?: readonly string[];
  forecast(request: WeatherRequest, context: ProviderCallContext): Promise<WeatherReport>;
}
