import { describe, expect, it } from '@jest/globals';
import { canonicalUrlKey } from '../src/index.js';

describe('canonicalUrlKey', () => {
  it('treats scheme, www, case of host, default ports, fragments, trailing slashes and tracking parameters as equal', () => {
    const key = canonicalUrlKey('https://en.wikipedia.org/wiki/Mozilla');
    for (const variant of [
      'http://en.wikipedia.org/wiki/Mozilla',
      'https://EN.Wikipedia.org:443/wiki/Mozilla/',
      'https://www.en.wikipedia.org/wiki/Mozilla#History',
      'https://en.wikipedia.org/wiki/Mozilla?utm_source=x&utm_medium=y&gclid=abc&fbclid=def',
    ]) {
      expect(canonicalUrlKey(variant)).toBe(key);
    }
  });

  it('keeps what changes the page: path case, real query parameters, non-default ports', () => {
    const key = canonicalUrlKey('https://example.com/Page?id=1');
    expect(canonicalUrlKey('https://example.com/page?id=1')).not.toBe(key);
    expect(canonicalUrlKey('https://example.com/Page?id=2')).not.toBe(key);
    expect(canonicalUrlKey('https://example.com:8443/Page?id=1')).not.toBe(key);
    expect(canonicalUrlKey('https://example.com/Page?b=2&a=1')).toBe(
      canonicalUrlKey('https://example.com/Page?a=1&b=2'),
    );
    expect(canonicalUrlKey('https://example.com/docs/index.html')).toBe(
      canonicalUrlKey('https://example.com/docs/'),
    );
  });

  it('returns undefined for non-http URLs and garbage', () => {
    expect(canonicalUrlKey('mailto:a@example.com')).toBeUndefined();
    expect(canonicalUrlKey('not a url')).toBeUndefined();
  });
});
