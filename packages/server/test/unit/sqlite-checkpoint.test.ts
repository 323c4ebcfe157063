import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/connect.js';
import { testDatabase } from '@agent-registry/testkit';

test(
  'SQLite: a background thread copies the WAL into the database file; requests checkpoint only past 64 MiB',
  { skip: testDatabase !== 'sqlite' && 'SQLite only' },
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-checkpoint-'));
    const file = path.join(dir, 'registry.db');
    const handle = openDatabase({ kind: 'sqlite', path: file });
    try {
      const autocheckpoint = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(
        handle.db,
      );
      assert.equal(
        autocheckpoint.rows[0]?.wal_autocheckpoint,
        (64 * 1024 * 1024) / 4096,
        'the request connection checkpoints only once the WAL passes its limit',
      );
      await sql`create table filler (id integer primary key, text text not null)`.execute(handle.db);
      const before = fs.statSync(file).size;
      await handle.db.transaction().execute(async (trx) => {
        for (let i = 0; i < 500; i++) {
          await sql`insert into filler (text) values (${'x'.repeat(2000)})`.execute(trx);
        }
      });
      // The rows are in the WAL until the checkpoint thread copies them (twice a second).
      const deadline = Date.now() + 20_000;
      while (fs.statSync(file).size <= before + 500 * 2000 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(fs.statSync(file).size > before + 500 * 2000, 'the database file received the WAL pages');
    } finally {
      await handle.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
