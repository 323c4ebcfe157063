import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  agentPath,
  bearer,
  ed25519Agent,
  registrationBody,
  secp256k1Agent,
  defaultProfile,
} from '@agent-registry/testkit';
import { register, startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import { applyKeyChange } from '../../../src/modules/key-rotation/key-store.js';
import { parsePublicKey } from '@agent-registry/protocol';
import { registerNamed, submitReview } from '../../support/discovery-helpers.js';
import { followedEvents, login, postKeys, rotationBody } from '../../support/key-rotation.js';

describe('key rotation', () => {
  let registry: TestRegistry;
  const get = (url: string, token?: string) =>
    registry.app.inject({ method: 'GET', url, headers: token === undefined ? {} : bearer(token) });

  before(async () => {
    registry = await startRegistry();
  });
  after(async () => {
    await registry.close();
  });

  test('an agent with reviews rotates Ed25519 -> secp256k1 -> Ed25519 and keeps its DID and history; old tokens and keys are done', async () => {
    const heron = await registerNamed(registry, 'Rotating Heron');
    const reviewer = await registerNamed(registry, 'Heron Reviewer');
    const review = await submitReview(registry, reviewer.token, { target_did: heron.did, rating: 5 });
    assert.equal(review.statusCode, 201, review.body);
    const before = (await get(agentPath(heron.did))).json<Record<string, unknown>>();
    assert.equal(before.total_reviews, 1);

    const next = secp256k1Agent({ compressed: true });
    const rotated = await postKeys(
      registry,
      heron.did,
      'rotate',
      await rotationBody(heron.did, heron.agent, next, registry.clock.now()),
    );
    assert.equal(rotated.statusCode, 200, rotated.body);
    const answer = rotated.json<{ did: string; key_generation: number; token: string; public_key: string }>();
    assert.equal(answer.did, heron.did);
    assert.equal(answer.key_generation, 1);
    assert.equal(answer.public_key, next.publicKey);

    const after = (await get(agentPath(heron.did))).json<Record<string, unknown>>();
    assert.equal(after.did, heron.did);
    assert.equal(after.public_key, next.publicKey);
    assert.equal(after.key_type, 'secp256k1');
    for (const kept of [
      'total_reviews',
      'average_rating',
      'reputation_score',
      'service_record',
      'created_at',
      'name',
    ])
      assert.deepEqual(after[kept], before[kept], kept);
    const reviews = (await get(agentPath(heron.did, '/reviews'))).json<{ reviews: unknown[] }>();
    assert.equal(reviews.reviews.length, 1);

    // The DID document names the new key, as key-2.
    const document = (await get(`/api/did/${encodeURIComponent(heron.did)}`)).json<{
      verificationMethod: { id: string; publicKeyMultibase: string }[];
    }>();
    assert.equal(document.verificationMethod.length, 1);
    assert.equal(document.verificationMethod[0]?.id, `${heron.did}#key-2`);
    assert.match(document.verificationMethod[0]?.publicKeyMultibase ?? '', /^zQ3s/);

    // The old key's token is refused at once; the answer's token and a new login work.
    const stale = await registry.app.inject({
      method: 'PUT',
      url: agentPath(heron.did),
      headers: bearer(heron.token),
      payload: { description: 'from the old key' },
    });
    assert.equal(stale.statusCode, 401, stale.body);
    assert.equal(stale.json<{ code: string }>().code, 'TOKEN_KEY_ROTATED');
    const fresh = await registry.app.inject({
      method: 'PUT',
      url: agentPath(heron.did),
      headers: bearer(answer.token),
      payload: { description: 'from the new key' },
    });
    assert.equal(fresh.statusCode, 200, fresh.body);
    const newLogin = await login(registry, heron.did, next);
    assert.equal(newLogin.statusCode, 200, newLogin.body);
    const renewed = await registry.app.inject({
      method: 'PUT',
      url: agentPath(heron.did),
      headers: bearer(newLogin.json<{ token: string }>().token),
      payload: { description: 'from a fresh login' },
    });
    assert.equal(renewed.statusCode, 200, renewed.body);
    const oldLogin = await login(registry, heron.did, heron.agent);
    assert.equal(oldLogin.statusCode, 401, oldLogin.body);

    // The old key can never register again, nor sign another rotation, nor come back.
    const again = await registry.app.inject({
      method: 'POST',
      url: '/api/agents/register',
      payload: await registrationBody(heron.agent, defaultProfile(), registry.clock.now()),
    });
    assert.equal(again.statusCode, 409, again.body);
    assert.equal(again.json<{ code: string }>().code, 'KEY_RETIRED');
    const byOld = await postKeys(
      registry,
      heron.did,
      'rotate',
      await rotationBody(heron.did, heron.agent, ed25519Agent(), registry.clock.now()),
    );
    assert.equal(byOld.statusCode, 400, byOld.body);
    assert.equal(byOld.json<{ code: string }>().code, 'INVALID_SIGNATURE');
    const back = await postKeys(
      registry,
      heron.did,
      'rotate',
      await rotationBody(heron.did, next, heron.agent, registry.clock.now()),
    );
    assert.equal(back.statusCode, 409, back.body);
    assert.equal(back.json<{ code: string }>().code, 'KEY_RETIRED');

    // And back to a new Ed25519 key: generation 2, key-3 in the DID document.
    const third = ed25519Agent();
    const toEd = await postKeys(
      registry,
      heron.did,
      'rotate',
      await rotationBody(heron.did, next, third, registry.clock.now()),
    );
    assert.equal(toEd.statusCode, 200, toEd.body);
    assert.equal(toEd.json<{ key_generation: number }>().key_generation, 2);
    const document3 = (await get(`/api/did/${encodeURIComponent(heron.did)}`)).json<{
      verificationMethod: { id: string }[];
    }>();
    assert.equal(document3.verificationMethod[0]?.id, `${heron.did}#key-3`);

    // Both rotations are event leaves the protocol package's follower verified, with their keys.
    const rotations = (await followedEvents(registry)).filter(
      (leaf) => leaf.op === 'key.rotated' && leaf.subject === heron.did,
    );
    assert.deepEqual(
      rotations.map((leaf) => [
        leaf.old_key_type,
        leaf.old_public_key,
        leaf.new_key_type,
        leaf.new_public_key,
        leaf.key_generation,
        leaf.via,
      ]),
      [
        ['ed25519', heron.agent.publicKey, 'secp256k1', next.publicKey, 1, 'rotation'],
        ['secp256k1', next.publicKey, 'ed25519', third.publicKey, 2, 'rotation'],
      ],
    );
  });

  test('refusals: a did:pkh agent, a wrong signature of either key, the same key, another agent’s key, another audience', async () => {
    const wallet = secp256k1Agent();
    const pkh = await register(registry, wallet);
    const refusedPkh = await postKeys(
      registry,
      pkh.did,
      'rotate',
      await rotationBody(pkh.did, wallet, ed25519Agent(), registry.clock.now()),
    );
    assert.equal(refusedPkh.statusCode, 400, refusedPkh.body);
    assert.equal(refusedPkh.json<{ code: string }>().code, 'KEY_ROTATION_UNSUPPORTED');

    const ibis = await registerNamed(registry, 'Refused Ibis');
    const next = ed25519Agent();
    const body = await rotationBody(ibis.did, ibis.agent, next, registry.clock.now());
    const codeOf = async (payload: Record<string, unknown>, did = ibis.did) => {
      const response = await postKeys(registry, did, 'rotate', payload);
      return [response.statusCode, response.json<{ code: string }>().code];
    };
    const impostor = ed25519Agent();
    assert.deepEqual(
      await codeOf({
        ...body,
        new_key_signature: (await rotationBody(ibis.did, ibis.agent, impostor, body.timestamp as number))
          .new_key_signature,
      }),
      [400, 'INVALID_SIGNATURE'],
    );
    assert.deepEqual(await codeOf({ ...body, signature: body.new_key_signature }), [
      400,
      'INVALID_SIGNATURE',
    ]);
    assert.deepEqual(
      await codeOf(await rotationBody(ibis.did, ibis.agent, ibis.agent, registry.clock.now())),
      [400, 'KEY_UNCHANGED'],
    );
    const other = await registerNamed(registry, 'Other Stork');
    assert.deepEqual(
      await codeOf(await rotationBody(ibis.did, ibis.agent, other.agent, registry.clock.now())),
      [409, 'PUBLIC_KEY_EXISTS'],
    );
    assert.deepEqual(
      await codeOf(
        await rotationBody(ibis.did, ibis.agent, next, registry.clock.now(), 'https://elsewhere.example'),
      ),
      [400, 'AUDIENCE_MISMATCH'],
    );
    assert.deepEqual(
      await codeOf(await rotationBody(ibis.did, ibis.agent, next, registry.clock.now() - 10 * 60_000)),
      [400, 'TIMESTAMP_OUT_OF_RANGE'],
    );
    assert.deepEqual(await codeOf({ ...body, new_public_key: 'zz' }), [400, 'INVALID_PUBLIC_KEY']);
    assert.deepEqual(await codeOf({ ...body, extra: 1 }), [400, 'VALIDATION_FAILED']);
    // Nothing changed.
    const profile = (await get(agentPath(ibis.did))).json<{ public_key: string }>();
    assert.equal(profile.public_key, ibis.agent.publicKey);
  });

  test('a key change is compare-and-set on the current key: a stale rotation loses, whatever node made it', async () => {
    const crane = await registerNamed(registry, 'Racing Crane');
    const first = ed25519Agent();
    const second = ed25519Agent();
    const [a, b] = await Promise.all([
      rotationBody(crane.did, crane.agent, first, registry.clock.now()),
      rotationBody(crane.did, crane.agent, second, registry.clock.now() + 1),
    ]).then(([bodyA, bodyB]) =>
      Promise.all([
        postKeys(registry, crane.did, 'rotate', bodyA),
        postKeys(registry, crane.did, 'rotate', bodyB),
      ]),
    );
    const statuses = [a.statusCode, b.statusCode].sort();
    assert.equal(statuses.filter((status) => status === 200).length, 1, `${a.body} ${b.body}`);
    const winner = a.statusCode === 200 ? first : second;
    const profile = (await get(agentPath(crane.did))).json<{ public_key: string }>();
    assert.equal(profile.public_key, winner.publicKey);

    // The statement itself refuses a change checked against a key that is no longer the agent's.
    const stale = {
      did: crane.did,
      keyType: 'ed25519' as const,
      publicKey: crane.agent.publicKey,
      keyId: `ed25519:${crane.agent.publicKey}`,
    };
    await assert.rejects(
      registry.ctx.agentWrites.run((trx) =>
        applyKeyChange(trx, {
          from: stale,
          to: parsePublicKey('ed25519', ed25519Agent().publicKey),
          at: registry.clock.now(),
          via: 'rotation',
        }),
      ),
      (error: { code?: string }) => error.code === 'KEY_ROTATION_CONFLICT',
    );
  });

  test('two nodes on one database: of two rotations at once, exactly one wins', async () => {
    const second = await startRegistry({}, { database: registry.database });
    try {
      const kite = await registerNamed(registry, 'Two-node Kite');
      const keys = [ed25519Agent(), ed25519Agent()] as const;
      const bodies = await Promise.all(
        keys.map((key, index) => rotationBody(kite.did, kite.agent, key, registry.clock.now() + index)),
      );
      const [bodyA, bodyB] = bodies;
      assert.ok(bodyA !== undefined && bodyB !== undefined);
      const answers = await Promise.all([
        postKeys(registry, kite.did, 'rotate', bodyA),
        postKeys(second, kite.did, 'rotate', bodyB),
      ]);
      const won = answers.filter((answer) => answer.statusCode === 200);
      assert.equal(won.length, 1, answers.map((answer) => answer.body).join(' '));
      const lost = answers.find((answer) => answer.statusCode !== 200);
      assert.ok(lost !== undefined);
      assert.ok(
        ['KEY_ROTATION_CONFLICT', 'INVALID_SIGNATURE'].includes(lost.json<{ code: string }>().code),
        lost.body,
      );
      const events = (await followedEvents(registry)).filter(
        (leaf) => leaf.op === 'key.rotated' && leaf.subject === kite.did,
      );
      assert.equal(events.length, 1);
    } finally {
      await second.app.close();
      await second.ctx.close();
    }
  });

  test('key changes are rate limited per agent', async () => {
    const limited = await startRegistry({ KEY_CHANGE_RATE_LIMIT: '1' });
    try {
      const wren = await register(limited, ed25519Agent());
      const next = ed25519Agent();
      const ok = await postKeys(
        limited,
        wren.did,
        'rotate',
        await rotationBody(wren.did, wren.agent, next, limited.clock.now()),
      );
      assert.equal(ok.statusCode, 200, ok.body);
      const refused = await postKeys(
        limited,
        wren.did,
        'rotate',
        await rotationBody(wren.did, next, ed25519Agent(), limited.clock.now()),
      );
      assert.equal(refused.statusCode, 429, refused.body);
      assert.equal(refused.json<{ code: string }>().code, 'KEY_CHANGE_RATE_LIMITED');
      assert.ok(Number(refused.headers['retry-after']) >= 1);
    } finally {
      await limited.close();
    }
  });
});
