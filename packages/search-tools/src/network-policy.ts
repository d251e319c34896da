import { ConfigurationError } from '@quiver/core';
import { isIPv4 } from 'node:net';
import { BlockedUrlError, SearchToolsErrorCodes, WebFetchError } from './errors.js';
import { type AddressRange, classifyAddress, ipv4ToNumber, parseIpv6 } from './ip-address.js';

/** Options of {@link createNetworkPolicy}. */
export interface NetworkPolicyOptions {
  /**
   * Destinations the guard lets through even though they are not public: IP addresses
   * (`127.0.0.1`, `::1`), CIDR blocks (`10.0.0.0/8`, `fd00::/8`), host names (`searxng.lan`) and
   * host-name suffixes (`*.corp.example`). A host name entry trusts whatever that name resolves to.
   */
  allow?: string[];
  /**
   * Turn the private-network guard off entirely (schemes are still checked). Only for
   * deployments where the agent is meant to browse an internal network.
   */
  allowPrivateNetwork?: boolean;
}

/** The verdict on one address. */
export type AddressVerdict = { allowed: true } | { allowed: false; range: AddressRange };

/**
 * Decides which URLs and addresses web tools may reach. Immutable; share one per deployment.
 * See {@link createNetworkPolicy}.
 */
export interface NetworkPolicy {
  /** The allow-list entries as given. */
  readonly allow: readonly string[];
  readonly allowPrivateNetwork: boolean;
  /**
   * Parse `input` as an absolute http(s) URL and refuse what the guard can tell before
   * connecting: other schemes, and IP-literal hosts outside public ranges.
   *
   * @throws {WebFetchError} code `invalid_url` when `input` is not an absolute URL.
   * @throws {BlockedUrlError} for a non-http(s) scheme or a refused IP-literal host.
   */
  checkUrl(input: string | URL): URL;
  /** Judge one resolved address for a connection to `hostname`. */
  checkAddress(address: string, hostname?: string): AddressVerdict;
  /** Throw {@link BlockedUrlError} when `checkAddress` refuses the address. */
  assertAddress(address: string, hostname: string, url?: string): void;
  /** A copy of this policy that also allows `entries`. */
  extend(entries: string[]): NetworkPolicy;
}

type AllowEntry =
  | { kind: 'v4'; base: number; prefix: number }
  | { kind: 'v6'; groups: number[]; prefix: number }
  | { kind: 'host'; name: string }
  | { kind: 'suffix'; suffix: string };

function parseAllowEntry(entry: string): AllowEntry {
  const trimmed = entry.trim().toLowerCase();
  const [addressPart = '', prefixPart] = trimmed.split('/') as [string, string | undefined];
  const address =
    addressPart.startsWith('[') && addressPart.endsWith(']')
      ? addressPart.slice(1, -1)
      : addressPart;
  if (isIPv4(address)) {
    const prefix = prefixPart === undefined ? 32 : Number(prefixPart);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > 32) throw invalidEntry(entry);
    return { kind: 'v4', base: ipv4ToNumber(address), prefix };
  }
  const groups = parseIpv6(address);
  if (groups !== undefined) {
    const prefix = prefixPart === undefined ? 128 : Number(prefixPart);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > 128) throw invalidEntry(entry);
    return { kind: 'v6', groups, prefix };
  }
  if (prefixPart !== undefined || trimmed === '' || /[\s/:@]/.test(trimmed))
    throw invalidEntry(entry);
  if (trimmed.startsWith('*.')) return { kind: 'suffix', suffix: trimmed.slice(1) };
  return { kind: 'host', name: trimmed.replace(/\.$/, '') };
}

function invalidEntry(entry: string): ConfigurationError {
  return new ConfigurationError(
    `Network allow-list entry "${entry}" is not an IP address, a CIDR block (10.0.0.0/8, fd00::/8), a host name or a "*.suffix" pattern. Fix the entry in the \`allow\` option.`,
  );
}

function matchesV6(groups: number[], entry: { groups: number[]; prefix: number }): boolean {
  let bits = entry.prefix;
  for (let index = 0; index < 8 && bits > 0; index += 1) {
    const take = Math.min(16, bits);
    const mask = (0xffff << (16 - take)) & 0xffff;
    if ((groups[index]! & mask) !== (entry.groups[index]! & mask)) return false;
    bits -= take;
  }
  return true;
}

function addressAllowed(entries: AllowEntry[], address: string): boolean {
  const bare = address.startsWith('[') ? address.slice(1, -1) : address;
  if (isIPv4(bare)) {
    const value = ipv4ToNumber(bare);
    return entries.some((entry) => {
      if (entry.kind !== 'v4') return false;
      if (entry.prefix === 0) return true;
      const mask = (~0 << (32 - entry.prefix)) >>> 0;
      return (value & mask) >>> 0 === (entry.base & mask) >>> 0;
    });
  }
  const groups = parseIpv6(bare);
  if (groups === undefined) return false;
  if (entries.some((entry) => entry.kind === 'v6' && matchesV6(groups, entry))) return true;
  // An IPv4-mapped address (::ffff:a.b.c.d) is the IPv4 address for allow-listing too.
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  if (mapped) {
    const v4 = `${groups[6]! >>> 8}.${groups[6]! & 0xff}.${groups[7]! >>> 8}.${groups[7]! & 0xff}`;
    return addressAllowed(entries, v4);
  }
  return false;
}

function hostAllowed(entries: AllowEntry[], hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return entries.some(
    (entry) =>
      (entry.kind === 'host' && entry.name === name) ||
      (entry.kind === 'suffix' && name.endsWith(entry.suffix) && name.length > entry.suffix.length),
  );
}

/** Strip the brackets URL parsers keep around IPv6 hosts. */
export function bareHostname(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/**
 * Build the policy the SSRF guard enforces: only `http:` and `https:` URLs, and only public IP
 * addresses (no loopback, private, link-local incl. `169.254.169.254`, CGNAT, multicast,
 * documentation or reserved ranges, in IPv4, IPv6 or IPv4-mapped IPv6) unless allow-listed.
 *
 * The policy only decides; the guarded dispatcher applies it to the address each socket actually
 * connects to (see `createGuardedDispatcher`).
 *
 * @param options - The allow-list.
 * @returns An immutable policy.
 * @throws {ConfigurationError} when an allow-list entry cannot be parsed.
 * @example
 * const policy = createNetworkPolicy({ allow: ['127.0.0.1', 'searxng.lan'] });
 * policy.checkAddress('10.1.2.3'); // { allowed: false, range: 'private' }
 */
export function createNetworkPolicy(options: NetworkPolicyOptions = {}): NetworkPolicy {
  const allow = [...(options.allow ?? [])];
  const entries = allow.map(parseAllowEntry);
  const allowPrivateNetwork = options.allowPrivateNetwork ?? false;

  const checkAddress = (address: string, hostname?: string): AddressVerdict => {
    if (allowPrivateNetwork) return { allowed: true };
    if (hostname !== undefined && hostAllowed(entries, bareHostname(hostname)))
      return { allowed: true };
    const range = classifyAddress(address);
    // Not an IP at all: nothing to connect to, so nothing to allow.
    if (range === undefined) return { allowed: false, range: 'reserved' };
    if (range === 'public' || addressAllowed(entries, address)) return { allowed: true };
    return { allowed: false, range };
  };

  const assertAddress = (address: string, hostname: string, url?: string): void => {
    const verdict = checkAddress(address, hostname);
    if (verdict.allowed) return;
    const host = bareHostname(hostname);
    const via = host === bareHostname(address) ? '' : ` (${host} resolves to it)`;
    throw new BlockedUrlError(
      `Refused to connect to ${address}${via}: it is a ${verdict.range} address, and web tools only reach public internet addresses. If this destination is intended, add it to the network policy's \`allow\` list.`,
      { url: url ?? host, reason: 'address', address, range: verdict.range },
    );
  };

  return {
    allow,
    allowPrivateNetwork,
    checkAddress,
    assertAddress,
    checkUrl(input) {
      let url: URL;
      try {
        url = typeof input === 'string' ? new URL(input.trim()) : new URL(input.href);
      } catch (error) {
        throw new WebFetchError(
          `"${String(input).slice(0, 200)}" is not a valid absolute URL. Give a full URL such as https://example.com/page.`,
          { code: SearchToolsErrorCodes.invalidUrl, url: String(input).slice(0, 2000) },
          { cause: error },
        );
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new BlockedUrlError(
          `Refused ${url.protocol} URL: web tools only fetch http: and https: URLs.`,
          { url: url.href.slice(0, 2000), reason: 'scheme' },
        );
      }
      if (url.hostname === '') {
        throw new WebFetchError(
          `"${url.href}" has no host name. Give a full URL such as https://example.com/page.`,
          {
            code: SearchToolsErrorCodes.invalidUrl,
            url: url.href,
          },
        );
      }
      const host = bareHostname(url.hostname);
      if (classifyAddress(host) !== undefined) assertAddress(host, host, url.href);
      return url;
    },
    extend(more) {
      return createNetworkPolicy({ allow: [...allow, ...more], allowPrivateNetwork });
    },
  };
}
