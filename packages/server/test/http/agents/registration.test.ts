import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { computeAddress } from 'ethers';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import {
  defaultProfile,
  ed25519Agent,
  registrationBody,
  secp256k1Agent,
  type Profile,
  type TestAgent,
} from '@agent-registry/testkit';
import { register, startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';

describe('POST /api/agents/register', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry();
  });
  after(() => registry.close());

  const post = (payload: unknown) =>
    registry.app.inject({
      method: 'POST',
      url: '/api/agents/register',
      payload: payload as Record<string, unknown>,
    });

  async function expect400(payload: Record<string, unknown>, code: string, detailsPattern?: RegExp) {
    const response = await post(payload);
    assert.equal(response.statusCode, 400, response.body);
    const body = response.json<{ error: string; details: string; code: string }>();
    assert.equal(body.code, code, response.body);
    assert.equal(typeof body.error, 'string');
    assert.ok(body.details.length > 0);
    if (detailsPattern) assert.match(body.details, detailsPattern);
  }

  const validBody = (agent: TestAgent = ed25519Agent(), profile: Profile = defaultProfile()) =>
    registrationBody(agent, profile, registry.clock.now());

  test('ed25519 registration returns 201 with a did:web DID and an EdDSA token', async () => {
    const response = await post(await validBody());
    assert.equal(response.statusCode, 201, response.body);
    const { did, token } = response.json<{ did: string; token: string }>();
    assert.match(did, /^did:web:localhost%3A8080:agent:[0-9a-f]{32}$/);
    const header = decodeProtectedHeader(token);
    assert.equal(header.alg, 'EdDSA');
    const claims = decodeJwt(token);
    assert.equal(claims.sub, did);
    assert.equal(claims.iss, 'http://localhost:8080');
    assert.equal(typeof claims.jti, 'string');
    assert.equal((claims.exp as number) - (claims.iat as number), 24 * 60 * 60);
  });

  test('the token verifies against the published JWKS', async () => {
    const { token, did } = await register(registry);
    const jwks = (await registry.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), {
      issuer: 'http://localhost:8080',
      currentDate: new Date(registry.clock.now()),
    });
    assert.equal(payload.sub, did);
  });

  for (const compressed of [false, true]) {
    test(`secp256k1 registration with a ${compressed ? 'compressed' : 'uncompressed'} key gives did:pkh of its address`, async () => {
      const agent = secp256k1Agent({ chainId: 'eip155:137', compressed });
      const response = await post(await validBody(agent));
      assert.equal(response.statusCode, 201, response.body);
      const { did } = response.json<{ did: string }>();
      assert.equal(did, `did:pkh:eip155:137:${agent.wallet.address}`);
      assert.equal(computeAddress(`0x${agent.publicKey}`), agent.wallet.address);
    });
  }

  test('accepts a minimal profile (only name and capabilities) for both key types', async () => {
    const profile: Profile = { name: 'Minimal', capabilities: [{ type: 'coding' }] };
    for (const agent of [ed25519Agent(), secp256k1Agent()]) {
      const response = await post(await validBody(agent, profile));
      assert.equal(response.statusCode, 201, `${agent.keyType}: ${response.body}`);
    }
  });

  test('accepts the other spelling of absent members in the signed text', async () => {
    const profile: Profile = { name: 'Sparse', capabilities: [{ type: 'coding' }] };
    const ed = ed25519Agent();
    const timestamp = registry.clock.now();
    // Ed25519 client that leaves absent description, tags and website out instead of writing null / [].
    const omitted = JSON.stringify({
      key_type: 'ed25519',
      profile: { avatar: null, capabilities: [{ type: 'coding' }], name: 'Sparse' },
      public_key: ed.publicKey,
      purpose: 'registration',
      timestamp,
    });
    let response = await post({
      public_key: ed.publicKey,
      profile,
      timestamp,
      signature: await ed.sign(omitted),
    });
    assert.equal(response.statusCode, 201, response.body);

    // secp256k1 client that writes explicit nulls and empty arrays.
    const secp = secp256k1Agent();
    const explicit = JSON.stringify({
      purpose: 'registration',
      public_key: secp.publicKey,
      key_type: 'secp256k1',
      chain_id: 'eip155:1',
      profile: {
        name: 'Sparse',
        description: null,
        avatar: null,
        website: null,
        capabilities: [{ type: 'coding', description: null, tags: [] }],
        tags: [],
      },
      timestamp,
    });
    response = await post({
      public_key: secp.publicKey,
      key_type: 'secp256k1',
      chain_id: 'eip155:1',
      profile,
      timestamp,
      signature: await secp.sign(explicit),
    });
    assert.equal(response.statusCode, 201, response.body);
  });

  test('stores the referrer and the full profile', async () => {
    const profile: Profile = {
      ...defaultProfile(),
      avatar: 'https://example.com/a.png',
      website: 'http://example.com',
      capabilities: [
        {
          type: 'translation',
          description: 'd',
          tags: ['x'],
          input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        },
      ],
    };
    const agent = ed25519Agent();
    const body = await registrationBody(agent, profile, registry.clock.now(), { referrer: 'friend-42' });
    const response = await post(body);
    assert.equal(response.statusCode, 201, response.body);
    const { did } = response.json<{ did: string }>();
    const row = await registry.ctx.database.db
      .selectFrom('agents')
      .select(['referrer', 'avatar', 'website', 'capabilities'])
      .where('did', '=', did)
      .executeTakeFirstOrThrow();
    assert.equal(row.referrer, 'friend-42');
    assert.equal(row.avatar, 'https://example.com/a.png');
    assert.deepEqual(JSON.parse(row.capabilities), profile.capabilities);
  });

  describe('400 for every rule of 2.2, 2.5 and 8', () => {
    const withProfile = async (patch: Partial<Profile> & Record<string, unknown>) =>
      validBody(ed25519Agent(), { ...defaultProfile(), ...patch } as Profile);

    test('name missing, empty, or over 100 characters', async () => {
      const { name: _name, ...noName } = defaultProfile();
      await expect400(await validBody(ed25519Agent(), noName as Profile), 'VALIDATION_FAILED', /name/);
      await expect400(await withProfile({ name: '' }), 'VALIDATION_FAILED', /profile\.name/);
      await expect400(await withProfile({ name: 'n'.repeat(101) }), 'VALIDATION_FAILED', /profile\.name/);
      assert.equal((await post(await withProfile({ name: 'n'.repeat(100) }))).statusCode, 201);
    });

    test('description over 1000 characters', async () => {
      await expect400(
        await withProfile({ description: 'd'.repeat(1001) }),
        'VALIDATION_FAILED',
        /description/,
      );
      assert.equal((await post(await withProfile({ description: 'd'.repeat(1000) }))).statusCode, 201);
    });

    test('capabilities missing or empty', async () => {
      const { capabilities: _c, ...noCapabilities } = defaultProfile();
      await expect400(
        await validBody(ed25519Agent(), noCapabilities as Profile),
        'VALIDATION_FAILED',
        /capabilities/,
      );
      await expect400(await withProfile({ capabilities: [] }), 'VALIDATION_FAILED', /capabilities/);
      await expect400(
        await withProfile({ capabilities: [{ description: 'no type' } as never] }),
        'VALIDATION_FAILED',
        /type/,
      );
    });

    test('more than 20 tags, or a tag over 50 characters', async () => {
      const tags = Array.from({ length: 21 }, (_, i) => `t${i}`);
      await expect400(await withProfile({ tags }), 'VALIDATION_FAILED', /tags/);
      await expect400(await withProfile({ tags: ['x'.repeat(51)] }), 'VALIDATION_FAILED', /tags\[0\]/);
      assert.equal((await post(await withProfile({ tags: tags.slice(0, 20) }))).statusCode, 201);
    });

    test('avatar and website must be http(s) URLs of at most 2048 characters', async () => {
      await expect400(await withProfile({ avatar: 'ftp://example.com/a.png' }), 'INVALID_URL', /avatar/);
      await expect400(await withProfile({ avatar: 'not a url' }), 'INVALID_URL', /avatar/);
      await expect400(await withProfile({ website: 'javascript:alert(1)' }), 'INVALID_URL', /website/);
      await expect400(
        await withProfile({ website: `https://example.com/${'a'.repeat(2030)}` }),
        'VALIDATION_FAILED',
        /website/,
      );
    });

    test('capability input_schema must be a valid JSON Schema', async () => {
      await expect400(
        await withProfile({ capabilities: [{ type: 'x', input_schema: { type: 'no-such-type' } }] }),
        'INVALID_CAPABILITY_SCHEMA',
        /input_schema/,
      );
    });

    test('public_key of the wrong length, not hex, or not on the curve', async () => {
      const agent = ed25519Agent();
      const body = await validBody(agent);
      await expect400({ ...body, public_key: agent.publicKey.slice(2) }, 'INVALID_PUBLIC_KEY', /64/);
      await expect400({ ...body, public_key: `zz${agent.publicKey.slice(2)}` }, 'INVALID_PUBLIC_KEY', /hex/);
      const secp = secp256k1Agent();
      const secpBody = await validBody(secp);
      await expect400(
        { ...secpBody, public_key: secp.publicKey.slice(0, 128) },
        'INVALID_PUBLIC_KEY',
        /66.*130/,
      );
      await expect400({ ...secpBody, public_key: `04${'0'.repeat(128)}` }, 'INVALID_PUBLIC_KEY', /curve/);
    });

    test('key_type must be ed25519 or secp256k1', async () => {
      await expect400({ ...(await validBody()), key_type: 'rsa' }, 'VALIDATION_FAILED', /key_type/);
    });

    test('chain_id is required and must be a supported chain for secp256k1', async () => {
      const secp = secp256k1Agent();
      const body = await validBody(secp);
      const { chain_id: _chain, ...withoutChain } = body;
      await expect400(withoutChain, 'CHAIN_ID_REQUIRED', /chain_id/);
      await expect400({ ...body, chain_id: 'eip155:5' }, 'UNSUPPORTED_CHAIN', /eip155:5/);
      await expect400({ ...body, chain_id: 'bitcoin' }, 'INVALID_CHAIN_ID');
      await expect400({ ...(await validBody()), chain_id: 'eip155:1' }, 'INVALID_CHAIN_ID', /ed25519/);
    });

    test('timestamp more than 5 minutes away from server time, either way', async () => {
      const agent = ed25519Agent();
      const now = registry.clock.now();
      for (const skew of [-5 * 60 * 1000 - 1, 5 * 60 * 1000 + 1]) {
        await expect400(
          await registrationBody(agent, defaultProfile(), now + skew),
          'TIMESTAMP_OUT_OF_RANGE',
        );
      }
      await expect400(
        await registrationBody(agent, defaultProfile(), Math.floor(now / 1000)),
        'TIMESTAMP_OUT_OF_RANGE',
        /seconds/,
      );
      const edge = await registrationBody(agent, defaultProfile(), now - 5 * 60 * 1000);
      assert.equal((await post(edge)).statusCode, 201);
    });

    test('timestamp given as a string is refused, not coerced', async () => {
      const body = await validBody();
      await expect400({ ...body, timestamp: String(body.timestamp) }, 'VALIDATION_FAILED', /timestamp/);
    });

    test('a signature over a different message, by a different key, or malformed', async () => {
      const agent = ed25519Agent();
      const body = await validBody(agent);
      const tampered = { ...body, profile: { ...defaultProfile(), name: 'Someone else' } };
      await expect400(tampered, 'INVALID_SIGNATURE', /Ed25519/);
      const other = await validBody(ed25519Agent());
      await expect400({ ...body, signature: other.signature }, 'INVALID_SIGNATURE');
      await expect400({ ...body, signature: 'abcd' }, 'INVALID_SIGNATURE');

      const secp = secp256k1Agent();
      const secpBody = await validBody(secp);
      const otherSecp = await validBody(secp256k1Agent());
      await expect400({ ...secpBody, signature: otherSecp.signature }, 'INVALID_SIGNATURE', /EIP-191/);
      await expect400({ ...secpBody, signature: '0x1234' }, 'INVALID_SIGNATURE');
      // Signed for another chain than the one requested.
      await expect400({ ...secpBody, chain_id: 'eip155:8453' }, 'INVALID_SIGNATURE');
    });

    test('malformed JSON and a missing body', async () => {
      const response = await registry.app.inject({
        method: 'POST',
        url: '/api/agents/register',
        headers: { 'content-type': 'application/json' },
        payload: '{"public_key": ',
      });
      assert.equal(response.statusCode, 400);
      assert.equal(response.json().code, 'INVALID_JSON');
      const empty = await registry.app.inject({
        method: 'POST',
        url: '/api/agents/register',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(empty.statusCode, 400);
      assert.equal(empty.json().code, 'VALIDATION_FAILED');
    });
  });

  describe('409 for a public key already registered', () => {
    test('the same ed25519 key twice', async () => {
      const agent = ed25519Agent();
      assert.equal((await post(await validBody(agent))).statusCode, 201);
      const second = await post(await validBody(agent, { ...defaultProfile(), name: 'Again' }));
      assert.equal(second.statusCode, 409);
      assert.equal(second.json().code, 'PUBLIC_KEY_EXISTS');
      assert.equal(typeof second.json().details, 'string');
    });

    test('the compressed and uncompressed forms of one secp256k1 key, even on another chain', async () => {
      const agent = secp256k1Agent({ chainId: 'eip155:1' });
      assert.equal((await post(await validBody(agent))).statusCode, 201);
      const sameKey = secp256k1Agent({ wallet: agent.wallet, compressed: true, chainId: 'eip155:8453' });
      const second = await post(await registrationBody(sameKey, defaultProfile(), registry.clock.now()));
      assert.equal(second.statusCode, 409, second.body);
      assert.equal(second.json().code, 'PUBLIC_KEY_EXISTS');
    });
  });
});
