import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { checkProfileAgainstLeaf, verifyLogProof, type LogProof } from '@agent-registry/protocol';
import { createTestDatabase, testDatabase } from '@agent-registry/testkit';
import { startRegistry } from '@agent-registry/testkit/in-process';
import { openDatabase } from '../../../src/db/connect.js';
import { transactionRunner } from '../../../src/db/group-commit.js';
import { MIGRATIONS, migrateToLatest } from '../../../src/db/migrations/index.js';
import { up as logEveryAgent } from '../../../src/db/migrations/022-log-every-agent.js';
import { loadConfig } from '../../../src/kernel/config.js';
import { insertAgentIn, updateAgentAndStamp } from '../../../src/modules/agents/agent-writes-store.js';
import { agentTableRow, registeredAgentRow } from '../../support/database-fixtures.js';

const BEFORE_LOG = 150;
const AFTER_LOG = 5;
const MIGRATION = '022-log-every-agent';
const previous = (name: string): string => {
  const index = MIGRATIONS.findIndex(([known]) => known === name);
  const before = MIGRATIONS[index - 1];
  assert.ok(before !== undefined, `${name} is listed after another migration`);
  return before[0];
};

test(`migration 022 logs every agent older than the log, once, so each one verifies (${testDatabase})`, async () => {
  const database = await createTestDatabase();
  try {
    const config = loadConfig({ DATABASE_URL: database.url, PUBLIC_URL: 'http://localhost:8080' });
    const did = (i: number) => `did:web:localhost%3A8080:agent:${i.toString(16).padStart(32, '0')}`;
    const handle = openDatabase(config.database);
    const records = async () =>
      (
        await sql<{ seq: number | string; operation: string; record: string }>`
          select seq, operation, record from log_records order by seq`.execute(handle.db)
      ).rows.map((row) => ({ ...row, seq: Number(row.seq) }));
    let loggedBefore: Awaited<ReturnType<typeof records>>;
    try {
      // Agents of a release before the log: rows with their change numbers, and the head past them.
      await migrateToLatest(handle.db, { until: '013-availability' });
      for (let i = 0; i < BEFORE_LOG; i += 1) {
        await handle.db
          .insertInto('agents')
          .values({
            ...agentTableRow(did(i), {
              public_key: i.toString(16).padStart(64, '0'),
              name: `Old Agent ${i}`,
              description: `Registered before the log ${i}`,
              capabilities: JSON.stringify([{ type: 'mapping' }]),
              tags: JSON.stringify(['geo']),
              status: i === 7 ? 'deactivated' : 'active',
              created_at: 1_700_000_000_000 + i,
              updated_at: 1_700_000_000_000 + i,
            }),
            change_seq: BEFORE_LOG - i,
          })
          .execute();
      }
      await sql`update change_feed_head set seq = ${BEFORE_LOG} where id = 1`.execute(handle.db);

      // The log begins; some agents register after it, one old agent changes (it is logged already).
      await migrateToLatest(handle.db, { until: previous(MIGRATION) });
      await handle.db.transaction().execute(async (trx) => {
        for (let i = BEFORE_LOG; i < BEFORE_LOG + AFTER_LOG; i += 1) {
          const key = i.toString(16).padStart(64, '0');
          await insertAgentIn(trx, registeredAgentRow(did(i), { public_key: key, key_id: `ed25519:${key}` }));
        }
      });
      assert.ok(
        await updateAgentAndStamp(transactionRunner(handle.db, handle.dialect), did(3), {
          description: 'Changed after the log began',
          updated_at: 1_800_000_000_000,
        }),
      );
      loggedBefore = await records();
      assert.equal(loggedBefore.length, AFTER_LOG + 1);

      await migrateToLatest(handle.db);
      const after = await records();
      // The earlier records stay as they were; one new `update` record per agent not yet logged.
      assert.deepEqual(after.slice(0, loggedBefore.length), loggedBefore);
      const added = after.slice(loggedBefore.length);
      assert.equal(added.length, BEFORE_LOG - 1);
      assert.ok(added.every((row) => row.operation === 'update'));
      const addedDids = added.map((row) => (JSON.parse(row.record) as { did: string }).did);
      assert.equal(new Set(addedDids).size, BEFORE_LOG - 1);
      assert.ok(!addedDids.includes(did(3)));
      // In the order of their last change before the log (the highest number was agent 0's).
      assert.equal(addedDids[0], did(BEFORE_LOG - 1));
      assert.equal(addedDids[addedDids.length - 1], did(0));
      const seqs = after.map((row) => row.seq);
      assert.deepEqual(
        seqs,
        seqs.map((_, index) => seqs[0]! + index),
      );
      const head = await sql<{ seq: number | string }>`select seq from change_feed_head`.execute(handle.db);
      assert.equal(Number(head.rows[0]?.seq), seqs[seqs.length - 1]);

      // Run again (a node that finds the work done): nothing more is logged.
      await logEveryAgent(handle.db as unknown as Kysely<unknown>);
      assert.deepEqual(await records(), after);
    } finally {
      await handle.close();
    }

    // Every agent's proof verifies against the served profile, as `agent-registry verify` checks it.
    const registry = await startRegistry({}, { database });
    try {
      const key = (await registry.app.inject({ method: 'GET', url: '/log/verifier-key' })).body.trim();
      for (let i = 0; i < BEFORE_LOG + AFTER_LOG; i += 1) {
        const path = `/api/agents/${encodeURIComponent(did(i))}`;
        const proofAnswer = await registry.app.inject({ method: 'GET', url: `${path}/log-proof` });
        assert.equal(proofAnswer.statusCode, 200, `${did(i)}: ${proofAnswer.body}`);
        const { leaf } = verifyLogProof(proofAnswer.json<LogProof>(), key, did(i));
        assert.equal(leaf.op, i === 7 ? 'deactivate' : i >= BEFORE_LOG ? 'register' : 'update');
        const profile = await registry.app.inject({ method: 'GET', url: path });
        if (profile.statusCode === 200) checkProfileAgainstLeaf(profile.json<object>(), leaf, 0);
        else assert.equal(i, 7, `only the deactivated agent is not served: ${profile.body}`);
      }
    } finally {
      await registry.close();
    }
  } finally {
    await database.drop().catch(() => undefined);
  }
});
