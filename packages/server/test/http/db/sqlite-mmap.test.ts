import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { ConfigError, loadConfig } from '../../../src/kernel/config.js';
import { openDatabase, type Db } from '../../../src/db/connect.js';
import { startRegistry } from '@agent-registry/testkit/in-process';
import { testDatabase } from '@agent-registry/testkit';

const MB = 2 ** 20;

async function mmapSize(db: Db): Promise<number> {
  const { rows } = await sql<{ mmap_size: number }>`pragma mmap_size`.execute(db);
  return Number(rows[0]?.mmap_size);
}

describe('SQLITE_MMAP_MB: SQLite reads the file through a memory map', () => {
  const cwd = os.tmpdir();

  test('defaults to the largest map the bundled SQLite allows, 0 turns it off, more is refused', () => {
    const sqliteOf = (env: Record<string, string>) => {
      const { database } = loadConfig({ DATABASE_URL: 'sqlite:./registry.db', ...env }, cwd);
      assert.equal(database.kind, 'sqlite');
      return database;
    };
    assert.equal(sqliteOf({}).mmapBytes, 2047 * MB);
    assert.equal(sqliteOf({ SQLITE_MMAP_MB: '0' }).mmapBytes, 0);
    assert.equal(sqliteOf({ SQLITE_MMAP_MB: '256' }).mmapBytes, 256 * MB);
    for (const value of ['2048', '-1', 'lots']) {
      assert.throws(
        () => loadConfig({ SQLITE_MMAP_MB: value }, cwd),
        (error: unknown) =>
          error instanceof ConfigError &&
          /SQLITE_MMAP_MB must be an integer from 0 to 2047/.test(error.message),
        value,
      );
    }
  });

  test(
    'a connection opened from a config built by hand gets the same default as loadConfig gives',
    { skip: testDatabase !== 'sqlite' && 'SQLite only' },
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-mmap-'));
      const handle = openDatabase({ kind: 'sqlite', path: path.join(dir, 'registry.db') });
      try {
        assert.equal(await mmapSize(handle.db), 2047 * MB);
      } finally {
        await handle.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  test(
    "the registry's connection uses the configured map, and serves searches through it",
    { skip: testDatabase !== 'sqlite' && 'SQLite only' },
    async () => {
      for (const [setting, expected] of [
        [undefined, 2047 * MB],
        ['64', 64 * MB],
        ['0', 0],
      ] as const) {
        const registry = await startRegistry(setting === undefined ? {} : { SQLITE_MMAP_MB: setting });
        try {
          assert.equal(await mmapSize(registry.ctx.database.db), expected, `SQLITE_MMAP_MB=${setting}`);
          const search = await registry.app.inject({ method: 'GET', url: '/api/agents/search?q=anything' });
          assert.equal(search.statusCode, 200, search.body);
        } finally {
          await registry.close();
        }
      }
    },
  );
});
