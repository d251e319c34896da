import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import type { Socket } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { isIpLiteral } from './ip-address.js';
import { bareHostname, type NetworkPolicy } from './network-policy.js';

/** A `dns.lookup`-compatible resolver (`all: true` form), injectable for tests and custom DNS. */
export type LookupFunction = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** Options of {@link createGuardedDispatcher}. */
export interface GuardedDispatcherOptions {
  /** The policy every connection is checked against. */
  policy: NetworkPolicy;
  /** Resolver used for the connection itself (default `dns.lookup`). */
  lookup?: LookupFunction;
  /** TCP + TLS connect timeout in milliseconds (default 10 000). */
  connectTimeoutMs?: number;
  /** Extra undici `Agent` options (keep-alive, pipelining). `connect` is owned by the guard. */
  agentOptions?: Omit<Agent.Options, 'connect'>;
}

const defaultLookup: LookupFunction = (hostname, options, callback) =>
  dnsLookup(hostname, options, callback);

/**
 * An undici dispatcher whose every socket is checked by the SSRF guard at connection time.
 *
 * The check sits where the address is chosen, so there is no window between "validate" and
 * "connect" for DNS rebinding:
 * 1. an IP-literal host is judged before any socket is opened;
 * 2. a host name is resolved by the guard's own `lookup`, which net/tls use to pick the socket's
 *    address: if any resolved address is refused, the connection is never attempted;
 * 3. once connected, the socket's actual `remoteAddress` is judged again (covers resolvers or
 *    happy-eyeballs paths that bypass `lookup`); a refused socket is destroyed before a byte is sent.
 *
 * Every request and every redirect hop made through this dispatcher opens (or reuses) a socket
 * that went through these checks. Proxies are not used: a proxy would connect on our behalf.
 *
 * @param options - The policy and connection settings.
 * @returns An undici `Agent`; pass it as `dispatcher` to undici's `request` or `fetch`. Close it
 *   with `await dispatcher.close()` when done.
 * @example
 * import { request } from 'undici';
 * const dispatcher = createGuardedDispatcher({ policy: createNetworkPolicy() });
 * await request('http://169.254.169.254/latest/meta-data', { dispatcher }); // rejects: BlockedUrlError
 */
export function createGuardedDispatcher(options: GuardedDispatcherOptions): Dispatcher {
  const { policy } = options;
  const resolve = options.lookup ?? defaultLookup;

  const guardedLookup = (
    hostname: string,
    lookupOptions: LookupOptions,
    callback: (
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void,
  ): void => {
    resolve(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      if (addresses.length === 0) {
        const notFound: NodeJS.ErrnoException = new Error(
          `${hostname} did not resolve to any address.`,
        );
        notFound.code = 'ENOTFOUND';
        return callback(notFound, []);
      }
      try {
        // Refuse the name if any of its addresses is refused: a name that mixes public and
        // private addresses is the classic rebinding set-up.
        for (const entry of addresses) policy.assertAddress(entry.address, hostname);
      } catch (blocked) {
        return callback(blocked as NodeJS.ErrnoException, []);
      }
      if (lookupOptions.all === true) return callback(null, addresses);
      const first = addresses[0]!;
      return callback(null, first.address, first.family);
    });
  };

  const baseConnector = buildConnector({
    lookup: guardedLookup as never,
    timeout: options.connectTimeoutMs ?? 10_000,
  });

  const connector: buildConnector.connector = (connectOptions, callback) => {
    const host = bareHostname(connectOptions.hostname);
    if (isIpLiteral(host)) {
      // net.connect skips `lookup` for IP literals: judge them before opening a socket.
      try {
        policy.assertAddress(host, host);
      } catch (blocked) {
        return callback(blocked as Error, null);
      }
    }
    baseConnector(connectOptions, (error, socket) => {
      if (error !== null) return callback(error, null);
      const remote = (socket as Socket).remoteAddress;
      try {
        if (remote === undefined) throw new Error('The socket has no remote address.');
        policy.assertAddress(remote, host);
      } catch (blocked) {
        (socket as Socket).destroy();
        return callback(blocked as Error, null);
      }
      return callback(null, socket!);
    });
  };

  return new Agent({ ...options.agentOptions, connect: connector });
}
