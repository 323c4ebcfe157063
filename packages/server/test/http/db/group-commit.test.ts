import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GroupCommit } from '../../../src/db/group-commit.js';
import { isUniqueViolation } from '../../../src/db/errors.js';
import { insertAgentIn, updateAgentAndStamp } from '../../../src/modules/agents/agent-writes-store.js';
import type { RegisteredAgentRow } from '../../../src/modules/agents/agents-store.js';
import { readChangeHead } from '../../../src/modules/agents/change-feed-store.js';
import { migratedTestDatabase, registeredAgentRow } from '../../support/database-fixtures.js';
import {
  TEST_PUBLIC_URL,
  agentPath,
  bearer,
  defaultProfile,
  ed25519Agent,
  registrationBody,
  testDatabase,
  type TestAgent,
} from '@agent-registry/testkit';
import { register, startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';

/**
 * Concurrent registrations over a listening server. On SQLite they share transactions (group commit,
 * a savepoint each); a registration that fails inside a group must fail alone and leave nothing.
 */
describe('concurrent registrations (group commit on SQLite)', () => {
  let registry: TestRegistry;
  let origin: string;
  before(async () => {
    registry = await startRegistry();
    origin = await registry.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => registry.close());

  const post = async (body: Record<string, unknown>) => {
    const response = await fetch(`${origin}/api/agents/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  /**
   * Posts every body at once. On SQLite the connection is held by a transaction of the test's own until
   * every registration has reached the group commit: whether requests arrive in one turn of the event
   * loop is up to the network; this way all but those of the first group (already waiting for the
   * connection) queue for the next one.
   */
  const postBurst = async (bodies: Record<string, unknown>[]) => {
    if (testDatabase !== 'sqlite') return Promise.all(bodies.map(post));
    const writes = registry.ctx.agentWrites;
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding = (): void => undefined;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const holder = registry.ctx.database.db.transaction().execute(async () => {
      holding();
      await released;
    });
    await held;
    const expected = writes.received + bodies.length;
    const answers = Promise.all(bodies.map(post));
    while (writes.received < expected) await new Promise((resolve) => setTimeout(resolve, 5));
    release();
    await holder;
    return answers;
  };
  const bodyFor = (agent: TestAgent, name: string) =>
    registrationBody(agent, { ...defaultProfile(), name }, registry.clock.now(), {
      audience: TEST_PUBLIC_URL,
    });

  test('a duplicate key inside a group gets 409 alone; every other registration is stored and answered', async () => {
    const existing = await register(registry);
    const twice = ed25519Agent();
    const fresh = Array.from({ length: 24 }, () => ed25519Agent());
    const bodies = [
      ...(await Promise.all(fresh.map((agent, index) => bodyFor(agent, `Fresh ${index}`)))),
      await bodyFor(existing.agent, 'Existing again'),
      await bodyFor(twice, 'Twice A'),
      await bodyFor(twice, 'Twice B'),
      await bodyFor(existing.agent, 'Existing once more'),
    ];
    // Interleaved, so the failing rows sit between succeeding ones in a group.
    const order = bodies
      .map((_, index) => index)
      .sort((a, b) => ((a * 7) % bodies.length) - ((b * 7) % bodies.length));
    const sent = await postBurst(order.map((index) => bodies[index] as Record<string, unknown>));
    const answers = new Array<{ status: number; json: Record<string, unknown> }>(bodies.length);
    order.forEach((index, position) => (answers[index] = sent[position]!));

    const freshAnswers = answers.slice(0, fresh.length);
    for (const answer of freshAnswers) assert.equal(answer.status, 201, JSON.stringify(answer.json));
    const [existingAgain, twiceA, twiceB, existingOnceMore] = answers.slice(fresh.length);
    assert.equal(existingAgain?.status, 409);
    assert.equal(existingAgain?.json.code, 'PUBLIC_KEY_EXISTS');
    assert.equal(existingOnceMore?.status, 409);
    assert.deepEqual([twiceA?.status, twiceB?.status].sort(), [201, 409]);
    if (testDatabase === 'sqlite') {
      assert.ok(registry.ctx.agentWrites.largestGroup > 1, 'registrations shared a transaction');
    }

    // Every 201 was committed: readable, its token accepted, in the change feed; the 409s left nothing.
    const stored = [...freshAnswers, twiceA?.status === 201 ? twiceA : twiceB];
    for (const answer of stored) {
      const did = answer?.json.did as string;
      const profile = await registry.app.inject({ url: agentPath(did) });
      assert.equal(profile.statusCode, 200);
      const renamed = await registry.app.inject({
        method: 'PUT',
        url: agentPath(did),
        headers: bearer(answer?.json.token as string),
        payload: { description: 'still here' },
      });
      assert.equal(renamed.statusCode, 200, renamed.body);
    }
    const { db } = registry.ctx.database;
    const byKey = async (agent: TestAgent) =>
      (await db.selectFrom('agents').select('did').where('public_key', '=', agent.publicKey).execute())
        .length;
    assert.equal(await byKey(existing.agent), 1);
    assert.equal(await byKey(twice), 1);
    const stamped = await db
      .selectFrom('agents')
      .select('change_seq')
      .where(
        'did',
        'in',
        stored.map((answer) => answer?.json.did as string),
      )
      .execute();
    assert.equal(stamped.length, stored.length);
    assert.ok(stamped.every((row) => row.change_seq !== null));
    assert.equal(new Set(stamped.map((row) => Number(row.change_seq))).size, stored.length);
    // Every stored agent is in the next search (the index follows the change feed).
    const found = await registry.app.inject({ url: '/api/agents/search?q=fresh&limit=100' });
    const foundDids = new Set(found.json<{ agents: { did: string }[] }>().agents.map((agent) => agent.did));
    for (const answer of freshAnswers) assert.ok(foundDids.has(answer.json.did as string), 'in the search');
  });
});

describe('profile updates through the shared transaction runner', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry();
  });
  after(() => registry.close());

  test('concurrent updates are each answered with their own change, stamped once and logged once', async () => {
    const editors = [];
    for (let i = 0; i < 12; i += 1) editors.push(await register(registry));
    const writes = registry.ctx.agentWrites;
    const receivedBefore = writes.received;
    const headBefore = await readChangeHead(registry.ctx.database.db);
    const logSize = async () =>
      Number((await registry.app.inject({ url: '/log/checkpoint' })).body.split('\n')[1]);
    const logBefore = await logSize();
    const answers = await Promise.all(
      editors.map((editor, index) =>
        registry.app.inject({
          method: 'PUT',
          url: agentPath(editor.did),
          headers: bearer(editor.token),
          payload: { description: `Edited in a burst, number ${index}` },
        }),
      ),
    );
    answers.forEach((answer, index) => {
      assert.equal(answer.statusCode, 200, answer.body);
      assert.equal(answer.json().description, `Edited in a burst, number ${index}`);
    });
    assert.equal(writes.received, receivedBefore + editors.length, 'every update went through the runner');
    assert.equal(await readChangeHead(registry.ctx.database.db), headBefore + editors.length);
    assert.equal(await logSize(), logBefore + editors.length);
    for (const [index, editor] of editors.entries()) {
      const profile = await registry.app.inject({ url: agentPath(editor.did) });
      assert.equal(profile.json().description, `Edited in a burst, number ${index}`);
    }
  });
});

/** A registration's row with a short id and key (padded as DIDs and keys are). */
function agentRow(id: string, key: string): RegisteredAgentRow {
  return registeredAgentRow(`did:web:localhost%3A8080:agent:${id.padStart(32, '0')}`, {
    public_key: key.padStart(64, '0'),
    key_id: `ed25519:${key.padStart(64, '0')}`,
    name: `Agent ${id}`,
  });
}

test('one group, one transaction: failing units leave nothing, the others commit with feed numbers in order', async () => {
  const { db, close } = await migratedTestDatabase({ PUBLIC_URL: TEST_PUBLIC_URL });
  try {
    await insertAgentIn(db, agentRow('1', 'a1'));
    const headBefore = await readChangeHead(db);
    const group = new GroupCommit(db);
    class Refused extends Error {}
    // Queued in one turn of the event loop: they share the next transaction, a savepoint each.
    const outcomes = await Promise.allSettled([
      group.run((trx) => insertAgentIn(trx, agentRow('2', 'b2'))),
      group.run((trx) => insertAgentIn(trx, agentRow('3', 'a1'))), // the key of agent 1
      group.run((trx) => insertAgentIn(trx, agentRow('4', 'c4'))),
      group.run(async (trx) => {
        await insertAgentIn(trx, agentRow('5', 'd5'));
        throw new Refused('after its insert'); // its insert must be rolled back with it
      }),
      group.run((trx) => insertAgentIn(trx, agentRow('6', 'c4'))), // the key of agent 4, same group
      group.run((trx) => insertAgentIn(trx, agentRow('7', 'e7'))),
    ]);
    assert.equal(group.largestGroup, 6, 'all six shared one transaction');
    assert.deepEqual(
      outcomes.map((outcome) => outcome.status),
      ['fulfilled', 'rejected', 'fulfilled', 'rejected', 'rejected', 'fulfilled'],
    );
    const reason = (index: number) => (outcomes[index] as PromiseRejectedResult).reason;
    assert.ok(isUniqueViolation(reason(1)));
    assert.ok(reason(3) instanceof Refused);
    assert.ok(isUniqueViolation(reason(4)));

    const rows = await db.selectFrom('agents').select(['name', 'change_seq']).orderBy('change_seq').execute();
    assert.deepEqual(
      rows.map((row) => row.name),
      ['Agent 1', 'Agent 2', 'Agent 4', 'Agent 7'],
    );
    // Each stored unit took the next number; failed units took none (or left no trace of one).
    const seqs = rows.slice(1).map((row) => Number(row.change_seq));
    assert.deepEqual(seqs, [headBefore + 1, headBefore + 2, headBefore + 3]);
    assert.equal(await readChangeHead(db), headBefore + 3);
  } finally {
    await close();
  }
});

test('updates in one group: each stamped and logged in order, an update of no active agent changes nothing', async () => {
  const { db, close } = await migratedTestDatabase({ PUBLIC_URL: TEST_PUBLIC_URL });
  try {
    for (const id of ['1', '2', '3']) await insertAgentIn(db, agentRow(id, `k${id}`));
    const headBefore = await readChangeHead(db);
    const group = new GroupCommit(db);
    const did = (id: string) => agentRow(id, `k${id}`).did;
    const outcomes = await Promise.all([
      updateAgentAndStamp(group, did('1'), { description: 'first', updated_at: 2 }),
      updateAgentAndStamp(group, did('9'), { description: 'nobody', updated_at: 2 }),
      updateAgentAndStamp(group, did('3'), { description: 'third', updated_at: 2 }),
      updateAgentAndStamp(group, did('2'), { description: 'second', updated_at: 2 }),
    ]);
    assert.equal(group.largestGroup, 4, 'all four shared one transaction');
    assert.deepEqual(outcomes, [true, false, true, true]);
    const logged = await db
      .selectFrom('log_records')
      .select(['seq', 'operation', 'record'])
      .where('seq', '>', headBefore)
      .orderBy('seq')
      .execute();
    assert.deepEqual(
      logged.map((row) => [Number(row.seq), row.operation, JSON.parse(row.record).description]),
      [
        [headBefore + 1, 'update', 'first'],
        [headBefore + 2, 'update', 'third'],
        [headBefore + 3, 'update', 'second'],
      ],
    );
    assert.equal(await readChangeHead(db), headBefore + 3);
  } finally {
    await close();
  }
});
