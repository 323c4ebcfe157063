import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeLeaf } from '@agent-registry/protocol';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import { recordClaim, removeClaim, writeHandle } from '../../../src/modules/domains/domain-store.js';
import { registerNamed } from '../../support/discovery-helpers.js';
import { startListeningRegistry, type ListeningRegistry } from '../../support/faces-helpers.js';
import { federationSources } from '../../support/federation-status.js';
import { followedEvents } from '../../support/key-rotation.js';

describe('followers of a registry whose agents claim domains and handles', () => {
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

  test('a federation peer and the protocol follower verify domain.claimed, handle.changed and domain.dropped', async () => {
    const agent = await registerNamed(peer, 'Peer Domain Holder');
    await follower.ctx.federation.refresh();
    // The claims are written as the service writes them once a proof is found (the proofs are tested apart).
    const at = peer.clock.now();
    await peer.ctx.agentWrites.run(async (trx) => {
      await recordClaim(trx, agent.did, 'peer-domain.example', 'dns', at);
      await writeHandle(
        trx,
        agent.did,
        { handle: 'example.peer-domain/holder', domain: 'peer-domain.example' },
        at,
      );
    });
    await peer.ctx.agentWrites.run((trx) =>
      removeClaim(trx, agent.did, 'peer-domain.example', at + 1, 'proof_gone'),
    );

    const leaves = (await followedEvents(peer)).filter((leaf) => leaf.subject === agent.did);
    assert.deepEqual(
      leaves.map((leaf) => leaf.op),
      ['domain.claimed', 'handle.changed', 'handle.changed', 'domain.dropped'],
    );

    await follower.ctx.federation.refresh();
    const source = (await federationSources(follower))[0];
    assert.equal(source?.state, 'ok', JSON.stringify(source));
    const checkpoint = (await peer.app.inject({ method: 'GET', url: '/log/checkpoint' })).body;
    const entries = (
      await follower.app.inject({ method: 'GET', url: '/api/federation/entries?kind=mirrored&limit=200' })
    ).json<{
      entries: { did: string | null; provenance: { state: string; checkpoint?: { size: number } } }[];
    }>().entries;
    const entry = entries.find((found) => found.did === agent.did);
    assert.equal(entry?.provenance.state, 'verified');
    assert.equal(entry?.provenance.checkpoint?.size, Number(checkpoint.split('\n')[1]));
  });

  test('malformed domain and handle leaves are refused by the protocol package', () => {
    const leaf = (op: string, fields: object) =>
      new TextEncoder().encode(
        JSON.stringify({ v: 1, seq: 9, op, subject: 'did:web:x:agent:1', time: 1, ...fields }),
      );
    assert.equal(
      decodeLeaf(leaf('domain.claimed', { domain: 'example.com', method: 'https' }), 9).op,
      'domain.claimed',
    );
    assert.throws(
      () => decodeLeaf(leaf('domain.claimed', { domain: 'Example.com/x', method: 'https' }), 9),
      /domain is not a domain name/,
    );
    assert.throws(
      () => decodeLeaf(leaf('domain.dropped', { domain: 'example.com', reason: 'bored' }), 9),
      /reason is not "dropped" or "proof_gone"/,
    );
    assert.equal(
      decodeLeaf(leaf('handle.changed', { handle: null, previous_handle: 'com.example/x' }), 9).op,
      'handle.changed',
    );
    assert.throws(
      () => decodeLeaf(leaf('handle.changed', { handle: 'no slash', previous_handle: null }), 9),
      /handle is not a handle or null/,
    );
  });
});
