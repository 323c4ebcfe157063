import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompiledQuery } from 'kysely';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrations/index.js';
import {
  agentsByServiceRecordQuery,
  creationOrderQuery,
  readSearchRows,
  searchRowsQuery,
} from '../../src/modules/search/agent-search-store.js';
import { changedAfterQuery } from '../../src/modules/search/search-follower.js';
import { listPendingTasks, pendingTasksSql } from '../../src/modules/tasks/task-queue-store.js';
import { agentTableRow } from '../support/database-fixtures.js';
import { createTestDatabase, testDatabase } from '@agent-registry/testkit';

const agentRow = (did: string, status: 'active' | 'deactivated') => agentTableRow(did, { status });

/** A fresh database of the kind under test, migrated; close the handle and drop the database after. */
async function migratedDatabase() {
  const database = await createTestDatabase();
  const handle = openDatabase(
    testDatabase === 'sqlite'
      ? { kind: 'sqlite', path: database.file as string }
      : {
          kind: 'postgres',
          url: database.url,
          poolSize: 2,
          statementTimeoutMs: 10_000,
          connectTimeoutMs: 3_000,
        },
  );
  await migrateToLatest(handle.db);
  return { handle, database };
}

// A search page reads its rows by DID. SQLite's planner once took the (status, created_at) index for
// `did in (...) and status = 'active'` and scanned every active agent per page (bench/RESULTS.md).
test('a search page reads its rows through the DID index, and leaves inactive agents out', async () => {
  const { handle, database } = await migratedDatabase();
  try {
    const dids = Array.from(
      { length: 400 },
      (_, index) => `did:web:x:agent:${String(index).padStart(4, '0')}`,
    );
    await handle.db
      .insertInto('agents')
      .values(dids.map((did, index) => agentRow(did, index % 7 === 0 ? 'deactivated' : 'active')))
      .execute();
    const page = [dids[5], dids[7], dids[3], dids[14], dids[2]] as string[];
    const rows = await readSearchRows(handle.db, page);
    assert.deepEqual(
      rows.map((row) => row.did),
      [dids[5], dids[3], dids[2]],
      'the page keeps its order and drops the deactivated agents (7 and 14)',
    );

    if (testDatabase === 'sqlite') {
      const compiled = searchRowsQuery(handle.db, page).compile();
      const { rows: steps } = await handle.db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
      );
      const plan = steps.map((step) => step.detail).join('\n');
      assert.match(plan, /USING (COVERING )?INDEX sqlite_autoindex_agents_\d \(did=\?\)/, plan);
      assert.doesNotMatch(plan, /agents_status/, plan);
    }
  } finally {
    await handle.close();
    await database.drop();
  }
});

// A worker's poll reads its own pending tasks. Without statistics SQLite's planner took the
// (status, deadline_at) index and read every agent's pending tasks: one agent's backlog slowed all polls.
test("a worker's poll reads its own pending tasks through the pending-tasks index, already in order", async () => {
  const { handle, database } = await migratedDatabase();
  try {
    await handle.db
      .insertInto('agents')
      .values([agentRow('did:web:x:agent:a', 'active'), agentRow('did:web:x:agent:b', 'active')])
      .execute();
    const task = (id: string, target: string, createdAt: number, deadlineAt: number) => ({
      id,
      caller_did: 'did:web:x:agent:a',
      target_did: target,
      capability: 'general',
      input: '{}',
      status: 'pending' as const,
      delivery_mode: 'queue' as const,
      created_at: createdAt,
      deadline_at: deadlineAt,
    });
    await handle.db
      .insertInto('tasks')
      .values([
        task('t1', 'did:web:x:agent:b', 3, 100),
        task('t2', 'did:web:x:agent:b', 1, 100),
        task('t3', 'did:web:x:agent:b', 2, 5),
        task('t4', 'did:web:x:agent:a', 1, 100),
      ])
      .execute();
    const pending = await listPendingTasks(handle.db, 'did:web:x:agent:b', 10, 10);
    assert.deepEqual(
      pending.map((row) => row.id),
      ['t2', 't1'],
      "oldest first, this agent's only, the expired one (t3) left out",
    );
    if (testDatabase === 'sqlite') {
      const text = pendingTasksSql(handle.db, 10);
      const { rows: steps } = await handle.db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${text}`, ['did:web:x:agent:b', 10, 10]),
      );
      const plan = steps.map((step) => step.detail).join('\n');
      assert.match(plan, /USING INDEX tasks_pending_idx \(target_did=\?\)/, plan);
      assert.doesNotMatch(plan, /TEMP B-TREE/, `the index gives the poll's order, no sort: ${plan}`);
    }
  } finally {
    await handle.close();
    await database.drop();
  }
});

// Loading the search index and the service-record searches read agents by change number and through
// the partial indexes. With `status = 'active'` in SQL, SQLite's planner took the (status, created_at)
// index: the index load sorted every active agent per batch (minutes at 1,000,000 agents).
// SQLite in memory on either pass: the planner without statistics is the one checked.
test('the index load and the service-record searches use their own indexes, not the status index', async () => {
  const handle = openDatabase({ kind: 'sqlite', path: ':memory:' });
  try {
    await migrateToLatest(handle.db);
    const planOf = async (query: { compile(): { sql: string; parameters: readonly unknown[] } }) => {
      const compiled = query.compile();
      const { rows: steps } = await handle.db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
      );
      return steps.map((step) => step.detail).join('\n');
    };
    const load = await planOf(changedAfterQuery(handle.db, 0));
    assert.match(load, /USING INDEX agents_change_seq_idx \(change_seq>\?\)/, load);
    assert.doesNotMatch(load, /TEMP B-TREE/, load);
    for (const filter of [
      {},
      { minSuccessRate: 0.5 },
      { activeSince: 1 },
      { sort: { sort: 'latency' as const, order: 'asc' as const } },
    ]) {
      const plan = await planOf(agentsByServiceRecordQuery(handle.db, filter));
      assert.match(plan, /USING INDEX agents_service_(calls|last_completed)_idx/, plan);
    }
    // ARD's filtered listing reads one range of the status index in creation order, never the table.
    for (const options of [
      { limit: 10 },
      { createdAfter: 5, limit: 10 },
      { createdAfter: 5, after: { createdAt: 7, did: 'did:web:x:agent:1' }, limit: 10 },
    ]) {
      const plan = await planOf(creationOrderQuery(handle.db, options));
      assert.match(plan, /SEARCH agents USING INDEX agents_status_created_idx \(status=\?/, plan);
      assert.doesNotMatch(plan, /SCAN agents/, plan);
    }
  } finally {
    await handle.close();
  }
});
