import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createTestDatabase, serveAgentCard, testDatabase } from '@agent-registry/testkit';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import { readSources } from '../../../src/modules/federation/remote-sources-store.js';
import { peerSourceId } from '../../../src/modules/federation/peer-entries.js';
import { entriesLog, FakePeer, leafFor, repeatedLog } from '../../support/fake-peer.js';
import { OPERATOR_TOKEN, type SourceStatus } from '../../support/federation-status.js';

/** What a hostile peer can sign at no cost: 25.6 million copies of one leaf, each about 3.7 KB. */
const CLAIMED = 25_600_000;

async function statuses(registry: TestRegistry): Promise<Map<string, SourceStatus>> {
  const response = await registry.app.inject({
    method: 'GET',
    url: '/api/federation/status',
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
  });
  assert.equal(response.statusCode, 200, response.body);
  return new Map(response.json<{ sources: SourceStatus[] }>().sources.map((source) => [source.id, source]));
}

/** A hostile peer serving a valid-looking log of CLAIMED entries naming one agent of its own. */
async function hostilePeer(behaviour: ConstructorParameters<typeof FakePeer>[0] = {}): Promise<FakePeer> {
  const peer = await new FakePeer(behaviour).start();
  const did = peer.did('copycat');
  const profile = {
    did,
    name: 'Copycat',
    description: 'One agent logged 25.6 million times',
    status: 'active',
  };
  peer.profiles.set(did, profile);
  peer.setLog(repeatedLog(leafFor(did, profile, 3500), CLAIMED));
  return peer;
}

/** An honest peer whose log names `count` agents of its own, one entry each. */
async function honestPeer(count: number): Promise<FakePeer> {
  const peer = await new FakePeer().start();
  const leaves: Uint8Array[] = [];
  for (let i = 0; i < count; i += 1) {
    const did = peer.did(`honest-${i}`);
    const profile = {
      did,
      name: `Honest ${i}`,
      description: 'Follows the rules',
      tags: ['honest'],
      status: 'active',
    };
    peer.profiles.set(did, profile);
    leaves.push(leafFor(did, profile));
  }
  peer.setLog(entriesLog(leaves));
  return peer;
}

describe(`a peer whose signed checkpoint claims 25.6 million entries (${testDatabase})`, () => {
  test('is followed a bounded, proved step a round, resumed after a restart, while the other sources refresh', async () => {
    const hostile = await hostilePeer();
    const honest = await honestPeer(2500);
    const card = await serveAgentCard({
      name: 'Card Agent',
      description: 'Imported meanwhile',
      skill: 'cards',
    });
    const database = await createTestDatabase();
    const env = {
      FEDERATION_PEERS: `${hostile.url},${honest.url}`,
      FEDERATION_A2A_CARDS: card.cardUrl,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: OPERATOR_TOKEN,
      FEDERATION_PEER_CATCHUP_ENTRIES: '4096',
    };
    let follower = await startRegistry(env, { database });
    try {
      // The start-up round and this one, one after the other.
      await follower.ctx.federation.refresh();
      let current = await statuses(follower);
      const followed = current.get(peerSourceId(hostile.url));
      assert.equal(followed?.state, 'ok', followed?.last_error ?? '');
      const verified = followed?.checkpoint?.size ?? 0;
      assert.ok(verified === 4096 || verified === 8192, `${verified} entries: one or two rounds' bound`);
      assert.match(
        followed?.last_error ?? '',
        new RegExp(
          `^catching up: ${verified} of ${CLAIMED} entries .* stopped: FEDERATION_PEER_CATCHUP_ENTRIES \\(4096 entries a round\\); the next round resumes from entry ${verified}$`,
        ),
      );
      assert.equal(followed?.entries, 1, 'one agent, however many times it is logged');
      // Every bundle read once: the progress of each was stored before the next was read.
      assert.equal(hostile.bundlesServed.length, verified / 256);
      assert.equal(new Set(hostile.bundlesServed).size, hostile.bundlesServed.length);
      // What is stored of the hostile log: the compact range, not its entries or leaf hashes.
      const cursor = (await readSources(follower.ctx.database.db)).find(
        (source) => source.id === peerSourceId(hostile.url),
      )?.cursor;
      assert.ok((cursor ?? '').length < 4096, `cursor of ${(cursor ?? '').length} characters`);

      // Meanwhile the honest peer was followed to its end, and the card imported.
      const other = current.get(peerSourceId(honest.url));
      assert.deepEqual(
        [other?.state, other?.last_error, other?.checkpoint?.size, other?.entries],
        ['ok', null, 2500, 2500],
      );
      const imported = [...current.values()].find((source) => source.kind === 'a2a');
      assert.deepEqual([imported?.state, imported?.entries], ['ok', 1]);
      const search = await follower.app.inject({
        method: 'GET',
        url: '/api/agents/search?scope=federated&q=Honest&limit=1',
      });
      assert.equal(search.statusCode, 200, search.body);

      // A restart resumes where the stored progress says, reading no bundle again.
      await follower.close();
      const servedBefore = hostile.bundlesServed.length;
      follower = await startRegistry(env, { database });
      await follower.ctx.federation.refresh();
      current = await statuses(follower);
      const resumed = current.get(peerSourceId(hostile.url))?.checkpoint?.size ?? 0;
      assert.ok(resumed > verified, `${resumed} after ${verified}`);
      assert.equal(Math.min(...hostile.bundlesServed.slice(servedBefore)), verified / 256);
      assert.equal(new Set(hostile.bundlesServed).size, hostile.bundlesServed.length);
      assert.equal(hostile.bundlesServed.length, resumed / 256);
      assert.equal(current.get(peerSourceId(honest.url))?.checkpoint?.size, 2500);
    } finally {
      await follower.close();
      await database.drop();
      await Promise.all([hostile.close(), honest.close(), card.close()]);
    }
  });

  test('serving bundles that do not lead to its signed root is stopped at the first one, with the reason on its status', async () => {
    // As many valid-looking leaves as each bundle should hold (about 1 MB a bundle), none of them logged.
    const forged = leafFor('did:web:elsewhere.example', { name: 'Forged' }, 3500);
    const hostile = await hostilePeer({ forgedEntry: forged });
    const honest = await honestPeer(300);
    const follower = await startRegistry({
      FEDERATION_PEERS: `${hostile.url},${honest.url}`,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: OPERATOR_TOKEN,
    });
    try {
      await follower.ctx.federation.refresh();
      const current = await statuses(follower);
      const stopped = current.get(peerSourceId(hostile.url));
      assert.equal(stopped?.state, 'stopped');
      assert.match(
        stopped?.last_error ?? '',
        /^no longer followed: entry bundle 0 is not part of the checkpoint's tree of size 25600000 /,
      );
      assert.equal(stopped?.entries, 0);
      assert.equal(stopped?.checkpoint, undefined, 'nothing of its log was verified');
      assert.deepEqual(hostile.bundlesServed, [0], 'one bundle read, in one round; none after the stop');
      assert.deepEqual(
        [current.get(peerSourceId(honest.url))?.state, current.get(peerSourceId(honest.url))?.entries],
        ['ok', 300],
      );
    } finally {
      await follower.close();
      await Promise.all([hostile.close(), honest.close()]);
    }
  });

  test('answering slowly is cut at the source deadline, resumed from the stored bundles, and holds no other source', async () => {
    // The first two bundles at once, then each bundle after longer than the deadline.
    const hostile = await hostilePeer({ bundleDelayMs: (index) => (index >= 2 ? 8_000 : 0) });
    const honest = await honestPeer(20);
    const follower = await startRegistry({
      FEDERATION_PEERS: `${hostile.url},${honest.url}`,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: OPERATOR_TOKEN,
      FEDERATION_SOURCE_DEADLINE_SECONDS: '2',
    });
    try {
      await follower.ctx.federation.refresh();
      const current = await statuses(follower);
      const slow = current.get(peerSourceId(hostile.url));
      assert.equal(slow?.state, 'error');
      assert.equal(slow?.checkpoint?.size, 512, 'the two bundles it answered are kept');
      assert.match(
        slow?.last_error ?? '',
        /^catching up: 512 (of 25600000 )?entries .* cut at its deadline of 2 s in the round \(FEDERATION_SOURCE_DEADLINE_SECONDS\).*resumes from entry 512$/,
      );
      assert.ok(
        hostile.bundlesServed.filter((index) => index < 2).length === 2,
        'bundles 0 and 1 read once, not again in the second round',
      );
      assert.deepEqual(
        [current.get(peerSourceId(honest.url))?.state, current.get(peerSourceId(honest.url))?.entries],
        ['ok', 20],
      );
    } finally {
      await follower.close();
      await Promise.all([hostile.close(), honest.close()]);
    }
  });
});
