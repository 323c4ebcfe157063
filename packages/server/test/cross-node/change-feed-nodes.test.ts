import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../src/kernel/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { updateActiveAgent } from '../../src/modules/agents/agents-store.js';
import { stampAgentChange } from '../../src/modules/agents/change-feed-store.js';
import { profileOf } from '../support/discovery-helpers.js';
import {
  TEST_PUBLIC_URL,
  createTestDatabase,
  ed25519Agent,
  registrationBody,
  testDatabase,
  type TestDatabase,
  startRegistryProcess,
  type RegistryProcess,
} from '@agent-registry/testkit';
import { Mirror, type ChangePage, type ReadPage } from '../support/mirror.js';
import { http } from '../support/http.js';

interface Agent {
  did: string;
  token: string;
}

const agentUrl = (did: string, suffix = ''): string => `/api/agents/${encodeURIComponent(did)}${suffix}`;

/** Pages read over HTTP from one registry process. */
const via =
  (node: RegistryProcess): ReadPage =>
  async (query) => {
    const response = await http(node, 'GET', `/api/agents/changes?${query}`);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as unknown as ChangePage;
  };

async function registerOn(node: RegistryProcess, name: string): Promise<Agent> {
  const body = await registrationBody(ed25519Agent(), profileOf(name), Date.now());
  const response = await http(node, 'POST', '/api/agents/register', undefined, body);
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body as unknown as Agent;
}

/** Resolves once a transaction waits for the change feed's head row, or rejects when `stop` aborts. */
async function feedLockWaiter(database: DatabaseHandle, stop: AbortSignal): Promise<void> {
  while (!stop.aborted) {
    const { rows } = await sql<{ waiting: number | string }>`select count(*) as waiting
      from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and query like '%change_feed_head%'`.execute(
      database.db,
    );
    if (Number(rows[0]?.waiting) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('stopped');
}

const postgresOnly =
  testDatabase === 'postgres'
    ? false
    : 'several registry processes share one database only on PostgreSQL (the postgres pass runs this)';

describe('the change feed across two registry processes on one PostgreSQL', { skip: postgresOnly }, () => {
  let testDb: TestDatabase;
  let database: DatabaseHandle;
  let a: RegistryProcess;
  let b: RegistryProcess;

  /** What a mirror must end with: every active agent as GET /api/agents/{did} shows it, minus the live members and provenance. */
  const activeProfiles = async (): Promise<Map<string, Record<string, unknown>>> => {
    const rows = await database.db
      .selectFrom('agents')
      .select('did')
      .where('status', '=', 'active')
      .execute();
    const profiles = new Map<string, Record<string, unknown>>();
    for (const { did } of rows) {
      const response = await http(a, 'GET', agentUrl(did));
      assert.equal(response.status, 200);
      // The feed carries what the agent published; its measured record and availability are live.
      delete response.body.service_record;
      delete response.body.availability;
      // A change carries its provenance beside the profile, not in it.
      delete response.body.provenance;
      profiles.set(did, response.body);
    }
    return profiles;
  };

  before(async () => {
    testDb = await createTestDatabase();
    // A fresh database of this file's own: nothing shared is restarted.
    [a, b] = await Promise.all([
      startRegistryProcess({
        DATABASE_URL: testDb.url,
        PUBLIC_URL: TEST_PUBLIC_URL,
        REVIEW_RATE_LIMIT: '1000',
      }),
      startRegistryProcess({
        DATABASE_URL: testDb.url,
        PUBLIC_URL: TEST_PUBLIC_URL,
        REVIEW_RATE_LIMIT: '1000',
      }),
    ]);
    database = openDatabase(loadConfig({ DATABASE_URL: testDb.url, PUBLIC_URL: TEST_PUBLIC_URL }).database);
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await database?.close();
    await testDb?.drop();
  });

  test('both nodes writing at once: a mirror following through both ends with exactly the active set', async () => {
    const agents: Agent[] = [];
    for (const [index, node] of [a, b, a, b, a, b].entries())
      agents.push(await registerOn(node, `Seed ${index}`));
    const mirror = new Mirror();
    await mirror.drain(via(a));

    /** Every kind of public write, on one node, often to an agent registered through the other. */
    const writer = async (node: RegistryProcess, label: string) => {
      for (let round = 0; round < 18; round += 1) {
        const agent = await registerOn(node, `${label} ${round}`);
        agents.push(agent);
        const others = agents.filter((candidate) => candidate.did !== agent.did);
        const other = others[(round * 5 + label.length) % others.length] as Agent;
        const writes = [
          http(node, 'PUT', agentUrl(other.did), other.token, { description: `${label} round ${round}` }),
        ];
        if (round % 3 === 1)
          writes.push(http(node, 'POST', '/api/reviews', agent.token, { target_did: other.did, rating: 8 }));
        if (round % 4 === 2)
          writes.push(
            http(node, 'PUT', agentUrl(agent.did, '/invocation'), agent.token, {
              enabled: true,
              delivery_mode: 'queue',
            }),
          );
        if (round % 5 === 4) writes.push(http(node, 'DELETE', agentUrl(other.did), other.token));
        // Written at once: several transactions of one node also contend for the feed's head row.
        for (const response of await Promise.all(writes)) {
          // 401 and 404: the other node deactivated this agent first.
          assert.ok([200, 201, 401, 404].includes(response.status), JSON.stringify(response.body));
        }
      }
    };

    let writing = true;
    let pagesWhileWriting = 0;
    const reader = (async () => {
      for (let turn = 0; writing; turn += 1) {
        await mirror.drain(via(turn % 2 === 0 ? a : b), 3);
        pagesWhileWriting += 1;
      }
    })();
    // Both writers run to their end even when one fails, so none outlives this test.
    const written = await Promise.allSettled([writer(a, 'Node A'), writer(b, 'Node B')]);
    writing = false;
    await reader;
    for (const outcome of written) if (outcome.status === 'rejected') throw outcome.reason;
    assert.ok(pagesWhileWriting > 1, 'the mirror read while the nodes wrote');
    await mirror.drain(via(b));

    const expected = await activeProfiles();
    assert.ok(expected.size < agents.length, 'some agents were deactivated');
    assert.deepEqual([...mirror.agents.keys()].sort(), [...expected.keys()].sort());
    for (const [did, profile] of expected) assert.deepEqual(mirror.agents.get(did), profile, did);
  });

  test('a change that commits late is not skipped: changes numbered after it wait for its commit', async () => {
    const early = await registerOn(a, 'Held Kestrel');
    const late = await registerOn(b, 'Waiting Merlin');
    const mirror = new Mirror();
    await mirror.drain(via(a), 1000);
    const caughtUp = mirror.seen.length;

    // A transaction that changes one agent and takes its number, then stays open: a slow commit.
    // Its timestamp is a minute old, so a mirror ordering by updated_at would already be past it.
    const heldAt = Date.now() - 60_000;
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let stamped = (): void => undefined;
    const isStamped = new Promise<void>((resolve) => (stamped = resolve));
    const held = database.db.transaction().execute(async (trx) => {
      const changed = await updateActiveAgent(trx, early.did, { name: 'Held Kestrel', updated_at: heldAt });
      assert.ok(changed);
      await stampAgentChange(trx, early.did);
      stamped();
      await released;
    });
    const stopWatching = new AbortController();
    try {
      await Promise.race([isStamped, held]);
      // Another node changes another agent meanwhile.
      const later = http(b, 'PUT', agentUrl(late.did), late.token, { name: 'Merlin, renamed' });
      const winner = await Promise.race([
        later.then(() => 'the later write committed first'),
        feedLockWaiter(database, stopWatching.signal).then(() => 'the later write waits'),
      ]);
      assert.equal(winner, 'the later write waits');

      const position = mirror.cursor;
      assert.equal(await mirror.drain(via(a)), 0, 'node A shows nothing past the open transaction');
      assert.equal(await mirror.drain(via(b)), 0, 'node B shows nothing past the open transaction');
      assert.equal(mirror.cursor, position);

      release();
      await held;
      assert.equal((await later).status, 200);
    } finally {
      stopWatching.abort();
      release();
      await held.catch(() => undefined);
    }

    await mirror.drain(via(b));
    const news = mirror.seen.slice(caughtUp);
    const seen = news.map((change) => [change.did, change.profile?.name]);
    assert.deepEqual(seen, [
      [early.did, 'Held Kestrel'],
      [late.did, 'Merlin, renamed'],
    ]);
    const [first, second] = news;
    assert.ok((first?.updated_at ?? 0) < (second?.updated_at ?? 0), 'in commit order, not timestamp order');
  });
});
