import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { createTestDatabase, testDatabase } from '@agent-registry/testkit';
import { startRegistry } from '@agent-registry/testkit/in-process';
import { openDatabase } from '../../../src/db/connect.js';
import { transactionRunner } from '../../../src/db/group-commit.js';
import { migrateToLatest } from '../../../src/db/migrations/index.js';
import { loadConfig } from '../../../src/kernel/config.js';
import { insertAgentIn, updateAgentAndStamp } from '../../../src/modules/agents/agent-writes-store.js';
import { registeredAgentRow } from '../../support/database-fixtures.js';
import { hashLeaf, merkleRoot, splitBundle, verifyCheckpoint } from '../../support/tlog-verifier.js';

const AGENTS = 300;

test(`migration 019 keeps every log record and the log's root (${testDatabase})`, async () => {
  const database = await createTestDatabase();
  try {
    const config = loadConfig({ DATABASE_URL: database.url, PUBLIC_URL: 'http://localhost:8080' });
    const now = Date.now();
    const did = (i: number) => `did:web:localhost%3A8080:agent:${i.toString(16).padStart(32, '0')}`;
    const before = openDatabase(config.database);
    let logged: { seq: number; operation: string; record: string }[];
    try {
      await migrateToLatest(before.db, { until: '018-peer-follow-state' });
      // Records as the previous release wrote them: registrations, then an update of every third agent.
      await before.db.transaction().execute(async (trx) => {
        for (let i = 0; i < AGENTS; i += 1) {
          const key = i.toString(16).padStart(64, '0');
          await insertAgentIn(
            trx,
            registeredAgentRow(did(i), {
              public_key: key,
              key_id: `ed25519:${key}`,
              name: `Migrated Agent ${i}`,
              description: 'Logged before the upgrade',
              capabilities: JSON.stringify([{ type: 'mapping' }]),
              tags: JSON.stringify(['geo']),
              created_at: now,
              updated_at: now,
            }),
          );
        }
      });
      for (let i = 0; i < AGENTS; i += 3) {
        assert.ok(
          await updateAgentAndStamp(transactionRunner(before.db, before.dialect), did(i), {
            description: `Revised ${i}`,
            updated_at: now + 1,
          }),
        );
      }
      const records = async (db: typeof before.db) =>
        (
          await sql<{ seq: number | string; operation: string; record: string }>`
        select seq, operation, record from log_records order by seq`.execute(db)
        ).rows.map((row) => ({
          ...row,
          seq: Number(row.seq),
        }));
      logged = await records(before.db);
      assert.equal(logged.length, AGENTS + AGENTS / 3);

      await migrateToLatest(before.db);
      assert.deepEqual(await records(before.db), logged);
      if (testDatabase === 'sqlite') {
        // seq is the rowid: the table has no index of its own beside it.
        const indexes = await sql<{
          name: string;
        }>`select name from pragma_index_list('log_records')`.execute(before.db);
        assert.deepEqual(indexes.rows, []);
        const mismatched = await sql<{
          n: number;
        }>`select count(*) as n from log_records where rowid <> seq`.execute(before.db);
        assert.equal(Number(mismatched.rows[0]?.n), 0);
      }
    } finally {
      await before.close();
    }

    // A registry on the upgraded database serves the same log: every record a leaf, the root recomputed.
    const registry = await startRegistry({}, { database });
    try {
      const key = (await registry.app.inject({ method: 'GET', url: '/log/verifier-key' })).body.trim();
      const note = (await registry.app.inject({ method: 'GET', url: '/log/checkpoint' })).body;
      const checkpoint = verifyCheckpoint(note, key);
      assert.equal(checkpoint.size, logged.length);
      const entries: Uint8Array[] = [];
      for (let index = 0; index * 256 < checkpoint.size; index += 1) {
        const width = Math.min(256, checkpoint.size - index * 256);
        const path = `/log/tile/entries/${String(index).padStart(3, '0')}${width < 256 ? `.p/${width}` : ''}`;
        entries.push(...splitBundle((await registry.app.inject({ method: 'GET', url: path })).rawPayload));
      }
      assert.equal(
        Buffer.from(merkleRoot(entries)).toString('hex'),
        Buffer.from(checkpoint.root).toString('hex'),
      );
      assert.equal(
        new Set(entries.map((entry) => Buffer.from(hashLeaf(entry)).toString('hex'))).size,
        logged.length,
      );
      // And it goes on logging after the upgrade.
      assert.ok(
        await updateAgentAndStamp(registry.ctx.agentWrites, did(1), {
          description: 'After',
          updated_at: now + 2,
        }),
      );
      const after = verifyCheckpoint(
        (await registry.app.inject({ method: 'GET', url: '/log/checkpoint' })).body,
        key,
      );
      assert.equal(after.size, logged.length + 1);
    } finally {
      await registry.close();
    }
  } finally {
    await database.drop().catch(() => undefined);
  }
});
