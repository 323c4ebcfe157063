import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { recoverEip191Signer } from '@agent-registry/protocol';
import { Signature } from 'ethers';
import { SignJWT, decodeJwt } from 'jose';
import {
  TEST_PUBLIC_URL,
  agentPath,
  bearer,
  defaultProfile,
  ed25519Agent,
  registrationBody,
  secp256k1Agent,
  type TestAgent,
} from '@agent-registry/testkit';
import { register, startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';

const SECP256K1_ORDER = BigInt('0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');

/** The same ECDSA signature re-encoded with the high S value and flipped v: valid, different bytes. */
function malleate(signatureHex: string): string {
  const signature = Signature.from(signatureHex);
  const highS = SECP256K1_ORDER - BigInt(signature.s);
  const v = signature.v === 27 ? 28 : 27;
  return `0x${signature.r.slice(2)}${highS.toString(16).padStart(64, '0')}${v.toString(16)}`;
}

const agents: [string, () => TestAgent][] = [
  ['ed25519', () => ed25519Agent()],
  ['secp256k1', () => secp256k1Agent({ chainId: 'eip155:8453' })],
];

describe('authentication messages are bound to this registry and used once', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry();
  });
  after(() => registry.close());

  const requestToken = (target: TestRegistry, payload: Record<string, unknown>) =>
    target.app.inject({ method: 'POST', url: '/api/auth/token', payload });

  for (const [keyType, makeAgent] of agents) {
    test(`a signed authentication message gives one token, never two (${keyType})`, async () => {
      const { did, agent } = await register(registry, makeAgent());
      const timestamp = registry.clock.now();
      const body = {
        did,
        timestamp,
        signature: await agent.sign(agent.authenticationMessage(did, timestamp)),
      };
      const first = await requestToken(registry, body);
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(decodeJwt(first.json<{ token: string }>().token).aud, TEST_PUBLIC_URL);
      const replay = await requestToken(registry, body);
      assert.equal(replay.statusCode, 401, replay.body);
      assert.equal(replay.json().code, 'SIGNATURE_REUSED');
      // A fresh timestamp is a new message: the agent itself logs in again at once.
      const next = timestamp + 1;
      const again = await requestToken(registry, {
        did,
        timestamp: next,
        signature: await agent.sign(agent.authenticationMessage(did, next)),
      });
      assert.equal(again.statusCode, 200, again.body);
    });

    test(`a signature made for another registry is refused (${keyType})`, async () => {
      const { did, agent } = await register(registry, makeAgent());
      const timestamp = registry.clock.now();
      const elsewhere = 'https://other-registry.example';
      const signature = await agent.sign(agent.authenticationMessage(did, timestamp, elsewhere));
      const bare = await requestToken(registry, { did, timestamp, signature });
      assert.equal(bare.statusCode, 401);
      assert.equal(bare.json().code, 'INVALID_SIGNATURE');
      assert.match(
        bare.json().details,
        /docs\/signing\.md, section "Authentication \(POST \/api\/auth\/token\)"/,
      );
      assert.match(bare.json().details, /audience:"http:\/\/localhost:8080"/);
      const named = await requestToken(registry, { did, timestamp, signature, audience: elsewhere });
      assert.equal(named.statusCode, 401);
      assert.equal(named.json().code, 'AUDIENCE_MISMATCH');
      // The unbound message of earlier versions (no audience): test/http/identity/deprecated-auth.test.ts.
    });
  }

  test('a re-encoded (high-S) secp256k1 signature over a used message is a replay', async () => {
    const agent = secp256k1Agent();
    const { did } = await register(registry, agent);
    const timestamp = registry.clock.now();
    const signature = await agent.sign(agent.authenticationMessage(did, timestamp));
    const twin = malleate(signature);
    assert.notEqual(twin, signature);
    // The twin is a valid signature by the same key: only the single-use rule stops it.
    const message = agent.authenticationMessage(did, timestamp);
    assert.equal(recoverEip191Signer(message, twin), agent.wallet.signingKey.compressedPublicKey.slice(2));
    assert.equal((await requestToken(registry, { did, timestamp, signature })).statusCode, 200);
    const replay = await requestToken(registry, { did, timestamp, signature: twin });
    assert.equal(replay.statusCode, 401, replay.body);
    assert.equal(replay.json().code, 'SIGNATURE_REUSED');
  });

  test('the future window is 60 seconds, the past one 5 minutes', async () => {
    const { did, agent } = await register(registry);
    const attempt = async (timestamp: number) =>
      requestToken(registry, {
        did,
        timestamp,
        signature: await agent.sign(agent.authenticationMessage(did, timestamp)),
      });
    const now = registry.clock.now();
    assert.equal((await attempt(now + 2 * 60 * 1000)).json().code, 'TIMESTAMP_OUT_OF_RANGE');
    assert.equal((await attempt(now + 50 * 1000)).statusCode, 200);
    assert.equal((await attempt(now - 4 * 60 * 1000)).statusCode, 200);
    assert.equal((await attempt(now - 6 * 60 * 1000)).statusCode, 400);
  });

  test('a used signature stays used on another node of the same registry', async () => {
    const second = await startRegistry({}, { database: registry.database });
    try {
      const { did, agent } = await register(registry);
      const timestamp = registry.clock.now();
      const body = {
        did,
        timestamp,
        signature: await agent.sign(agent.authenticationMessage(did, timestamp)),
      };
      assert.equal((await requestToken(registry, body)).statusCode, 200);
      const replay = await requestToken(second, body);
      assert.equal(replay.statusCode, 401, replay.body);
      assert.equal(replay.json().code, 'SIGNATURE_REUSED');
    } finally {
      await second.app.close();
      await second.ctx.close();
    }
  });

  test('a token for another audience is refused on every request', async () => {
    const signingKey = crypto.generateKeyPairSync('ed25519').privateKey;
    const pem = signingKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const own = await startRegistry({ TOKEN_SIGNING_KEY: pem });
    try {
      const { did } = await register(own);
      const now = Math.floor(own.clock.now() / 1000);
      const forged = await new SignJWT({})
        .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: own.ctx.tokens.jwks.keys[0]!.kid as string })
        .setSubject(did)
        .setIssuer(TEST_PUBLIC_URL)
        .setAudience('https://other-registry.example')
        .setIssuedAt(now)
        .setExpirationTime(now + 3600)
        .setJti(crypto.randomUUID())
        .sign(signingKey);
      const response = await own.app.inject({
        method: 'PUT',
        url: agentPath(did),
        headers: bearer(forged),
        payload: { name: 'Hijacked' },
      });
      assert.equal(response.statusCode, 401);
      assert.equal(response.json().code, 'TOKEN_INVALID');
    } finally {
      await own.close();
    }
  });
});

describe('registration audience', () => {
  let registry: TestRegistry;
  let strict: TestRegistry;
  before(async () => {
    registry = await startRegistry();
    strict = await startRegistry({ REQUIRE_REGISTRATION_AUDIENCE: 'true' });
  });
  after(async () => {
    await registry.close();
    await strict.close();
  });

  const post = (target: TestRegistry, payload: Record<string, unknown>) =>
    target.app.inject({ method: 'POST', url: '/api/agents/register', payload });

  for (const [keyType, makeAgent] of agents) {
    test(`a registration naming this registry is accepted (${keyType})`, async () => {
      const body = await registrationBody(makeAgent(), defaultProfile(), registry.clock.now(), {
        audience: TEST_PUBLIC_URL,
      });
      const response = await post(registry, body);
      assert.equal(response.statusCode, 201, response.body);
    });

    test(`a registration naming another registry cannot be replayed here (${keyType})`, async () => {
      const body = await registrationBody(makeAgent(), defaultProfile(), registry.clock.now(), {
        audience: 'https://other-registry.example',
      });
      const response = await post(registry, body);
      assert.equal(response.statusCode, 400);
      assert.equal(response.json().code, 'AUDIENCE_MISMATCH');
      assert.match(response.json().details, /http:\/\/localhost:8080/);
    });

    test(`the audience is signed: adding, changing or removing it breaks the signature (${keyType})`, async () => {
      const agent = makeAgent();
      const unbound = await registrationBody(agent, defaultProfile(), registry.clock.now());
      const added = await post(registry, { ...unbound, audience: TEST_PUBLIC_URL });
      assert.equal(added.statusCode, 400);
      assert.equal(added.json().code, 'INVALID_SIGNATURE');
      const bound = await registrationBody(agent, defaultProfile(), registry.clock.now(), {
        audience: TEST_PUBLIC_URL,
      });
      const { audience: _dropped, ...stripped } = bound;
      const removed = await post(registry, stripped);
      assert.equal(removed.statusCode, 400);
      assert.equal(removed.json().code, 'INVALID_SIGNATURE');
      assert.match(
        removed.json().details,
        keyType === 'ed25519'
          ? /docs\/signing\.md, section "Registration with an Ed25519 key"/
          : /docs\/signing\.md, section "Registration with a secp256k1 key"/,
      );
    });
  }

  test('REQUIRE_REGISTRATION_AUDIENCE=true refuses registrations that name no registry', async () => {
    const agent = ed25519Agent();
    const unbound = await registrationBody(agent, defaultProfile(), strict.clock.now());
    const refused = await post(strict, unbound);
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.json().code, 'AUDIENCE_REQUIRED');
    assert.match(refused.json().details, /"audience": "http:\/\/localhost:8080"/);
    const bound = await registrationBody(agent, defaultProfile(), strict.clock.now(), {
      audience: TEST_PUBLIC_URL,
    });
    assert.equal((await post(strict, bound)).statusCode, 201);
  });

  test('without the setting, the interface message alone still registers (spec clients keep working)', async () => {
    const response = await post(
      registry,
      await registrationBody(secp256k1Agent(), defaultProfile(), registry.clock.now()),
    );
    assert.equal(response.statusCode, 201, response.body);
  });
});
