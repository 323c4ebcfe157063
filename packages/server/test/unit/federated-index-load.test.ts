import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { testDatabase } from '@agent-registry/testkit';
import { ApiError } from '../../src/kernel/errors.js';
import { systemClock } from '../../src/kernel/clock.js';
import type { Db } from '../../src/db/connect.js';
import { FederatedIndex } from '../../src/modules/federation/federated-index.js';
import { putRemoteEntry } from '../../src/modules/federation/remote-entries-store.js';
import { ensureSource } from '../../src/modules/federation/remote-sources-store.js';
import { mirroredEntry, PEER } from '../support/remote-entries.js';
import { migratedTestDatabase } from '../support/database-fixtures.js';

/** Runs `during` with `table` renamed away, so that every read of it fails as a lost table would. */
async function withoutTable(table: string, during: () => Promise<void>): Promise<void> {
  await sql`alter table ${sql.table(table)} rename to ${sql.table(`${table}_away`)}`.execute(handle.db);
  try {
    await during();
  } finally {
    await sql`alter table ${sql.table(`${table}_away`)} rename to ${sql.table(table)}`.execute(handle.db);
  }
}

let handle: { db: Db; close(): Promise<void> };
const remoteDid = 'did:web:peer.example:agent:00112233445566778899aabbccddeeff';

before(async () => {
  handle = await migratedTestDatabase();
  await ensureSource(handle.db, { id: `peer:${PEER}`, kind: 'peer', url: PEER });
  await putRemoteEntry(
    handle.db,
    mirroredEntry(remoteDid, {
      name: 'Invoice Matcher',
      description: 'Matches invoices',
      capability: 'invoice_matching',
      tag: 'finance',
    }),
    1000,
  );
});
after(() => handle?.close());

test(`a federated index load that failed is started afresh by the next caller, not left half loaded (${testDatabase})`, async () => {
  const index = new FederatedIndex(handle.db, systemClock);
  // Failing while it reads the agents (the index half filled), then the remote entries (the agents in).
  for (const table of ['agents', 'remote_entries']) {
    await withoutTable(table, async () => {
      await assert.rejects(index.load(), (error: Error) => error.message.includes(table));
    });
    assert.equal(index.status().state, 'idle');
  }
  await index.load();
  assert.equal(index.status().state, 'ready');
  assert.equal(index.status().indexed, 1);
  await index.catchUp();
  assert.equal(index.index.size, 1);
  const [row] = await index.readRows([`peer:${PEER}#${remoteDid}`]);
  assert.equal(row?.name, 'Invoice Matcher');
  assert.deepEqual(index.index.firstMatchingByDid({ capability: 'invoice_matching' }, 10, new Set()), [
    `peer:${PEER}#${remoteDid}`,
  ]);
});

test(`a load stopped by the shutdown ends with 503 SHUTTING_DOWN, and no later load starts (${testDatabase})`, async () => {
  const index = new FederatedIndex(handle.db, systemClock);
  const loading = index.load();
  index.close();
  const refused = (error: unknown): boolean =>
    error instanceof ApiError && error.status === 503 && error.code === 'SHUTTING_DOWN';
  await assert.rejects(loading, refused);
  await assert.rejects(index.catchUp(), refused);
  assert.equal(index.status().state, 'idle');
});
