import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeLeaf } from '@agent-registry/protocol';
import { agentPath, bearer, ed25519Agent, secp256k1Agent } from '@agent-registry/testkit';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import { registerNamed } from '../../support/discovery-helpers.js';
import { startListeningRegistry, type ListeningRegistry } from '../../support/faces-helpers.js';
import { federationSources } from '../../support/federation-status.js';
import { postKeys, rotationBody } from '../../support/key-rotation.js';

interface Entry {
  did: string | null;
  description: string | null;
  provenance: { state: string; checkpoint?: { size: number } };
}

describe('followers of a registry whose agents rotate their keys', () => {
  let peer: ListeningRegistry;
  let follower: TestRegistry;

  before(async () => {
    peer = await startListeningRegistry();
    follower = await startRegistry({ FEDERATION_PEERS: peer.url, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  });
  after(async () => {
    await follower.close();
    await peer.close();
  });

  test('a federation peer verifies the key.rotated leaf and keeps mirroring the agent under its DID', async () => {
    const heron = await registerNamed(peer, 'Peer Rotating Heron');
    await follower.ctx.federation.refresh();
    const entries = async (): Promise<Entry[]> =>
      (
        await follower.app.inject({ method: 'GET', url: '/api/federation/entries?kind=mirrored&limit=200' })
      ).json<{ entries: Entry[] }>().entries;
    assert.equal((await entries()).find((entry) => entry.did === heron.did)?.provenance.state, 'verified');

    const next = secp256k1Agent();
    const rotated = await postKeys(
      peer,
      heron.did,
      'rotate',
      await rotationBody(heron.did, heron.agent, next, peer.clock.now(), peer.url),
    );
    assert.equal(rotated.statusCode, 200, rotated.body);
    const token = rotated.json<{ token: string }>().token;
    const updated = await peer.app.inject({
      method: 'PUT',
      url: agentPath(heron.did),
      headers: bearer(token),
      payload: { description: 'Written with the new key' },
    });
    assert.equal(updated.statusCode, 200, updated.body);

    await follower.ctx.federation.refresh();
    const source = (await federationSources(follower))[0];
    assert.equal(source?.state, 'ok', JSON.stringify(source));
    const entry = (await entries()).find((found) => found.did === heron.did);
    assert.equal(entry?.provenance.state, 'verified');
    assert.equal(entry?.description, 'Written with the new key');
    const checkpoint = (await peer.app.inject({ method: 'GET', url: '/log/checkpoint' })).body;
    const size = Number(checkpoint.split('\n')[1]);
    assert.equal(entry?.provenance.checkpoint?.size, size, 'verified up to the log that holds the rotation');
  });

  test('a key.rotated leaf that lacks its keys is refused by the protocol package (verify, mirrors, peers)', () => {
    const leaf = (fields: object) =>
      new TextEncoder().encode(
        JSON.stringify({ v: 1, seq: 9, op: 'key.rotated', subject: 'did:web:x:agent:1', time: 1, ...fields }),
      );
    const good = {
      old_key_type: 'ed25519',
      old_public_key: ed25519Agent().publicKey,
      new_key_type: 'ed25519',
      new_public_key: ed25519Agent().publicKey,
      key_generation: 1,
      via: 'rotation',
    };
    assert.equal(decodeLeaf(leaf(good), 9).op, 'key.rotated');
    assert.throws(
      () => decodeLeaf(leaf({ ...good, new_public_key: undefined }), 9),
      /not a well-formed "key.rotated" event: new_public_key is not a hex key/,
    );
    assert.throws(
      () => decodeLeaf(leaf({ ...good, key_generation: 0 }), 9),
      /key_generation is not a positive integer/,
    );
  });
});
