import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { agentPath, bearer, testDatabase } from '@agent-registry/testkit';
import { register, startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';

/** More watchers than one insert statement could carry on either dialect (seven parameters a delivery). */
const WATCHERS = 10_000;

describe(`an agent watched by ${WATCHERS} agents (${testDatabase})`, () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry(
      {
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WATCH_MAX_PER_TARGET: String(WATCHERS),
        WATCH_MAX_PER_TICK: '1',
      },
      { manualWatches: true },
    );
  });
  after(async () => {
    await registry.close();
  });

  test('one change queues a delivery for each watcher, and the follower moves on', async () => {
    const { db } = registry.ctx.database;
    const target = await register(registry);
    const now = registry.clock.now();
    const watches = Array.from({ length: WATCHERS }, (_, index) => ({
      id: `wat_fanout${index}`,
      owner_did: `did:web:example.com:agent:${randomBytes(16).toString('hex')}`,
      target: target.did,
      // The discard port: nothing listens, each attempt fails and is retried later.
      url: 'http://127.0.0.1:9/hook',
      secret: `whsec_${randomBytes(24).toString('base64')}`,
      events: '["agent.updated"]',
      created_at: now,
      deleted_at: null,
    }));
    for (let start = 0; start < watches.length; start += 500)
      await db
        .insertInto('watches')
        .values(watches.slice(start, start + 500))
        .execute();
    await registry.ctx.watchJobs.runOnce();

    const updated = await registry.app.inject({
      method: 'PUT',
      url: agentPath(target.did),
      headers: bearer(target.token),
      payload: { description: 'Watched by many' },
    });
    assert.equal(updated.statusCode, 200, updated.body);
    await registry.ctx.watchJobs.runOnce();
    const queued = await db
      .selectFrom('watch_deliveries')
      .select(sql<number>`count(distinct watch_id)`.as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(queued.n), WATCHERS);
    const cursor = await db.selectFrom('watch_cursor').select('seq').executeTakeFirstOrThrow();
    const head = await db
      .selectFrom('log_records')
      .select(sql<number>`max(seq)`.as('seq'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(cursor.seq), Number(head.seq));
  });
});
