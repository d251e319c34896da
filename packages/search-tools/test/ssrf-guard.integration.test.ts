import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { LookupAddress } from 'node:dns';
import { request } from 'undici';
import {
  BlockedUrlError,
  createGuardedDispatcher,
  createHttpClient,
  createNetworkPolicy,
  type HttpClient,
  type LookupFunction,
} from '../src/index.js';
import { type FixtureServer, startFixtureServer } from './helpers/fixture-server.js';

/** A resolver that answers from a table, recording each question (the socket's lookups). */
function tableLookup(
  table: Record<string, string[] | (() => string[])>,
): LookupFunction & { calls: string[] } {
  const calls: string[] = [];
  const lookup = ((hostname, _options, callback) => {
    calls.push(hostname);
    const entry = table[hostname];
    if (entry === undefined) {
      const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      error.code = 'ENOTFOUND';
      callback(error, []);
      return;
    }
    const addresses = typeof entry === 'function' ? entry() : entry;
    callback(
      null,
      addresses.map((address): LookupAddress => ({
        address,
        family: address.includes(':') ? 6 : 4,
      })),
    );
  }) as LookupFunction & { calls: string[] };
  lookup.calls = calls;
  return lookup;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the request to be refused');
}

describe('SSRF guard (real sockets on 127.0.0.1)', () => {
  let server: FixtureServer;
  const clients: HttpClient[] = [];
  const client = (...args: Parameters<typeof createHttpClient>): HttpClient => {
    const created = createHttpClient(...args);
    clients.push(created);
    return created;
  };

  beforeAll(async () => {
    server = await startFixtureServer();
    server.route('GET /secret', (_request, response) => response.end('internal admin data'));
    server.route('GET /public', (_request, response) => response.end('hello'));
    server.route('GET /to-secret', (_request, response) => {
      response.writeHead(302, { location: `http://127.0.0.1:${server.port}/secret` });
      response.end();
    });
    server.route('GET /to-metadata', (_request, response) => {
      response.writeHead(301, {
        location: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      });
      response.end();
    });
    server.route('GET /to-file', (_request, response) => {
      response.writeHead(302, { location: 'file:///etc/passwd' });
      response.end();
    });
    server.route('GET /to-localhost-name', (_request, response) => {
      response.writeHead(307, { location: `http://localhost:${server.port}/secret` });
      response.end();
    });
  });
  afterEach(() => {
    server.requests.length = 0;
  });
  afterAll(async () => {
    await Promise.all(clients.map((item) => item.close()));
    await server.close();
  });

  it('refuses loopback by default and never reaches the server', async () => {
    const error = await rejection(client().fetch(`${server.origin}/secret`));
    expect(error).toBeInstanceOf(BlockedUrlError);
    expect((error as BlockedUrlError).range).toBe('loopback');
    expect(server.requests).toHaveLength(0);
  });

  it('reaches 127.0.0.1 when it is allow-listed', async () => {
    const response = await client({ policy: createNetworkPolicy({ allow: ['127.0.0.1'] }) }).fetch(
      `${server.origin}/public`,
    );
    expect(response.status).toBe(200);
    expect(Buffer.from(response.body).toString()).toBe('hello');
  });

  it('refuses a DNS name that resolves to loopback (real resolver: localhost)', async () => {
    const error = await rejection(client().fetch(`http://localhost:${server.port}/secret`));
    expect(error).toBeInstanceOf(BlockedUrlError);
    expect((error as BlockedUrlError).message).toMatch(/localhost resolves to it/);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses names resolving to private, link-local, IPv6 loopback and IPv4-mapped addresses', async () => {
    const lookup = tableLookup({
      'metadata.attacker.example': ['169.254.169.254'],
      'v6.attacker.example': ['::1'],
      'mapped.attacker.example': ['::ffff:127.0.0.1'],
      'mixed.attacker.example': ['93.184.216.34', '10.0.0.7'],
      'ula.attacker.example': ['fd00::1234'],
    });
    const guarded = client({ lookup });
    for (const [host, range] of [
      ['metadata.attacker.example', 'link-local'],
      ['v6.attacker.example', 'loopback'],
      ['mapped.attacker.example', 'loopback'],
      ['mixed.attacker.example', 'private'],
      ['ula.attacker.example', 'private'],
    ] as const) {
      const error = await rejection(guarded.fetch(`http://${host}:${server.port}/secret`));
      expect(error).toBeInstanceOf(BlockedUrlError);
      expect((error as BlockedUrlError).range).toBe(range);
    }
    expect(lookup.calls).toEqual(
      expect.arrayContaining(['metadata.attacker.example', 'mixed.attacker.example']),
    );
    expect(server.requests).toHaveLength(0);
  });

  it('checks every redirect hop: a public-looking allowed host redirecting to loopback is refused', async () => {
    // Only the host name is trusted; the redirect goes to 127.0.0.1 by address, which is not.
    const lookup = tableLookup({ 'allowed.test': ['127.0.0.1'] });
    const guarded = client({ policy: createNetworkPolicy({ allow: ['allowed.test'] }), lookup });
    const error = await rejection(guarded.fetch(`http://allowed.test:${server.port}/to-secret`));
    expect(error).toBeInstanceOf(BlockedUrlError);
    expect(server.requests.map((item) => item.url)).toEqual(['/to-secret']);
  });

  it('refuses redirects to the cloud metadata address, to localhost by name, and to file:', async () => {
    const lookup = tableLookup({ 'allowed.test': ['127.0.0.1'], localhost: ['127.0.0.1', '::1'] });
    const guarded = client({ policy: createNetworkPolicy({ allow: ['allowed.test'] }), lookup });
    const metadata = await rejection(
      guarded.fetch(`http://allowed.test:${server.port}/to-metadata`),
    );
    expect((metadata as BlockedUrlError).range).toBe('link-local');
    const byName = await rejection(
      guarded.fetch(`http://allowed.test:${server.port}/to-localhost-name`),
    );
    expect(byName).toBeInstanceOf(BlockedUrlError);
    const file = await rejection(guarded.fetch(`http://allowed.test:${server.port}/to-file`));
    expect((file as BlockedUrlError).reason).toBe('scheme');
    expect(server.requests.some((item) => item.url === '/secret')).toBe(false);
  });

  it('validates the address each socket connects to: no DNS-rebinding window', async () => {
    // A second server on 127.0.0.2 plays the internal service the attacker wants to reach.
    const internal = await startFixtureServer('127.0.0.2', server.port).catch(() => undefined);
    if (internal === undefined)
      throw new Error('could not bind 127.0.0.2 (Linux routes all of 127/8 to lo)');
    internal.route('GET /public', (_request, response) => response.end('internal'));
    try {
      // First resolution: the allowed address; every later one: the internal address.
      let answers = 0;
      const lookup = tableLookup({
        'rebind.test': () => (answers++ === 0 ? ['127.0.0.1'] : ['127.0.0.2']),
      });
      const policy = createNetworkPolicy({ allow: ['127.0.0.1'] });
      const first = client({ policy, lookup });
      expect((await first.fetch(`http://rebind.test:${server.port}/public`)).status).toBe(200);
      // A new connection resolves again and gets the rebound address: refused at connect time.
      const second = client({ policy, lookup });
      const error = await rejection(second.fetch(`http://rebind.test:${server.port}/public`));
      expect(error).toBeInstanceOf(BlockedUrlError);
      expect((error as BlockedUrlError).address).toBe('127.0.0.2');
      expect(internal.requests).toHaveLength(0);
      expect(lookup.calls).toEqual(['rebind.test', 'rebind.test']);
    } finally {
      await internal.close();
    }
  });

  it('guards plain undici requests made through the dispatcher', async () => {
    const dispatcher = createGuardedDispatcher({ policy: createNetworkPolicy() });
    try {
      const error = await rejection(
        request(`http://127.0.0.1:${server.port}/secret`, { dispatcher }),
      );
      expect(error).toBeInstanceOf(BlockedUrlError);
      const metadata = await rejection(
        request('http://169.254.169.254/latest/meta-data/', { dispatcher }),
      );
      expect((metadata as BlockedUrlError).range).toBe('link-local');
    } finally {
      await dispatcher.close();
    }
    expect(server.requests).toHaveLength(0);
  });
});
