import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import {
  checkFollowState,
  followStateFromStored,
  followStateOf,
  hashLeaf,
  toBase64,
} from '@agent-registry/protocol';
import { loadConfig } from '../../src/kernel/config.js';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrations/index.js';
import { createTestDatabase, testDatabase } from '@agent-registry/testkit';

test(`migration 018 turns a peer's stored leaf hashes into the compact range that follows on (${testDatabase})`, async () => {
  const database = await createTestDatabase();
  const handle = openDatabase(loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'silent' }).database);
  try {
    await migrateToLatest(handle.db, { until: '017-federation' });
    const leafHashes = Array.from({ length: 300 }, (_, i) => hashLeaf(new TextEncoder().encode(`leaf ${i}`)));
    const verified = followStateOf(leafHashes);
    const resumed = { by: 'ops', at: 5, reason: 'no longer followed: forked log' };
    const cursors: [string, string, string | null][] = [
      [
        'peer:https://a.example',
        'peer',
        JSON.stringify({
          key: 'a.example/log+00000000+AQ',
          size: 300,
          root: verified.root,
          leaf_hashes: leafHashes.map(toBase64),
          origin: 'a.example/log',
          resumed,
        }),
      ],
      // A cursor an operator's resume left (no tree yet), and an import source's cursor: kept as they are.
      ['peer:https://b.example', 'peer', JSON.stringify({ resumed })],
      ['mcp:https://c.example', 'mcp-registry', '{"next":"abc"}'],
      ['peer:https://d.example', 'peer', null],
    ];
    for (const [id, kind, cursor] of cursors) {
      await sql`insert into remote_sources (id, kind, url, state, cursor)
        values (${id}, ${kind}, ${id.replace(/^\w+:/, '')}, 'ok', ${cursor})`.execute(handle.db);
    }
    await migrateToLatest(handle.db);
    const rows = await sql<{ id: string; cursor: string | null }>`
      select id, cursor from remote_sources order by id`.execute(handle.db);
    const after = new Map(rows.rows.map((row) => [row.id, row.cursor]));
    const migrated = JSON.parse(after.get('peer:https://a.example') ?? 'null') as Record<string, unknown>;
    assert.equal(migrated.leaf_hashes, undefined);
    assert.equal(migrated.key, 'a.example/log+00000000+AQ');
    assert.equal(migrated.origin, 'a.example/log');
    assert.deepEqual(migrated.resumed, resumed);
    const state = followStateFromStored(migrated);
    checkFollowState(state);
    assert.deepEqual(state, verified);
    assert.equal(state.range.length, 4);
    assert.equal(state.partialBundle.length, 44);
    for (const [id, , cursor] of cursors.slice(1)) assert.equal(after.get(id), cursor, id);
  } finally {
    await handle.close();
    await database.drop();
  }
});
