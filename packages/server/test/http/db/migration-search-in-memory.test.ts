import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Migrator, sql } from 'kysely';
import { openDatabase } from '../../../src/db/connect.js';
import { loadConfig } from '../../../src/kernel/config.js';
import * as core from '../../../src/db/migrations/001-core.js';
import * as tasks from '../../../src/db/migrations/002-tasks.js';
import * as discovery from '../../../src/db/migrations/003-discovery.js';
import * as searchActiveOnly from '../../../src/db/migrations/004-search-active-only.js';
import * as usedSignatures from '../../../src/db/migrations/005-used-signatures.js';
import * as invocationIdempotency from '../../../src/db/migrations/006-invocation-idempotency.js';
import * as trust from '../../../src/db/migrations/007-trust.js';
import * as changeFeed from '../../../src/db/migrations/008-change-feed.js';
import { createTestDatabase, testDatabase } from '@agent-registry/testkit';
import { startRegistry } from '@agent-registry/testkit/in-process';
import { registeredAgentRow } from '../../support/database-fixtures.js';

const BEFORE_009 = {
  '001-core': core,
  '002-tasks': tasks,
  '003-discovery': discovery,
  '004-search-active-only': searchActiveOnly,
  '005-used-signatures': usedSignatures,
  '006-invocation-idempotency': invocationIdempotency,
  '007-trust': trust,
  '008-change-feed': changeFeed,
};

test(`migration 009 drops the SQL search structures and keeps every agent findable (${testDatabase})`, async () => {
  const database = await createTestDatabase();
  try {
    const config = loadConfig({ DATABASE_URL: database.url, PUBLIC_URL: 'http://localhost:8080' });
    const before = openDatabase(config.database);
    const migrator = new Migrator({
      db: before.db,
      provider: { getMigrations: async () => BEFORE_009 },
    });
    assert.equal((await migrator.migrateToLatest()).error, undefined);
    // An agent as a node of the previous version stored it: the row, its side-table rows, its feed number.
    const now = Date.now();
    const did = `did:web:localhost%3A8080:agent:${'ab'.repeat(16)}`;
    await before.db
      .insertInto('agents')
      .values({
        ...registeredAgentRow(did, {
          public_key: 'ab'.repeat(32),
          key_id: `ed25519:${'ab'.repeat(32)}`,
          name: 'Veteran Cartographer',
          description: 'Draws maps',
          capabilities: JSON.stringify([{ type: 'mapping', description: 'Topographic surveys' }]),
          tags: JSON.stringify(['geo']),
          created_at: now,
          updated_at: now,
        }),
        change_seq: 1,
      })
      .execute();
    await sql`insert into agent_capabilities (did, type) values (${did}, 'mapping')`.execute(before.db);
    await sql`insert into agent_tags (did, tag) values (${did}, 'geo')`.execute(before.db);
    await sql`update change_feed_head set seq = 1`.execute(before.db);
    await before.close();

    const registry = await startRegistry({}, { database });
    try {
      const tables = (await registry.ctx.database.db.introspection.getTables()).map((table) => table.name);
      for (const dropped of ['agents_fts', 'agents_fts_ids', 'agent_capabilities', 'agent_tags']) {
        assert.ok(!tables.includes(dropped), `${dropped} is dropped`);
      }
      const indexes =
        testDatabase === 'sqlite'
          ? await sql<{ name: string }>`select name from sqlite_master where type = 'index'`.execute(
              registry.ctx.database.db,
            )
          : await sql<{ name: string }>`select indexname as name from pg_indexes`.execute(
              registry.ctx.database.db,
            );
      const names = indexes.rows.map((row) => row.name);
      assert.ok(!names.includes('agents_did_search_idx'));
      assert.ok(!names.includes('agents_status_reputation_idx'));
      assert.ok(names.includes('agents_service_calls_idx'));
      assert.ok(names.includes('agents_service_last_completed_idx'));
      for (const query of ['q=topographic', 'capability=mapping', 'tags=geo', 'sort=success_rate']) {
        const response = await registry.app.inject({ url: `/api/agents/search?${query}` });
        assert.equal(response.statusCode, 200, response.body);
        assert.deepEqual(
          response.json<{ agents: { did: string }[] }>().agents.map((agent) => agent.did),
          [did],
          query,
        );
      }
    } finally {
      await registry.close();
    }
  } finally {
    await database.drop();
  }
});
