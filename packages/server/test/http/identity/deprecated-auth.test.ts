import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SignJWT, decodeJwt } from 'jose';
import { AUTH_AUDIENCE_INTRODUCED_AT } from '../../../src/kernel/auth-deprecation.js';
import { ConfigError, loadConfig } from '../../../src/kernel/config.js';
import {
  TEST_PUBLIC_URL,
  agentPath,
  bearer,
  ed25519Agent,
  secp256k1Agent,
  type TestAgent,
} from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Clients from before tokens carried `aud` and the login message `audience` keep working until
 * LEGACY_AUTH_UNTIL, told so by Deprecation/Sunset/Warning headers and counted in /metrics; after it
 * they are refused with an error that says why.
 */
describe('authentication without audience: a deprecation window', () => {
  let registry: TestRegistry;
  let until: string;
  const agents: [string, () => TestAgent][] = [
    ['ed25519', () => ed25519Agent()],
    ['secp256k1', () => secp256k1Agent({ chainId: 'eip155:1' })],
  ];
  const registered = new Map<string, Registered>();
  /** Issued with the registry's key before the window closes, valid for 30 days: outlives the window. */
  let oldToken: string;

  before(async () => {
    until = new Date(Date.now() + 10 * DAY_MS).toISOString();
    registry = await startRegistry({ LEGACY_AUTH_UNTIL: until });
    for (const [keyType, makeAgent] of agents) registered.set(keyType, await register(registry, makeAgent()));
    oldToken = await tokenWithoutAudience(registered.get('ed25519')!.did, 30 * DAY_MS);
  });

  after(() => registry?.close());

  /** A token as the registry issued them before `aud`: jose's SignJWT, the registry's key and kid, no aud. */
  const tokenWithoutAudience = async (did: string, lifetimeMs: number): Promise<string> => {
    const { privateKey, kid } = registry.ctx.tokens.signingKey;
    const iat = Math.floor(registry.clock.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid })
      .setSubject(did)
      .setIssuer(TEST_PUBLIC_URL)
      .setIssuedAt(iat)
      .setExpirationTime(iat + lifetimeMs / 1000)
      .setJti(crypto.randomUUID())
      .sign(privateKey);
  };

  /** The login message before `audience`, by each key type's rule, signed by the agent. */
  const oldLogin = async ({ did, agent }: Registered, timestamp: number) => ({
    did,
    timestamp,
    signature: await agent.sign(
      agent.keyType === 'ed25519'
        ? JSON.stringify({ did, purpose: 'authenticate', timestamp })
        : JSON.stringify({ purpose: 'authenticate', did, timestamp }),
    ),
  });

  const rename = (did: string, token: string) =>
    registry.app.inject({
      method: 'PUT',
      url: agentPath(did),
      headers: bearer(token),
      payload: { name: 'Renamed' },
    });

  const login = (payload: Record<string, unknown>) =>
    registry.app.inject({ method: 'POST', url: '/api/auth/token', payload });

  const metric = async (form: string, outcome: string): Promise<number> => {
    const text = (await registry.app.inject({ url: '/metrics' })).body;
    const line = text
      .split('\n')
      .find((row) =>
        row.startsWith(`registry_deprecated_authentication_total{form="${form}",outcome="${outcome}"}`),
      );
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  };

  const assertDeprecationHeaders = (headers: Record<string, unknown>, what: RegExp): void => {
    assert.equal(headers.deprecation, `@${AUTH_AUDIENCE_INTRODUCED_AT / 1000}`);
    assert.equal(headers.sunset, new Date(until).toUTCString());
    assert.equal(headers.link, '</docs/signing>; rel="deprecation"; type="text/html"');
    assert.match(String(headers.warning), /^299 - ".*"$/);
    assert.match(String(headers.warning), what);
    assert.match(String(headers.warning), new RegExp(`accepted until ${until.replace('.000Z', 'Z')}`));
  };

  test('inside the window: a token without aud and the old login message work, with deprecation headers, counted', async () => {
    const { did, token } = registered.get('ed25519')!;
    const accepted = await rename(did, oldToken);
    assert.equal(accepted.statusCode, 200, accepted.body);
    assertDeprecationHeaders(accepted.headers, /This token has no \\"aud\\" claim.*POST \/api\/auth\/token/);
    assert.equal(await metric('token_without_aud', 'accepted'), 1);

    // The MCP face answers through its own transport and keeps the headers.
    const mcp = await registry.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...bearer(oldToken), accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    assert.equal(mcp.statusCode, 200, mcp.body);
    assertDeprecationHeaders(mcp.headers, /This token has no \\"aud\\" claim/);
    assert.equal(await metric('token_without_aud', 'accepted'), 2);

    // Today's token gets no deprecation headers.
    const current = await rename(did, token);
    assert.equal(current.statusCode, 200, current.body);
    assert.equal(current.headers.deprecation, undefined);
    assert.equal(current.headers.warning, undefined);

    // Accepted until it expires, not beyond.
    const shortLived = await tokenWithoutAudience(did, 60 * 60 * 1000);
    registry.clock.advance(2 * 60 * 60 * 1000);
    const expired = await rename(did, shortLived);
    assert.equal(expired.statusCode, 401);
    assert.equal(expired.json().code, 'TOKEN_EXPIRED');

    for (const [keyType] of agents) {
      const agent = registered.get(keyType)!;
      const body = await oldLogin(agent, registry.clock.now());
      const renewed = await login(body);
      assert.equal(renewed.statusCode, 200, `${keyType}: ${renewed.body}`);
      assertDeprecationHeaders(renewed.headers, /The signed login message has no \\"audience\\"/);
      // The new token is of today's form: it names this registry.
      const { token: fresh } = renewed.json<{ token: string }>();
      assert.equal(decodeJwt(fresh).aud, TEST_PUBLIC_URL);
      assert.equal(renewed.json().deprecated, undefined);
      const used = await rename(agent.did, fresh);
      assert.equal(used.statusCode, 200, used.body);
      assert.equal(used.headers.deprecation, undefined);
      // Single use, as today's message.
      const replay = await login(body);
      assert.equal(replay.statusCode, 401);
      assert.equal(replay.json().code, 'SIGNATURE_REUSED');
    }
    assert.equal(await metric('login_without_audience', 'accepted'), 2);
  });

  test('after the window: both are refused with an error that says so', async () => {
    registry.clock.advance(11 * DAY_MS);
    const { did } = registered.get('ed25519')!;
    // Still unexpired, and already verified once (the token cache does not keep it alive).
    const refused = await rename(did, oldToken);
    assert.equal(refused.statusCode, 401, refused.body);
    assert.equal(refused.json().code, 'TOKEN_INVALID');
    assert.equal(
      refused.json().details,
      `The token has no "aud" claim: tokens issued before this registry named itself in "aud" were accepted until ${until.replace('.000Z', 'Z')}; get a new token at POST /api/auth/token`,
    );
    assert.equal(refused.headers.deprecation, undefined);
    const neverSeen = await rename(did, await tokenWithoutAudience(did, DAY_MS));
    assert.equal(neverSeen.statusCode, 401);
    assert.match(neverSeen.json().details, /^The token has no "aud" claim/);
    assert.equal(await metric('token_without_aud', 'refused'), 2);

    for (const [keyType] of agents) {
      const agent = registered.get(keyType)!;
      const response = await login(await oldLogin(agent, registry.clock.now()));
      assert.equal(response.statusCode, 401, `${keyType}: ${response.body}`);
      assert.equal(response.json().code, 'INVALID_SIGNATURE');
      assert.match(
        response.json().details,
        /^the signature covers the login message without "audience", accepted until .*; sign \{purpose:"authenticate", did, audience:"http:\/\/localhost:8080", timestamp\} instead/,
      );
      // Today's message still works.
      const timestamp = registry.clock.now() + 1;
      const current = await login({
        did: agent.did,
        timestamp,
        signature: await agent.agent.sign(agent.agent.authenticationMessage(agent.did, timestamp)),
      });
      assert.equal(current.statusCode, 200, current.body);
    }
    assert.equal(await metric('login_without_audience', 'refused'), 2);
  });

  test('LEGACY_AUTH_UNTIL takes a UTC date or date-time and refuses anything else', () => {
    assert.equal(loadConfig({}).identity.legacyAuthUntil, Date.UTC(2027, 2, 1));
    assert.equal(
      loadConfig({ LEGACY_AUTH_UNTIL: '2026-12-01' }).identity.legacyAuthUntil,
      Date.UTC(2026, 11, 1),
    );
    assert.equal(
      loadConfig({ LEGACY_AUTH_UNTIL: '2026-12-01T12:30:00Z' }).identity.legacyAuthUntil,
      Date.UTC(2026, 11, 1, 12, 30),
    );
    for (const wrong of ['2027-02-30', 'March 2027', '2027-03-01T00:00:00+01:00', '1764201600'])
      assert.throws(
        () => loadConfig({ LEGACY_AUTH_UNTIL: wrong }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match(error.message, /LEGACY_AUTH_UNTIL must be a UTC date like 2027-03-01/);
          return true;
        },
      );
  });
});
