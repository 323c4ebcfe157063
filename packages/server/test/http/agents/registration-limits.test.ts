import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, test } from 'node:test';
import { proofOfWorkInput } from '../../../src/modules/agents/proof-of-work.js';
import { ipv6SitePrefix, networkPrefix } from '../../../src/kernel/client-networks.js';
import {
  agentPath,
  bearer,
  createTestDatabase,
  defaultProfile,
  ed25519Agent,
  registrationBody,
  type Profile,
} from '@agent-registry/testkit';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';

/** A registration as a client at `address` sends it (the socket's address, or X-Forwarded-For). */
async function registerFrom(
  registry: TestRegistry,
  address: string,
  options: { forwardedFor?: string; profile?: Profile } = {},
) {
  return registry.app.inject({
    method: 'POST',
    url: '/api/agents/register',
    remoteAddress: address,
    headers: options.forwardedFor === undefined ? {} : { 'x-forwarded-for': options.forwardedFor },
    payload: await registrationBody(
      ed25519Agent(),
      options.profile ?? defaultProfile(),
      registry.clock.now(),
    ),
  });
}

const limits = (
  perAddress: number,
  perPrefix: number,
  windowSeconds = 3600,
  perIpv6Site = 1000,
): Record<string, string> => ({
  REGISTRATION_RATE_LIMIT: String(perAddress),
  REGISTRATION_PREFIX_RATE_LIMIT: String(perPrefix),
  REGISTRATION_RATE_WINDOW_SECONDS: String(windowSeconds),
  REGISTRATION_IPV6_48_RATE_LIMIT: String(perIpv6Site),
});

/** Moves the registry's clock to `offsetMs` from the start of its next window of `windowMs`. */
function moveToWindow(registry: TestRegistry, windowMs: number, offsetMs: number): void {
  const now = registry.clock.now();
  registry.clock.advance(windowMs - (now % windowMs) + offsetMs);
}

describe('registration is rate-limited per client address and per network', () => {
  test('past the limit of an address: 429 with Retry-After; other addresses and the next window are served', async () => {
    const registry = await startRegistry(limits(3, 100));
    try {
      for (let i = 0; i < 3; i++) assert.equal((await registerFrom(registry, '203.0.113.7')).statusCode, 201);
      const refused = await registerFrom(registry, '203.0.113.7');
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.json().code, 'REGISTRATION_RATE_LIMITED');
      assert.match(refused.json().details, /At most 3 registrations per 3600 s from one address/);
      const retryAfter = Number(refused.headers['retry-after']);
      // Sliding: the previous window's count weighs on the next window too, for at most two windows.
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 7200, String(retryAfter));
      // A refusal does not count: still refused, not further behind.
      assert.equal((await registerFrom(registry, '203.0.113.7')).statusCode, 429);
      assert.equal((await registerFrom(registry, '192.0.2.1')).statusCode, 201);
      registry.clock.advance(retryAfter * 1000);
      assert.equal((await registerFrom(registry, '203.0.113.7')).statusCode, 201);
    } finally {
      await registry.close();
    }
  });

  test('addresses of one /24 (IPv4) or one /64 (IPv6) share the network limit', async () => {
    const registry = await startRegistry(limits(100, 2));
    try {
      assert.equal((await registerFrom(registry, '198.51.100.1')).statusCode, 201);
      assert.equal((await registerFrom(registry, '::ffff:198.51.100.2')).statusCode, 201);
      const refused = await registerFrom(registry, '198.51.100.250');
      assert.equal(refused.statusCode, 429);
      assert.match(refused.json().details, /one network \(198\.51\.100\.0\/24\)/);
      assert.equal((await registerFrom(registry, '198.51.101.1')).statusCode, 201);

      assert.equal((await registerFrom(registry, '2001:db8:1:2::1')).statusCode, 201);
      assert.equal((await registerFrom(registry, '2001:db8:1:2:ffff::9')).statusCode, 201);
      assert.equal((await registerFrom(registry, '2001:db8:1:2:aaaa:bbbb:cccc:dddd')).statusCode, 429);
      assert.equal((await registerFrom(registry, '2001:db8:1:3::1')).statusCode, 201);
    } finally {
      await registry.close();
    }
  });

  test('the window slides: a burst across a window boundary gets the limit once, not twice', async () => {
    const registry = await startRegistry(limits(5, 100));
    try {
      moveToWindow(registry, 3600_000, -2000);
      for (let i = 0; i < 5; i++)
        assert.equal((await registerFrom(registry, '203.0.113.20')).statusCode, 201);
      registry.clock.advance(4000); // two seconds into the next fixed window
      const after = [];
      for (let i = 0; i < 5; i++) after.push((await registerFrom(registry, '203.0.113.20')).statusCode);
      assert.deepEqual(after, [429, 429, 429, 429, 429], 'five in four seconds is all the limit allows');
      const refused = await registerFrom(registry, '203.0.113.20');
      assert.equal(refused.json().code, 'REGISTRATION_RATE_LIMITED');
      const retryAfter = Number(refused.headers['retry-after']);
      // The previous window's five weigh less as it slides away: one more fits a fifth of the way in.
      assert.ok(retryAfter > 700 && retryAfter <= 720, String(retryAfter));
      registry.clock.advance(retryAfter * 1000);
      assert.equal((await registerFrom(registry, '203.0.113.20')).statusCode, 201);
      assert.equal((await registerFrom(registry, '203.0.113.20')).statusCode, 429);
      // Two windows later none of it counts.
      registry.clock.advance(2 * 3600_000);
      for (let i = 0; i < 5; i++)
        assert.equal((await registerFrom(registry, '203.0.113.20')).statusCode, 201);
    } finally {
      await registry.close();
    }
  });

  test('the /64s of one IPv6 /48 share REGISTRATION_IPV6_48_RATE_LIMIT', async () => {
    const registry = await startRegistry(limits(100, 100, 3600, 3));
    try {
      for (const subnet of [0, 1, 0xbeef])
        assert.equal((await registerFrom(registry, `2001:db8:7:${subnet.toString(16)}::1`)).statusCode, 201);
      const refused = await registerFrom(registry, '2001:db8:7:ffff:1:2:3:4');
      assert.equal(refused.statusCode, 429);
      assert.match(
        refused.json().details,
        /At most 3 registrations per 3600 s from one network \(2001:db8:7::\/48\)/,
      );
      assert.equal((await registerFrom(registry, '2001:db8:8:1::1')).statusCode, 201, 'another /48');
      assert.equal((await registerFrom(registry, '203.0.113.30')).statusCode, 201, 'IPv4 has no /48 tier');
    } finally {
      await registry.close();
    }
  });

  test('the count is kept in the database, so it holds across nodes', async () => {
    const database = await createTestDatabase();
    const a = await startRegistry(limits(3, 100), { database });
    const b = await startRegistry(limits(3, 100), { database });
    try {
      assert.equal((await registerFrom(a, '203.0.113.9')).statusCode, 201);
      assert.equal((await registerFrom(b, '203.0.113.9')).statusCode, 201);
      assert.equal((await registerFrom(a, '203.0.113.9')).statusCode, 201);
      assert.equal((await registerFrom(b, '203.0.113.9')).statusCode, 429);
      assert.equal((await registerFrom(a, '203.0.113.9')).statusCode, 429);
    } finally {
      await a.close();
      await b.close();
      await database.drop();
    }
  });

  test('behind TRUST_PROXY the address is the forwarded client, not the proxy', async () => {
    const registry = await startRegistry({ ...limits(1, 100), TRUST_PROXY: 'true' });
    try {
      const proxy = '10.0.0.2';
      assert.equal((await registerFrom(registry, proxy, { forwardedFor: '203.0.113.1' })).statusCode, 201);
      assert.equal((await registerFrom(registry, proxy, { forwardedFor: '192.0.2.55' })).statusCode, 201);
      assert.equal((await registerFrom(registry, proxy, { forwardedFor: '203.0.113.1' })).statusCode, 429);
    } finally {
      await registry.close();
    }
  });

  test('behind TRUST_PROXY, forwarded values that are no IP address all count as one client', async () => {
    const registry = await startRegistry({ ...limits(2, 100), TRUST_PROXY: 'true' });
    try {
      const proxy = '10.0.0.2';
      const statuses = [];
      for (const forged of ['forged-1', 'forged-2', 'forged-3', 'not an address'])
        statuses.push((await registerFrom(registry, proxy, { forwardedFor: forged })).statusCode);
      assert.deepEqual(statuses, [201, 201, 429, 429]);
      // A real forwarded address is counted apart from them.
      assert.equal((await registerFrom(registry, proxy, { forwardedFor: '203.0.113.9' })).statusCode, 201);
    } finally {
      await registry.close();
    }
  });

  test('without TRUST_PROXY a client cannot pick its address with X-Forwarded-For', async () => {
    const registry = await startRegistry(limits(1, 100));
    try {
      assert.equal(
        (await registerFrom(registry, '203.0.113.3', { forwardedFor: '1.1.1.1' })).statusCode,
        201,
      );
      assert.equal(
        (await registerFrom(registry, '203.0.113.3', { forwardedFor: '8.8.8.8' })).statusCode,
        429,
      );
    } finally {
      await registry.close();
    }
  });

  test('network prefixes', () => {
    assert.equal(networkPrefix('203.0.113.77'), '203.0.113.0/24');
    assert.equal(networkPrefix('::ffff:203.0.113.77'), '203.0.113.0/24');
    assert.equal(networkPrefix('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(networkPrefix('2001:DB8:a:b:c:d:e:f'), '2001:db8:a:b::/64');
    assert.equal(networkPrefix('::1'), '0:0:0:0::/64');
    assert.equal(networkPrefix('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(ipv6SitePrefix('2001:DB8:a:b:c:d:e:f'), '2001:db8:a::/48');
    assert.equal(ipv6SitePrefix('2001:db8::1'), '2001:db8:0::/48');
    assert.equal(ipv6SitePrefix('203.0.113.77'), undefined);
    assert.equal(ipv6SitePrefix('::ffff:203.0.113.77'), undefined);
    assert.equal(networkPrefix('forged-1'), networkPrefix('forged-2'));
    assert.equal(ipv6SitePrefix('forged-1'), undefined);
  });
});

/** Many long capabilities: about `count` KiB of stored profile. */
const bigProfile = (count: number): Profile => ({
  name: 'Large',
  capabilities: Array.from({ length: count }, (_, i) => ({
    type: `capability-${i}`,
    description: 'd'.repeat(1000),
  })),
});

describe('a profile stored bytes are bounded (PROFILE_MAX_KB), at registration and on update', () => {
  test('a registration over the bound is 400 PROFILE_TOO_LARGE; one under it is stored', async () => {
    const registry = await startRegistry({ PROFILE_MAX_KB: '16' });
    try {
      const over = await registerFrom(registry, '127.0.0.1', { profile: bigProfile(20) });
      assert.equal(over.statusCode, 400);
      assert.equal(over.json().code, 'PROFILE_TOO_LARGE');
      assert.match(over.json().details, /this registry stores at most 16384/);
      assert.equal((await registerFrom(registry, '127.0.0.1', { profile: bigProfile(10) })).statusCode, 201);
    } finally {
      await registry.close();
    }
  });

  test('an update that grows a profile past the bound is refused, whichever field grows it', async () => {
    const registry = await startRegistry({ PROFILE_MAX_KB: '16' });
    try {
      const created = await registerFrom(registry, '127.0.0.1', { profile: bigProfile(10) });
      const { did, token } = created.json<{ did: string; token: string }>();
      const update = (payload: Record<string, unknown>) =>
        registry.app.inject({ method: 'PUT', url: agentPath(did), headers: bearer(token), payload });
      // Ten capabilities stay; a description of 1000 characters and 20 tags fit beside them...
      assert.equal((await update({ description: 'x'.repeat(1000) })).statusCode, 200);
      // ...but five more capabilities do not.
      const grown = await update({ capabilities: bigProfile(16).capabilities });
      assert.equal(grown.statusCode, 400);
      assert.equal(grown.json().code, 'PROFILE_TOO_LARGE');
      const profile = await registry.app.inject({ url: agentPath(did) });
      assert.equal(profile.json().capabilities.length, 10);
    } finally {
      await registry.close();
    }
  });
});

const zeroBits = (publicKey: string, timestamp: number, nonce: string): number => {
  const head = crypto
    .createHash('sha256')
    .update(proofOfWorkInput(publicKey, timestamp, nonce))
    .digest()
    .readUInt32BE(0);
  return head === 0 ? 32 : Math.clz32(head);
};

/** The client's side of the proof of work: the first counter whose nonce meets `wanted`. */
function findNonce(wanted: (nonce: string) => boolean): string {
  for (let counter = 0; ; counter++) if (wanted(counter.toString(36))) return counter.toString(36);
}

describe('registration cost: an operator may ask for a proof of work (REGISTRATION_POW_BITS)', () => {
  test('off by default: registrations without proof_of_work are served', async () => {
    const registry = await startRegistry();
    try {
      assert.equal(registry.config.registration.powBits, 0);
      assert.equal((await registerFrom(registry, '127.0.0.1')).statusCode, 201);
    } finally {
      await registry.close();
    }
  });

  test('when on: missing, wrong and right proofs', async () => {
    const registry = await startRegistry({ REGISTRATION_POW_BITS: '10', ...limits(7, 70, 600) });
    try {
      // Clients read the rules in GET /api/stats.
      const { identity } = (await registry.app.inject({ url: '/api/stats' })).json().governance;
      assert.equal(identity.registration_proof_of_work_bits, 10);
      assert.deepEqual(identity.registration_rate_limit, {
        per_address: 7,
        per_network: 70,
        per_ipv6_48: 1000,
        window_seconds: 600,
      });
      assert.equal(identity.profile_max_bytes, 128 * 1024);
      const agent = ed25519Agent();
      const timestamp = registry.clock.now();
      const body = await registrationBody(agent, defaultProfile(), timestamp);
      const send = (extra: Record<string, unknown>) =>
        registry.app.inject({ method: 'POST', url: '/api/agents/register', payload: { ...body, ...extra } });

      const missing = await send({});
      assert.equal(missing.statusCode, 400);
      assert.equal(missing.json().code, 'PROOF_OF_WORK_REQUIRED');
      assert.match(missing.json().details, /start with 10 zero bits/);

      const key = agent.publicKey;
      const wrong = await send({ proof_of_work: findNonce((nonce) => zeroBits(key, timestamp, nonce) < 10) });
      assert.equal(wrong.statusCode, 400);
      assert.equal(wrong.json().code, 'INVALID_PROOF_OF_WORK');

      // A proof made for another timestamp (or key) does not carry over.
      const stale = await send({
        proof_of_work: findNonce(
          (nonce) => zeroBits(key, timestamp - 1, nonce) >= 10 && zeroBits(key, timestamp, nonce) < 10,
        ),
      });
      assert.equal(stale.statusCode, 400);
      assert.equal(stale.json().code, 'INVALID_PROOF_OF_WORK');

      const right = await send({
        proof_of_work: findNonce((nonce) => zeroBits(key, timestamp, nonce) >= 10),
      });
      assert.equal(right.statusCode, 201, right.body);
    } finally {
      await registry.close();
    }
  });
});
