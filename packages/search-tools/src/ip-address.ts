import { isIPv4, isIPv6 } from 'node:net';

/**
 * The kind of network an IP address belongs to. Everything but `public` is refused by the SSRF
 * guard unless allow-listed.
 */
export type AddressRange =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared'
  | 'documentation'
  | 'benchmarking'
  | 'multicast'
  | 'reserved';

interface Ipv4Range {
  base: number;
  prefix: number;
  range: AddressRange;
}

// IANA IPv4 Special-Purpose Address Registry: every block that is not globally reachable.
const IPV4_RANGES: Ipv4Range[] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
].map(([base, prefix, range]) => ({
  base: ipv4ToNumber(base as string),
  prefix: prefix as number,
  range: range as AddressRange,
}));

/** @internal Parse dotted-quad IPv4 into an unsigned 32-bit number. */
export function ipv4ToNumber(address: string): number {
  const parts = address.split('.').map(Number);
  return (((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!) >>> 0;
}

function inIpv4Range(value: number, base: number, prefix: number): boolean {
  if (prefix === 0) return true;
  const mask = (~0 << (32 - prefix)) >>> 0;
  return (value & mask) >>> 0 === (base & mask) >>> 0;
}

function classifyIpv4Number(value: number): AddressRange {
  for (const entry of IPV4_RANGES) {
    if (inIpv4Range(value, entry.base, entry.prefix)) return entry.range;
  }
  return 'public';
}

/**
 * @internal Parse an IPv6 address (with `::`, an embedded dotted IPv4 tail, or a `%zone`) into
 * its eight 16-bit groups. Returns `undefined` for anything that is not IPv6.
 */
export function parseIpv6(input: string): number[] | undefined {
  let address = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  const zone = address.indexOf('%');
  if (zone !== -1) address = address.slice(0, zone);
  if (!isIPv6(address)) return undefined;
  let tail: number[] = [];
  const lastColon = address.lastIndexOf(':');
  const last = address.slice(lastColon + 1);
  if (last.includes('.')) {
    const value = ipv4ToNumber(last);
    tail = [value >>> 16, value & 0xffff];
    address = `${address.slice(0, lastColon + 1)}0:0`;
  }
  const [head = '', rest] = address.split('::') as [string, string | undefined];
  const parse = (part: string): number[] =>
    part === '' ? [] : part.split(':').map((group) => parseInt(group, 16));
  const headGroups = parse(head);
  const restGroups = rest === undefined ? [] : parse(rest);
  const groups =
    rest === undefined
      ? headGroups
      : [
          ...headGroups,
          ...new Array<number>(8 - headGroups.length - restGroups.length).fill(0),
          ...restGroups,
        ];
  if (tail.length === 2) {
    groups[6] = tail[0]!;
    groups[7] = tail[1]!;
  }
  return groups.length === 8 ? groups : undefined;
}

function groupsToIpv4(high: number, low: number): number {
  return ((high << 16) >>> 0) + low;
}

function classifyIpv6Groups(groups: number[]): AddressRange {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const firstFiveZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (firstFiveZero && g5 === 0) {
    if (g6 === 0 && g7 === 0) return 'unspecified';
    if (g6 === 0 && g7 === 1) return 'loopback';
    // ::a.b.c.d, the deprecated IPv4-compatible form: judge the IPv4 address it carries.
    return classifyIpv4Number(groupsToIpv4(g6, g7));
  }
  // ::ffff:a.b.c.d (IPv4-mapped): the socket really talks to the IPv4 address.
  if (firstFiveZero && g5 === 0xffff) return classifyIpv4Number(groupsToIpv4(g6, g7));
  // ::ffff:0:a.b.c.d (IPv4-translated, SIIT).
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0) {
    return classifyIpv4Number(groupsToIpv4(g6, g7));
  }
  // 64:ff9b::/96, well-known NAT64 prefix: a NAT64 gateway connects to the embedded IPv4 address.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return classifyIpv4Number(groupsToIpv4(g6, g7));
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return 'private'; // 64:ff9b:1::/48 local-use NAT64
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return 'reserved'; // 100::/64 discard-only
  // 2002::/16 6to4: the relay delivers to the IPv4 address in bits 16..47.
  if (g0 === 0x2002) return classifyIpv4Number(groupsToIpv4(g1, g2));
  if (g0 === 0x2001 && g1 === 0x0db8) return 'documentation'; // 2001:db8::/32
  if (g0 === 0x2001 && g1 < 0x200) return 'reserved'; // 2001::/23 IETF protocol assignments (Teredo, ORCHID …)
  if (g0 === 0x3fff && g1 < 0x1000) return 'documentation'; // 3fff::/20
  if (g0 === 0x5f00) return 'reserved'; // 5f00::/16 SRv6 SIDs
  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // fc00::/7 unique local
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local'; // fe80::/10
  if ((g0 & 0xffc0) === 0xfec0) return 'private'; // fec0::/10 site-local (deprecated)
  if ((g0 & 0xff00) === 0xff00) return 'multicast'; // ff00::/8
  // Only 2000::/3 is allocated for global unicast; anything else is not a public destination.
  if ((g0 & 0xe000) !== 0x2000) return 'reserved';
  return 'public';
}

/**
 * Classify an IP address (IPv4, IPv6, IPv4-mapped IPv6, with or without brackets or a zone).
 *
 * @param address - An IP address literal.
 * @returns The range it belongs to, or `undefined` when `address` is not an IP address.
 * @example
 * classifyAddress('169.254.169.254'); // 'link-local'
 * classifyAddress('::ffff:127.0.0.1'); // 'loopback'
 * classifyAddress('93.184.216.34'); // 'public'
 */
export function classifyAddress(address: string): AddressRange | undefined {
  if (isIPv4(address)) return classifyIpv4Number(ipv4ToNumber(address));
  const groups = parseIpv6(address);
  return groups === undefined ? undefined : classifyIpv6Groups(groups);
}

/** True when `address` is an IP literal (IPv4, or IPv6 with or without brackets). */
export function isIpLiteral(address: string): boolean {
  return isIPv4(address) || parseIpv6(address) !== undefined;
}
