import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { agentPath, bearer, ed25519Agent, secp256k1Agent } from '@agent-registry/testkit';
import { register, startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';

describe('POST /api/auth/token', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry();
  });
  after(() => registry.close());

  const requestToken = (payload: Record<string, unknown>) =>
    registry.app.inject({ method: 'POST', url: '/api/auth/token', payload });

  for (const makeAgent of [ed25519Agent, () => secp256k1Agent({ chainId: 'eip155:42161' })]) {
    test(`an agent whose token expired signs in again (${makeAgent().keyType})`, async () => {
      const { did, agent, token: first } = await register(registry, makeAgent());
      registry.clock.advance(25 * 60 * 60 * 1000);
      const expired = await registry.app.inject({
        method: 'PUT',
        url: agentPath(did),
        headers: bearer(first),
        payload: { name: 'x' },
      });
      assert.equal(expired.statusCode, 401);
      assert.equal(expired.json().code, 'TOKEN_EXPIRED');

      const timestamp = registry.clock.now();
      const response = await requestToken({
        did,
        timestamp,
        signature: await agent.sign(agent.authenticationMessage(did, timestamp)),
      });
      assert.equal(response.statusCode, 200, response.body);
      const { token, expires_at } = response.json<{ token: string; expires_at: number }>();
      const claims = decodeJwt(token);
      assert.equal(claims.sub, did);
      assert.equal(expires_at, (claims.exp as number) * 1000);
      assert.equal(claims.exp, Math.floor(timestamp / 1000) + 24 * 60 * 60);
      const renamed = await registry.app.inject({
        method: 'PUT',
        url: agentPath(did),
        headers: bearer(token),
        payload: { name: 'Again' },
      });
      assert.equal(renamed.statusCode, 200, renamed.body);
    });
  }

  test('a registration token is a standard EdDSA JWT that jose verifies against the JWKS', async () => {
    const { did, token } = await register(registry);
    const jwks = (await registry.app.inject({ url: '/.well-known/jwks.json' })).json<JSONWebKeySet>();
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks), {
      algorithms: ['EdDSA'],
      issuer: registry.config.identity.publicUrl,
      audience: registry.config.identity.publicUrl,
      currentDate: new Date(registry.clock.now()),
      requiredClaims: ['sub', 'iat', 'exp', 'jti', 'iss', 'aud'],
    });
    assert.equal(payload.sub, did);
    assert.equal(payload.iat, Math.floor(registry.clock.now() / 1000));
    assert.equal(payload.exp, (payload.iat as number) + 24 * 60 * 60);
    assert.match(payload.jti as string, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    assert.deepEqual(protectedHeader, { alg: 'EdDSA', typ: 'JWT', kid: jwks.keys[0]?.kid });
    assert.deepEqual(decodeProtectedHeader(token), protectedHeader);
    // A changed signature character (one carrying signature bits, not padding) is refused.
    const flipped = token.at(-2) === 'A' ? 'B' : 'A';
    const forged = `${token.slice(0, -2)}${flipped}${token.slice(-1)}`;
    assert.notEqual(forged, token);
    const refused = await registry.app.inject({
      method: 'PUT',
      url: agentPath(did),
      headers: bearer(forged),
      payload: { name: 'x' },
    });
    assert.equal(refused.statusCode, 401);
  });

  test('401 for a signature by another key or over another message', async () => {
    const { did, agent } = await register(registry);
    const impostor = ed25519Agent();
    const timestamp = registry.clock.now();
    const forged = await requestToken({
      did,
      timestamp,
      signature: await impostor.sign(impostor.authenticationMessage(did, timestamp)),
    });
    assert.equal(forged.statusCode, 401);
    assert.equal(forged.json().code, 'INVALID_SIGNATURE');
    const wrongMessage = await requestToken({
      did,
      timestamp,
      signature: await agent.sign(agent.authenticationMessage(did, timestamp + 1)),
    });
    assert.equal(wrongMessage.statusCode, 401);
  });

  test('400 for a stale timestamp or malformed DID; 404 for unknown or deactivated agents', async () => {
    const { did, agent, token } = await register(registry);
    const stale = registry.clock.now() - 6 * 60 * 1000;
    const old = await requestToken({
      did,
      timestamp: stale,
      signature: await agent.sign(agent.authenticationMessage(did, stale)),
    });
    assert.equal(old.statusCode, 400);
    assert.equal(old.json().code, 'TIMESTAMP_OUT_OF_RANGE');
    const now = registry.clock.now();
    const malformed = await requestToken({ did: 'did:nope', timestamp: now, signature: 'ab' });
    assert.equal(malformed.statusCode, 400);
    assert.equal(malformed.json().code, 'INVALID_DID');
    const unknownDid = `did:web:localhost%3A8080:agent:${'9a'.repeat(16)}`;
    const unknown = await requestToken({
      did: unknownDid,
      timestamp: now,
      signature: await agent.sign(agent.authenticationMessage(unknownDid, now)),
    });
    assert.equal(unknown.statusCode, 404);
    assert.equal(
      (await registry.app.inject({ method: 'DELETE', url: agentPath(did), headers: bearer(token) }))
        .statusCode,
      200,
    );
    const deactivated = await requestToken({
      did,
      timestamp: now,
      signature: await agent.sign(agent.authenticationMessage(did, now)),
    });
    assert.equal(deactivated.statusCode, 404);
    const missing = await requestToken({ did });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().code, 'VALIDATION_FAILED');
  });
});
