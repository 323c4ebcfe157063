import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { test } from 'node:test';
import { compiledOnce } from '../../src/db/compiled.js';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrations/index.js';
import { agentTableRow } from '../support/database-fixtures.js';

const agentRow = (did: string, name: string) => agentTableRow(did, { name });

test('a compiled read never sees the rows of a transaction still open on the SQLite connection', async () => {
  const handle = openDatabase({ kind: 'sqlite', path: ':memory:' });
  try {
    await migrateToLatest(handle.db);
    const nameOf = compiledOnce(
      (db, did: string) => db.selectFrom('agents').select('name').where('did', '=', did),
      ['\u0000did'] as const,
    );
    await handle.db.insertInto('agents').values(agentRow('did:web:x:agent:1', 'Before')).execute();
    // Outside a transaction the read runs straight on the connection and sees committed rows.
    assert.deepEqual(await nameOf(handle.db, 'did:web:x:agent:1'), [{ name: 'Before' }]);
    let readDuringTransaction: Promise<{ name: string }[]> | undefined;
    await handle.db
      .transaction()
      .execute(async (trx) => {
        await trx
          .updateTable('agents')
          .set({ name: 'Uncommitted' })
          .where('did', '=', 'did:web:x:agent:1')
          .execute();
        await trx.insertInto('agents').values(agentRow('did:web:x:agent:2', 'Uncommitted')).execute();
        // Same connection: a direct read now would answer the uncommitted rows.
        readDuringTransaction = Promise.all([
          nameOf(handle.db, 'did:web:x:agent:1'),
          nameOf(handle.db, 'did:web:x:agent:2'),
        ]).then((rows) => rows.flat());
        throw new Error('roll back');
      })
      .catch(() => undefined);
    assert.deepEqual(await readDuringTransaction, [{ name: 'Before' }]);
  } finally {
    await handle.close();
  }
});

test('a query compiled once runs with each call’s own values, and refuses a parameter it does not own', async () => {
  const handle = openDatabase({ kind: 'sqlite', path: ':memory:' });
  try {
    await migrateToLatest(handle.db);
    const nameOf = compiledOnce(
      (db, did: string) => db.selectFrom('agents').select('name').where('did', '=', did),
      ['\u0000did'] as const,
    );
    assert.deepEqual(await nameOf(handle.db, 'did:web:nowhere:agent:0'), []);
    await handle.db.insertInto('agents').values(agentRow('did:web:x:agent:1', 'One')).execute();
    assert.deepEqual(await nameOf(handle.db, 'did:web:x:agent:1'), [{ name: 'One' }]);
    assert.deepEqual(await nameOf(handle.db, 'did:web:x:agent:2'), []);

    // A value written into the query itself would be a parameter the caller cannot see: refused.
    const hidden = compiledOnce(
      (db, did: string) =>
        db.selectFrom('agents').select('name').where('status', '=', 'active').where('did', '=', did),
      ['\u0000did'] as const,
    );
    await assert.rejects(hidden(handle.db, 'did:web:x:agent:1'), /parameters are not its placeholders/);
  } finally {
    await handle.close();
  }
});

// SQLite ran statements 10-20 µs slower with `LIMIT ?` bound (db/literal-limits.ts): the limit is
// written into the text there, the offset stays a parameter, and the rows are the same.
test('on SQLite a LIMIT is written into the statement, an OFFSET stays bound', async () => {
  const handle = openDatabase({ kind: 'sqlite', path: ':memory:' });
  try {
    await migrateToLatest(handle.db);
    for (const did of ['did:web:x:agent:a', 'did:web:x:agent:b', 'did:web:x:agent:c']) {
      await handle.db.insertInto('agents').values(agentTableRow(did)).execute();
    }
    const page = handle.db.selectFrom('agents').select('did').orderBy('did').limit(2).offset(1);
    const { sql, parameters } = page.compile();
    assert.match(sql, /limit 2 offset \?$/);
    assert.deepEqual(parameters, [1]);
    assert.deepEqual(
      (await page.execute()).map((row) => row.did),
      ['did:web:x:agent:b', 'did:web:x:agent:c'],
    );
  } finally {
    await handle.close();
  }
});

// Direct reads build row objects from raw values (db/connect.ts); the statement is shared with Kysely.
test('a direct read answers the same row objects as Kysely, and leaves the shared statement to Kysely as it was', async () => {
  const handle = openDatabase({ kind: 'sqlite', path: ':memory:' });
  try {
    await migrateToLatest(handle.db);
    await handle.db
      .insertInto('agents')
      .values({ ...agentRow('did:web:x:agent:1', 'Ünïcode 名前'), description: null })
      .execute();
    const everything = compiledOnce(
      (db, did: string) => db.selectFrom('agents').selectAll().where('did', '=', did),
      ['\u0000did'] as const,
    );
    const direct = await everything(handle.db, 'did:web:x:agent:1');
    const throughKysely = await handle.db
      .selectFrom('agents')
      .selectAll()
      .where('did', '=', 'did:web:x:agent:1')
      .execute();
    assert.equal(direct.length, 1);
    assert.deepEqual(direct, throughKysely);
    assert.deepEqual(Object.keys(direct[0] ?? {}), Object.keys(throughKysely[0] ?? {}));
    assert.equal(direct[0]?.description, null);
    assert.equal(direct[0]?.name, 'Ünïcode 名前');
    // The same SQL text through Kysely's driver, inside a transaction (so not direct): still objects.
    const sqlText = everything.sqlFor(handle.db);
    const inTransaction = await handle.db
      .transaction()
      .execute(async (trx) => (await everything(trx, 'did:web:x:agent:1'))[0]);
    assert.equal(inTransaction?.did, 'did:web:x:agent:1');
    assert.match(sqlText, /^select \* from "agents"/);
  } finally {
    await handle.close();
  }
});

test('direct reads of `select *` follow a schema change made on this connection or by another process', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'compiled-schema-'));
  const file = path.join(dir, 'registry.db');
  const handle = openDatabase({ kind: 'sqlite', path: file });
  const other = openDatabase({ kind: 'sqlite', path: file });
  try {
    await migrateToLatest(handle.db);
    await handle.db.insertInto('agents').values(agentRow('did:web:x:agent:1', 'One')).execute();
    const everything = compiledOnce(
      (db, did: string) => db.selectFrom('agents').selectAll().where('did', '=', did),
      ['\u0000did'] as const,
    );
    const [before] = (await everything(handle.db, 'did:web:x:agent:1')) as Record<string, unknown>[];
    assert.equal(before?.name, 'One');
    assert.equal('added_here' in (before ?? {}), false);

    await sql`alter table agents add column added_here text not null default 'here'`.execute(handle.db);
    const [afterOwn] = (await everything(handle.db, 'did:web:x:agent:1')) as Record<string, unknown>[];
    assert.equal(afterOwn?.added_here, 'here');
    assert.equal(afterOwn?.name, 'One');

    await sql`alter table agents add column added_elsewhere integer not null default 7`.execute(other.db);
    const [afterOther] = (await everything(handle.db, 'did:web:x:agent:1')) as Record<string, unknown>[];
    assert.equal(afterOther?.added_elsewhere, 7);
    assert.equal(afterOther?.added_here, 'here');
    assert.equal(afterOther?.did, 'did:web:x:agent:1');

    // Same number of columns, another name: only this connection's own DDL can say so.
    await sql`alter table agents rename column added_here to renamed_here`.execute(handle.db);
    const [afterRename] = (await everything(handle.db, 'did:web:x:agent:1')) as Record<string, unknown>[];
    assert.equal(afterRename?.renamed_here, 'here');
    assert.equal('added_here' in (afterRename ?? {}), false);
  } finally {
    await other.close();
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
