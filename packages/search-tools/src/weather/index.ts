export { createAmapProvider } from './amap.js';
export type { AmapProviderOptions } from './amap.js';
export { createOpenMeteoProvider } from './open-meteo.js';
export type { OpenMeteoProviderOptions } from './open-meteo.js';
export { AMAP_ENV_VARIABLE, createWeatherTool, weatherToolFactory } from './weather-tool.js';
export type { WeatherArguments, WeatherToolOptions } from './weather-tool.js';
export type {
  CurrentWeather,
  DailyForecast,
  WeatherLocation,
  WeatherProvider,
  WeatherReport,
  WeatherRequest,
} from './weather-types.js';
