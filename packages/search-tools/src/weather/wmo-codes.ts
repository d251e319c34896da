// WMO weather interpretation codes (WW) as used by Open-Meteo's `weather_code`.
const WMO: Record<number, [string, string]> = {
  0: ['Clear sky', '晴'],
  1: ['Mainly clear', '大部晴朗'],
  2: ['Partly cloudy', '多云'],
  3: ['Overcast', '阴'],
  45: ['Fog', '雾'],
  48: ['Depositing rime fog', '冻雾'],
  51: ['Light drizzle', '小毛毛雨'],
  53: ['Moderate drizzle', '毛毛雨'],
  55: ['Dense drizzle', '大毛毛雨'],
  56: ['Light freezing drizzle', '小冻毛毛雨'],
  57: ['Dense freezing drizzle', '冻毛毛雨'],
  61: ['Slight rain', '小雨'],
  63: ['Moderate rain', '中雨'],
  65: ['Heavy rain', '大雨'],
  66: ['Light freezing rain', '小冻雨'],
  67: ['Heavy freezing rain', '冻雨'],
  71: ['Slight snow fall', '小雪'],
  73: ['Moderate snow fall', '中雪'],
  75: ['Heavy snow fall', '大雪'],
  77: ['Snow grains', '米雪'],
  80: ['Slight rain showers', '小阵雨'],
  81: ['Moderate rain showers', '阵雨'],
  82: ['Violent rain showers', '强阵雨'],
  85: ['Slight snow showers', '小阵雪'],
  86: ['Heavy snow showers', '强阵雪'],
  95: ['Thunderstorm', '雷阵雨'],
  96: ['Thunderstorm with slight hail', '雷阵雨伴有小冰雹'],
  99: ['Thunderstorm with heavy hail', '雷阵雨伴有大冰雹'],
};

/**
 * Describe a WMO weather code in English or Chinese.
 *
 * @internal
 */
export function describeWeatherCode(code: number, language: 'en' | 'zh'): string {
  const entry = WMO[code];
  if (entry === undefined) return language === 'zh' ? `天气代码 ${code}` : `weather code ${code}`;
  return language === 'zh' ? entry[1] : entry[0];
}
