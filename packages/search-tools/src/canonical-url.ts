// Query parameters that only track clicks: they never change what a page shows.
const TRACKING_PARAMETER =
  /^(utm_[a-z_]+|gclid|gclsrc|dclid|fbclid|msclkid|yclid|mc_cid|mc_eid|igshid|_hsenc|_hsmi|ref_src|spm|srsltid)$/i;

/**
 * A key under which two URLs of the same page compare equal, for de-duplicating search results:
 * scheme-insensitive (http = https), host lower-cased without `www.`, default ports, fragments
 * and click-tracking parameters (`utm_*`, `gclid`, `fbclid` …) dropped, remaining parameters
 * sorted, trailing slash removed.
 *
 * @param url - An absolute URL.
 * @returns The key, or `undefined` when `url` is not an absolute http(s) URL.
 * @example
 * canonicalUrlKey('https://www.Example.com/a/?utm_source=x#top') === canonicalUrlKey('http://example.com/a'); // true
 */
export function canonicalUrlKey(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  const host = parsed.hostname
    .toLowerCase()
    .replace(/^www\./, '')
    .replace(/\.$/, '');
  const port =
    parsed.port === '' || parsed.port === '80' || parsed.port === '443' ? '' : `:${parsed.port}`;
  const parameters = [...parsed.searchParams.entries()]
    .filter(([key]) => !TRACKING_PARAMETER.test(key))
    .sort(([a, aValue], [b, bValue]) =>
      a === b ? aValue.localeCompare(bValue) : a.localeCompare(b),
    );
  const query = parameters.length === 0 ? '' : `?${new URLSearchParams(parameters).toString()}`;
  let path = parsed.pathname.replace(/\/+$/, '');
  if (/\/index\.(html?|php|aspx?)$/i.test(path)) path = path.replace(/\/index\.[a-z]+$/i, '');
  return `${host}${port}${path}${query}`;
}
