const RELATIVE = /^(\d+)\s*(second|minute|hour|day|week|month|year)s?\s+ago$/i;
const RELATIVE_ZH = /^(\d+)\s*(秒|分钟|小时|天|周|个月|年)前$/;
const UNIT_MS: Record<string, number> = {
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 7 * 86_400_000,
  month: 30 * 86_400_000,
  year: 365 * 86_400_000,
  秒: 1_000,
  分钟: 60_000,
  小时: 3_600_000,
  天: 86_400_000,
  周: 7 * 86_400_000,
  个月: 30 * 86_400_000,
  年: 365 * 86_400_000,
};

/**
 * Normalise a provider's date to ISO 8601: ISO and RFC dates as they are (to UTC), relative ages
 * ("3 days ago", "3天前") resolved against `now` (to the day). Returns `undefined` for anything else.
 *
 * @internal
 */
export function normalizePublishedDate(value: unknown, now: number): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  const relative = RELATIVE.exec(text) ?? RELATIVE_ZH.exec(text);
  if (relative) {
    const unit = UNIT_MS[relative[2]!.toLowerCase()] ?? UNIT_MS[relative[2]!]!;
    return new Date(now - Number(relative[1]) * unit).toISOString().slice(0, 10);
  }
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return text;
  // Dates without a zone are read as UTC, so the result does not depend on the machine's zone.
  const zoned = /(z|gmt|utc|[+-]\d{2}:?\d{2})\s*$/i.test(text);
  const isoLocal = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text);
  let parsed = zoned ? Date.parse(text) : Date.parse(isoLocal ? `${text}Z` : `${text} UTC`);
  if (Number.isNaN(parsed)) parsed = Date.parse(text);
  if (Number.isNaN(parsed)) return undefined;
  return new Date(parsed).toISOString();
}
