import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  DAY_MS,
  freshToken,
  getJson,
  registerNamed,
  startSecondNode,
  submitReview,
} from '../../support/discovery-helpers.js';
import { agentPath, bearer } from '@agent-registry/testkit';
import { startRegistry, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';
import { Mirror, type Change, type ChangePage, type ReadPage } from '../../support/mirror.js';

type Node = { app: TestRegistry['app'] };

/** Pages read in-process from one node. */
const via =
  (node: Node): ReadPage =>
  async (query) => {
    const response = await node.app.inject({ method: 'GET', url: `/api/agents/changes?${query}` });
    assert.equal(response.statusCode, 200, response.body);
    return response.json<ChangePage>();
  };

/** The registry's active agents as GET /api/agents/{did} shows them (without the live members and provenance). */
async function activeProfiles(registry: TestRegistry): Promise<Map<string, Record<string, unknown>>> {
  const rows = await registry.ctx.database.db
    .selectFrom('agents')
    .select('did')
    .where('status', '=', 'active')
    .execute();
  const profiles = new Map<string, Record<string, unknown>>();
  for (const { did } of rows) {
    const profile = (await getJson(registry, agentPath(did))).json<Record<string, unknown>>();
    delete profile.service_record;
    delete profile.availability;
    // A change carries its provenance beside the profile, not in it.
    delete profile.provenance;
    profiles.set(did, profile);
  }
  return profiles;
}

describe('GET /api/agents/changes (the change feed)', () => {
  let registry: TestRegistry;

  before(async () => {
    registry = await startRegistry();
  });

  after(async () => {
    await registry.close();
  });

  test('every kind of public change is in the feed, a deactivation as a tombstone', async () => {
    const mirror = new Mirror();
    await mirror.drain(via(registry));
    const agent = await registerNamed(registry, 'Feed Heron');
    const reviewer = await registerNamed(registry, 'Feed Reviewer');
    let scoreBeforeRefresh: number | undefined;
    const kinds: [string, () => Promise<unknown>, (change: Change) => boolean][] = [
      ['registration', async () => {}, (change) => change.profile?.name === 'Feed Heron'],
      [
        'profile update',
        () =>
          registry.app.inject({
            method: 'PUT',
            url: agentPath(agent.did),
            headers: bearer(agent.token),
            payload: { name: 'Feed Egret' },
          }),
        (change) => change.profile?.name === 'Feed Egret',
      ],
      [
        'invocation settings',
        () =>
          registry.app.inject({
            method: 'PUT',
            url: agentPath(agent.did, '/invocation'),
            headers: bearer(agent.token),
            payload: { enabled: true, delivery_mode: 'queue' },
          }),
        (change) => change.profile?.delivery_mode === 'queue' && change.profile.invocation_enabled === true,
      ],
      [
        'reputation',
        () => submitReview(registry, reviewer.token, { target_did: agent.did, rating: 9 }),
        (change) => (change.profile?.reputation_score ?? 0) > 0,
      ],
      [
        'periodic reputation refresh',
        async () => {
          scoreBeforeRefresh = mirror.agents.get(agent.did)?.reputation_score;
          // Time decay moves the score only when the refresh recomputes it.
          registry.clock.advance(180 * DAY_MS);
          assert.ok((await registry.ctx.reputation.refreshAll()) >= 1);
        },
        (change) =>
          change.profile !== null &&
          scoreBeforeRefresh !== undefined &&
          change.profile.reputation_score !== scoreBeforeRefresh,
      ],
      [
        'deactivation',
        async () =>
          registry.app.inject({
            method: 'DELETE',
            url: agentPath(agent.did),
            headers: bearer(await freshToken(registry, agent.did)),
          }),
        (change) =>
          change.status === 'deactivated' &&
          change.profile === null &&
          typeof change.deactivated_at === 'number',
      ],
    ];
    for (const [kind, write, shows] of kinds) {
      const response = (await write()) as { statusCode?: number; body?: string } | undefined;
      if (response?.statusCode !== undefined)
        assert.ok(response.statusCode < 300, `${kind}: ${response.body}`);
      const before = mirror.seen.length;
      await mirror.drain(via(registry));
      const mine = mirror.seen.slice(before).filter((change) => change.did === agent.did);
      assert.equal(mine.length, 1, `${kind} shows the agent once`);
      assert.ok(shows(mine[0] as Change), `${kind}: ${JSON.stringify(mine[0])}`);
    }
    assert.equal(mirror.agents.has(agent.did), false, 'the tombstone removed it from the mirror');
  });

  test('a mirror replaying the feed while agents change ends with exactly the active set', async () => {
    const mirror = new Mirror();
    const writers: Registered[] = [];
    let writing = true;
    const writes = (async () => {
      try {
        for (let round = 0; round < 40; round += 1) {
          const agent = await registerNamed(registry, `Churn ${round}`, { tags: ['churn'] });
          writers.push(agent);
          const other = writers[Math.floor(writers.length / 2)] as Registered;
          if (round % 3 === 0) {
            await registry.app.inject({
              method: 'PUT',
              url: agentPath(other.did),
              headers: bearer(other.token),
              payload: { description: `changed in round ${round}` },
            });
          }
          if (round % 5 === 4) {
            await registry.app.inject({
              method: 'DELETE',
              url: agentPath(other.did),
              headers: bearer(other.token),
            });
          }
          if (round % 4 === 1)
            await submitReview(registry, agent.token, { target_did: other.did, rating: 7 });
        }
      } finally {
        writing = false;
      }
    })();
    // The mirror reads while the writes run, then catches up once they are done.
    while (writing) {
      await mirror.drain(via(registry), 5);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await writes;
    await mirror.drain(via(registry), 5);
    const expected = await activeProfiles(registry);
    assert.deepEqual([...mirror.agents.keys()].sort(), [...expected.keys()].sort());
    for (const [did, profile] of expected) assert.deepEqual(mirror.agents.get(did), profile, did);
    // The next poll finds nothing new and keeps the position.
    const cursor = mirror.cursor;
    assert.equal(await mirror.drain(via(registry)), 0);
    assert.equal(mirror.cursor, cursor);
  });

  test('two nodes committing at once: a mirror reading from both loses nothing', async () => {
    const node = await startSecondNode(registry);
    try {
      const mirror = new Mirror();
      await mirror.drain(via(registry));
      const burst = async (target: Node, label: string) => {
        for (let round = 0; round < 25; round += 1) {
          await registerNamed({ ...registry, app: target.app } as TestRegistry, `${label} ${round}`);
        }
      };
      let reading = true;
      const reader = (async () => {
        for (let turn = 0; reading; turn += 1) {
          await mirror.drain(via(turn % 2 === 0 ? registry : node), 3);
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      try {
        await Promise.all([burst(registry, 'Node A'), burst(node, 'Node B')]);
      } finally {
        reading = false;
      }
      await reader;
      await mirror.drain(via(node));
      const expected = await activeProfiles(registry);
      assert.deepEqual([...mirror.agents.keys()].sort(), [...expected.keys()].sort());
    } finally {
      await node.close();
    }
  });

  test('bad cursors and limits are 400s that say what to do', async () => {
    const cases: [string, string, RegExp][] = [
      ['since=garbage', 'INVALID_CURSOR', /next_cursor returned by this feed/],
      [`since=${Buffer.from('{"v":1,"seq":-1}').toString('base64url')}`, 'INVALID_CURSOR', /unchanged/],
      ['limit=0', 'VALIDATION_FAILED', /limit/],
      ['limit=1001', 'VALIDATION_FAILED', /limit/],
      ['updated_since=1', 'UNKNOWN_QUERY_PARAMETER', /since, limit/],
      // Well formed, but past the head: a cursor of another registry or from before a restore.
      [
        `since=${Buffer.from('{"v":1,"seq":999999999}').toString('base64url')}`,
        'INVALID_CURSOR',
        /ahead of this registry's change feed.*omit since/,
      ],
    ];
    // The head itself is a cursor the feed can hand out: an empty page that keeps the position.
    const head = (await getJson(registry, '/api/agents/changes?limit=1000')).json<ChangePage>();
    assert.equal(head.has_more, false);
    const atHead = await getJson(registry, `/api/agents/changes?since=${head.next_cursor}`);
    assert.equal(atHead.statusCode, 200, atHead.body);
    assert.deepEqual(atHead.json<ChangePage>(), {
      changes: [],
      next_cursor: head.next_cursor,
      has_more: false,
    });
    for (const [query, code, message] of cases) {
      const response = await getJson(registry, `/api/agents/changes?${query}`);
      assert.equal(response.statusCode, 400, query);
      const body = response.json<{ code: string; details: string }>();
      assert.equal(body.code, code, `${query}: ${response.body}`);
      assert.match(body.details, message, query);
    }
  });
});
