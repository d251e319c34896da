import { describe, expect, it } from '@jest/globals';
import { classifyAddress, isIpLiteral } from '../src/index.js';

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'shared'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['198.18.0.1', 'benchmarking'],
    ['192.0.2.1', 'documentation'],
  ])('refuses IPv4 %s as %s', (address, range) => {
    expect(classifyAddress(address)).toBe(range);
  });

  it.each(['8.8.8.8', '93.184.216.34', '172.32.0.1', '100.128.0.1', '1.1.1.1'])(
    'accepts public IPv4 %s',
    (address) => {
      expect(classifyAddress(address)).toBe('public');
    },
  );

  it.each([
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['2001:0:4136:e378::1', 'reserved'],
    ['fec0::1', 'private'],
  ])('refuses IPv6 %s as %s', (address, range) => {
    expect(classifyAddress(address)).toBe(range);
  });

  it.each([
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:10.1.2.3', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['2002:7f00:1::', 'loopback'],
    ['::ffff:0:c0a8:101', 'private'],
  ])('judges IPv4 embedded in IPv6 %s by the IPv4 address (%s)', (address, range) => {
    expect(classifyAddress(address)).toBe(range);
  });

  it('accepts public IPv6 and IPv4-mapped public addresses', () => {
    expect(classifyAddress('2606:4700:4700::1111')).toBe('public');
    expect(classifyAddress('::ffff:8.8.8.8')).toBe('public');
    expect(classifyAddress('2002:0808:0808::1')).toBe('public');
  });

  it('returns undefined for host names and garbage', () => {
    expect(classifyAddress('localhost')).toBeUndefined();
    expect(classifyAddress('256.1.1.1')).toBeUndefined();
    expect(isIpLiteral('example.com')).toBe(false);
    expect(isIpLiteral('[2001:db8::1]')).toBe(true);
  });
});
