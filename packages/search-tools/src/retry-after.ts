/**
 * Parse an HTTP `Retry-After` header (delay in seconds, or an HTTP date) into milliseconds.
 *
 * @param value - The header value, if any.
 * @param now - The current time in milliseconds (injectable for tests).
 * @returns The delay in milliseconds (never negative), or `undefined` when absent or unparsable.
 * @example
 * parseRetryAfter('2'); // 2000
 */
export function parseRetryAfter(
  value: string | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** True for statuses worth retrying later: 408, 425, 429 and every 5xx. */
export function isTransientStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}
