import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeLeaf, moderationEffect, type LogEventLeaf } from '@agent-registry/protocol';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import { registerNamed } from '../../support/discovery-helpers.js';
import { startListeningRegistry, type ListeningRegistry } from '../../support/faces-helpers.js';
import { federationSources } from '../../support/federation-status.js';

const OPERATOR_TOKEN = 'moderation-operator-secret-0123';

interface Entry {
  did: string | null;
  provenance: { state: string };
}

describe('a registry following one whose operator suspends and restores an agent', () => {
  let peer: ListeningRegistry;
  let follower: TestRegistry;

  before(async () => {
    peer = await startListeningRegistry({ FEDERATION_ADMIN_TOKEN: OPERATOR_TOKEN });
    follower = await startRegistry({ FEDERATION_PEERS: peer.url, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  });
  after(async () => {
    await follower.close();
    await peer.close();
  });

  const mirrored = async (did: string): Promise<Entry | undefined> =>
    (await follower.app.inject({ method: 'GET', url: '/api/federation/entries?kind=mirrored&limit=200' }))
      .json<{ entries: Entry[] }>()
      .entries.find((entry) => entry.did === did);

  const decide = (did: string, action: 'suspend' | 'restore', reason: string) =>
    peer.app.inject({
      method: 'POST',
      url: `/api/admin/agents/${encodeURIComponent(did)}/${action}`,
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
      payload: { reason },
    });

  test('the follower drops the suspended agent, keeps following, and mirrors it again once restored', async () => {
    const heron = await registerNamed(peer, 'Peer Suspended Heron');
    await follower.ctx.federation.refresh();
    assert.equal((await mirrored(heron.did))?.provenance.state, 'verified');

    assert.equal((await decide(heron.did, 'suspend', 'impersonation')).statusCode, 200);
    await follower.ctx.federation.refresh();
    assert.equal(await mirrored(heron.did), undefined, 'a suspended agent is not mirrored');
    assert.equal((await federationSources(follower))[0]?.state, 'ok');

    assert.equal((await decide(heron.did, 'restore', 'mistaken')).statusCode, 200);
    await follower.ctx.federation.refresh();
    assert.equal((await mirrored(heron.did))?.provenance.state, 'verified');
    assert.equal((await federationSources(follower))[0]?.state, 'ok');
  });

  test('moderation leaves are checked by the protocol package (verify, mirrors, peers)', () => {
    const leaf = (fields: object) =>
      new TextEncoder().encode(
        JSON.stringify({ v: 1, seq: 9, subject: 'did:web:x:agent:1', time: 1, ...fields }),
      );
    const suspended = decodeLeaf(leaf({ op: 'moderation.suspended', reason: 'malware' }), 9) as LogEventLeaf;
    assert.equal(moderationEffect(suspended), 'suspended');
    const restored = decodeLeaf(leaf({ op: 'moderation.restored', reason: 'appeal' }), 9) as LogEventLeaf;
    assert.equal(moderationEffect(restored), 'restored');
    assert.throws(
      () => decodeLeaf(leaf({ op: 'moderation.suspended', reason: 'ugly' }), 9),
      /reason is not one of/,
    );
    assert.throws(
      () => decodeLeaf(leaf({ op: 'moderation.restored', reason: 'malware' }), 9),
      /reason is not one of/,
    );
  });
});
