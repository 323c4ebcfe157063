import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { agentPath, bearer, ed25519Agent, secp256k1Agent } from '@agent-registry/testkit';
import { register, startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import { registerNamed } from '../../support/discovery-helpers.js';
import {
  followedEvents,
  login,
  postKeys,
  recoveryCancelBody,
  recoverySetBody,
  recoveryStartBody,
} from '../../support/key-rotation.js';

const HOUR = 60 * 60 * 1000;

interface Status {
  recovery_key_set: boolean;
  recovery_public_key: string | null;
  timelock_hours: number;
  pending: { new_public_key: string; started_at: number; completes_at: number } | null;
}

describe('key recovery', () => {
  let registry: TestRegistry;
  const get = (url: string) => registry.app.inject({ method: 'GET', url });
  const status = async (did: string): Promise<Status> => {
    const response = await get(agentPath(did, '/keys/recovery'));
    assert.equal(response.statusCode, 200, response.body);
    return response.json<Status>();
  };
  const codeOf = (response: { statusCode: number; json: <T>() => T }) => [
    response.statusCode,
    response.json<{ code: string }>().code,
  ];

  before(async () => {
    // Tokens outlive the clock moves, so a refusal is the rotation's, not the expiry's.
    registry = await startRegistry({ KEY_RECOVERY_HOURS: '24', TOKEN_TTL_SECONDS: String(30 * 24 * 3600) });
  });
  after(async () => {
    await registry.close();
  });

  test('a cancelled recovery does not happen; a recovery completes after its public timelock, as a rotation', async () => {
    const owl = await registerNamed(registry, 'Recovering Owl');
    const recovery = secp256k1Agent();
    assert.deepEqual(
      codeOf(
        await postKeys(
          registry,
          owl.did,
          'recovery/start',
          await recoveryStartBody(owl.did, recovery, ed25519Agent(), registry.clock.now()),
        ),
      ),
      [404, 'RECOVERY_KEY_NOT_SET'],
    );
    const set = await postKeys(
      registry,
      owl.did,
      'recovery',
      await recoverySetBody(owl.did, owl.agent, recovery, registry.clock.now()),
    );
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(set.json<Status>().recovery_public_key, recovery.publicKey);
    assert.equal(set.json<Status>().timelock_hours, 24);

    // Started by the recovery key: public, pending for 24 hours.
    const first = ed25519Agent();
    const startedAt = registry.clock.now();
    const started = await postKeys(
      registry,
      owl.did,
      'recovery/start',
      await recoveryStartBody(owl.did, recovery, first, startedAt),
    );
    assert.equal(started.statusCode, 200, started.body);
    assert.deepEqual(started.json<Status>().pending, {
      new_key_type: 'ed25519',
      new_public_key: first.publicKey,
      started_at: startedAt,
      completes_at: startedAt + 24 * HOUR,
    });
    const profile = (await get(agentPath(owl.did))).json<{ key_recovery?: Status['pending'] }>();
    assert.equal(profile.key_recovery?.new_public_key, first.publicKey);
    assert.deepEqual(
      codeOf(
        await postKeys(
          registry,
          owl.did,
          'recovery/start',
          await recoveryStartBody(owl.did, recovery, ed25519Agent(), registry.clock.now()),
        ),
      ),
      [409, 'RECOVERY_PENDING'],
    );

    // The current key cancels it: after the timelock nothing happens.
    const cancelled = await postKeys(
      registry,
      owl.did,
      'recovery/cancel',
      await recoveryCancelBody(owl.did, owl.agent, registry.clock.now()),
    );
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(cancelled.json<Status>().pending, null);
    assert.deepEqual(
      codeOf(
        await postKeys(
          registry,
          owl.did,
          'recovery/cancel',
          await recoveryCancelBody(owl.did, owl.agent, registry.clock.now() + 1),
        ),
      ),
      [409, 'RECOVERY_NOT_PENDING'],
    );
    registry.clock.advance(25 * HOUR);
    assert.equal(await registry.ctx.keyRecovery.finishDue(), 0);
    assert.equal(
      (await get(agentPath(owl.did))).json<{ public_key: string }>().public_key,
      owl.agent.publicKey,
    );

    // Started again; the recovery key cannot cancel, only the current key can.
    const second = ed25519Agent();
    const again = await postKeys(
      registry,
      owl.did,
      'recovery/start',
      await recoveryStartBody(owl.did, recovery, second, registry.clock.now()),
    );
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(
      codeOf(
        await postKeys(
          registry,
          owl.did,
          'recovery/cancel',
          await recoveryCancelBody(owl.did, recovery, registry.clock.now()),
        ),
      ),
      [400, 'INVALID_SIGNATURE'],
    );
    registry.clock.advance(23 * HOUR);
    assert.equal(await registry.ctx.keyRecovery.finishDue(), 0, 'not before its time');
    assert.notEqual((await status(owl.did)).pending, null);
    registry.clock.advance(HOUR);
    assert.equal(await registry.ctx.keyRecovery.finishDue(), 1);
    assert.equal(await registry.ctx.keyRecovery.finishDue(), 0, 'finished once');

    const after = (await get(agentPath(owl.did))).json<{
      public_key: string;
      did: string;
      key_recovery?: unknown;
    }>();
    assert.equal(after.did, owl.did);
    assert.equal(after.public_key, second.publicKey);
    assert.equal(after.key_recovery, undefined);
    const stale = await registry.app.inject({
      method: 'PUT',
      url: agentPath(owl.did),
      headers: bearer(owl.token),
      payload: { description: 'old key' },
    });
    assert.deepEqual(codeOf(stale), [401, 'TOKEN_KEY_ROTATED']);
    const fresh = await login(registry, owl.did, second);
    assert.equal(fresh.statusCode, 200, fresh.body);
    assert.equal((await status(owl.did)).recovery_key_set, true, 'the recovery key stays');

    const kinds = (await followedEvents(registry))
      .filter((leaf) => leaf.subject === owl.did)
      .map((leaf) => [leaf.op, leaf.reason ?? leaf.via ?? null]);
    assert.deepEqual(kinds, [
      ['key.recovery_set', null],
      ['key.recovery_started', null],
      ['key.recovery_cancelled', 'cancelled'],
      ['key.recovery_started', null],
      ['key.rotated', 'recovery'],
      ['key.recovery_finished', null],
    ]);
  });

  test('a due recovery finishes on the next read; a rotation ends a pending recovery', async () => {
    const lark = await registerNamed(registry, 'Reading Lark');
    const recovery = ed25519Agent();
    await postKeys(
      registry,
      lark.did,
      'recovery',
      await recoverySetBody(lark.did, lark.agent, recovery, registry.clock.now()),
    );
    const next = ed25519Agent();
    const started = await postKeys(
      registry,
      lark.did,
      'recovery/start',
      await recoveryStartBody(lark.did, recovery, next, registry.clock.now()),
    );
    assert.equal(started.statusCode, 200, started.body);
    registry.clock.advance(24 * HOUR);
    const read = await status(lark.did);
    assert.equal(read.pending, null);
    assert.equal((await get(agentPath(lark.did))).json<{ public_key: string }>().public_key, next.publicKey);

    const finch = await registerNamed(registry, 'Rotating Finch');
    const finchRecovery = ed25519Agent();
    await postKeys(
      registry,
      finch.did,
      'recovery',
      await recoverySetBody(finch.did, finch.agent, finchRecovery, registry.clock.now()),
    );
    await postKeys(
      registry,
      finch.did,
      'recovery/start',
      await recoveryStartBody(finch.did, finchRecovery, ed25519Agent(), registry.clock.now()),
    );
    const { rotationBody } = await import('../../support/key-rotation.js');
    const rotated = await postKeys(
      registry,
      finch.did,
      'rotate',
      await rotationBody(finch.did, finch.agent, ed25519Agent(), registry.clock.now()),
    );
    assert.equal(rotated.statusCode, 200, rotated.body);
    assert.equal((await status(finch.did)).pending, null);
    const reasons = (await followedEvents(registry))
      .filter((leaf) => leaf.subject === finch.did && leaf.op === 'key.recovery_cancelled')
      .map((leaf) => leaf.reason);
    assert.deepEqual(reasons, ['rotated']);
  });

  test('refusals: a did:pkh agent, the current key as recovery key, a start not signed by the recovery key', async () => {
    const wallet = secp256k1Agent();
    const pkh = await register(registry, wallet);
    assert.deepEqual(
      codeOf(
        await postKeys(
          registry,
          pkh.did,
          'recovery',
          await recoverySetBody(pkh.did, wallet, ed25519Agent(), registry.clock.now()),
        ),
      ),
      [400, 'KEY_ROTATION_UNSUPPORTED'],
    );
    const jay = await registerNamed(registry, 'Refused Jay');
    assert.deepEqual(
      codeOf(
        await postKeys(
          registry,
          jay.did,
          'recovery',
          await recoverySetBody(jay.did, jay.agent, jay.agent, registry.clock.now()),
        ),
      ),
      [400, 'RECOVERY_KEY_INVALID'],
    );
    const intruder = ed25519Agent();
    assert.deepEqual(
      codeOf(
        await postKeys(
          registry,
          jay.did,
          'recovery',
          await recoverySetBody(jay.did, intruder, intruder, registry.clock.now()),
        ),
      ),
      [400, 'INVALID_SIGNATURE'],
    );
    const recovery = ed25519Agent();
    await postKeys(
      registry,
      jay.did,
      'recovery',
      await recoverySetBody(jay.did, jay.agent, recovery, registry.clock.now()),
    );
    assert.deepEqual(
      codeOf(
        await postKeys(
          registry,
          jay.did,
          'recovery/start',
          await recoveryStartBody(jay.did, jay.agent, ed25519Agent(), registry.clock.now()),
        ),
      ),
      [400, 'INVALID_SIGNATURE'],
    );
    assert.deepEqual(
      codeOf(
        await postKeys(
          registry,
          jay.did,
          'recovery/start',
          await recoveryStartBody(jay.did, recovery, recovery, registry.clock.now()),
        ),
      ),
      [400, 'RECOVERY_KEY_INVALID'],
    );
    assert.equal((await status(jay.did)).pending, null);
  });
});
