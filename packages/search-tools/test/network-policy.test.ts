import { describe, expect, it } from '@jest/globals';
import { ConfigurationError } from '@quiver/core';
import { BlockedUrlError, createNetworkPolicy, WebFetchError } from '../src/index.js';

function refusal(action: () => unknown): BlockedUrlError {
  try {
    action();
  } catch (error) {
    if (error instanceof BlockedUrlError) return error;
    throw error;
  }
  throw new Error('expected a BlockedUrlError');
}

describe('createNetworkPolicy', () => {
  const policy = createNetworkPolicy();

  it('refuses non-http(s) schemes', () => {
    for (const url of [
      'file:///etc/passwd',
      'ftp://example.com/x',
      'gopher://example.com:70/',
      'data:text/html,hi',
      'javascript:alert(1)',
    ]) {
      const error = refusal(() => policy.checkUrl(url));
      expect(error.reason).toBe('scheme');
      expect(error.code).toBe('url_blocked');
    }
  });

  it('rejects text that is not an absolute URL', () => {
    for (const url of ['not a url', '/relative/path', 'http://', '']) {
      expect(() => policy.checkUrl(url)).toThrow(WebFetchError);
    }
    try {
      policy.checkUrl('example.com/page');
    } catch (error) {
      expect((error as WebFetchError).code).toBe('invalid_url');
      expect((error as WebFetchError).isRetryable).toBe(false);
    }
  });

  it('refuses IP-literal hosts in private ranges, whatever notation the URL uses', () => {
    const cases: Array<[string, string]> = [
      ['http://127.0.0.1/', 'loopback'],
      ['http://2130706433/', 'loopback'], // decimal 127.0.0.1
      ['http://0x7f.0.0.1/', 'loopback'], // hex octet
      ['http://0177.0.0.1/', 'loopback'], // octal octet
      ['http://169.254.169.254/latest/meta-data/', 'link-local'],
      ['http://[::1]:8080/', 'loopback'],
      ['http://[::ffff:127.0.0.1]/', 'loopback'],
      ['http://[::ffff:169.254.169.254]/', 'link-local'],
      ['http://[fd00::1]/', 'private'],
      ['http://10.0.0.5:9200/_cat/indices', 'private'],
      ['http://0.0.0.0:8080/', 'unspecified'],
    ];
    for (const [url, range] of cases) {
      const error = refusal(() => policy.checkUrl(url));
      expect(error.reason).toBe('address');
      expect(error.range).toBe(range);
      expect(error.message).toContain('allow');
    }
  });

  it('passes public URLs and leaves host names to the connection-time check', () => {
    expect(policy.checkUrl('https://example.com/a?b=c').hostname).toBe('example.com');
    expect(policy.checkUrl('http://localhost:3000/').hostname).toBe('localhost');
    expect(policy.checkUrl('https://93.184.216.34/').hostname).toBe('93.184.216.34');
  });

  it('lets allow-listed addresses, blocks, host names and suffixes through', () => {
    const allowing = createNetworkPolicy({
      allow: ['127.0.0.1', '10.0.0.0/8', 'fd00::/8', 'searxng.lan', '*.corp.example'],
    });
    expect(allowing.checkUrl('http://127.0.0.1:8080/').port).toBe('8080');
    expect(allowing.checkAddress('10.20.30.40')).toEqual({ allowed: true });
    expect(allowing.checkAddress('::ffff:10.20.30.40')).toEqual({ allowed: true });
    expect(allowing.checkAddress('fd12::1')).toEqual({ allowed: true });
    expect(allowing.checkAddress('192.168.1.1', 'searxng.lan')).toEqual({ allowed: true });
    expect(allowing.checkAddress('192.168.1.1', 'search.corp.example')).toEqual({ allowed: true });
    expect(allowing.checkAddress('192.168.1.1', 'corp.example')).toEqual({
      allowed: false,
      range: 'private',
    });
    expect(allowing.checkAddress('127.0.0.2')).toEqual({ allowed: false, range: 'loopback' });
    expect(allowing.checkAddress('169.254.169.254')).toEqual({
      allowed: false,
      range: 'link-local',
    });
  });

  it('extends without changing the original', () => {
    const extended = policy.extend(['127.0.0.1']);
    expect(extended.checkAddress('127.0.0.1')).toEqual({ allowed: true });
    expect(policy.checkAddress('127.0.0.1')).toEqual({ allowed: false, range: 'loopback' });
  });

  it('can be told to allow private networks entirely', () => {
    const open = createNetworkPolicy({ allowPrivateNetwork: true });
    expect(open.checkAddress('10.0.0.1')).toEqual({ allowed: true });
    expect(() => open.checkUrl('file:///etc/passwd')).toThrow(BlockedUrlError);
  });

  it('rejects malformed allow-list entries with a ConfigurationError', () => {
    expect(() => createNetworkPolicy({ allow: ['10.0.0.0/33'] })).toThrow(ConfigurationError);
    expect(() => createNetworkPolicy({ allow: ['http://example.com'] })).toThrow(
      ConfigurationError,
    );
    expect(() => createNetworkPolicy({ allow: [''] })).toThrow(ConfigurationError);
  });
});
