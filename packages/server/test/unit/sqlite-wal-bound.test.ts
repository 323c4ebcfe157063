import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { startCheckpointer } from '../../src/db/checkpointer.js';
import { testDatabase } from '@agent-registry/testkit';

test(
  'SQLite: under a steady stream of commits the WAL is restarted, not grown without bound',
  { skip: testDatabase !== 'sqlite' && 'SQLite only' },
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-wal-'));
    const file = path.join(dir, 'registry.db');
    const sqlite = new SqliteDatabase(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    const limit = 1024 * 1024;
    const checkpointer = startCheckpointer(sqlite, file, (error) => assert.fail(error), {
      walLimitBytes: limit,
      intervalMs: 20,
    });
    try {
      sqlite.exec('create table filler (id integer primary key, text text not null)');
      const insert = sqlite.prepare('insert into filler (text) values (?)');
      const writeBatch = sqlite.transaction(() => {
        for (let i = 0; i < 20; i++) insert.run('x'.repeat(2000));
      });
      // Commits back to back, as a registration flood or a bulk import makes them: the checkpoint
      // thread never finds the WAL idle.
      let written = 0;
      let largestWal = 0;
      while (written < 64 * limit) {
        writeBatch();
        written += 20 * 2000;
        if (written % (100 * 20 * 2000) === 0) {
          largestWal = Math.max(largestWal, fs.statSync(`${file}-wal`).size);
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      largestWal = Math.max(largestWal, fs.statSync(`${file}-wal`).size);
      assert.ok(
        largestWal < written / 4,
        `the WAL reached ${largestWal} bytes for ${written} bytes written (limit ${limit})`,
      );
    } finally {
      await checkpointer.stop();
      sqlite.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
