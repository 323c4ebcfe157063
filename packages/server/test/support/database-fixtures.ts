/**
 * Databases written directly, below the API: rows of the agents table, the first complete release's
 * database (test/fixtures/upgrade/) and what a migration may change in one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, type TestDatabase } from '@agent-registry/testkit';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { openDatabase, type Db } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrations/index.js';
import { loadConfig } from '../../src/kernel/config.js';
import type { NewAgentRow } from '../../src/modules/agents/agents-store.js';

/** A row of the agents table for tests that write the database directly (every required column). */
export const agentTableRow = (did: string, overrides: Partial<NewAgentRow> = {}): NewAgentRow => ({
  did,
  name: did.slice(-4),
  public_key: did,
  key_id: `ed25519:${did}`,
  key_type: 'ed25519',
  capabilities: '[]',
  status: 'active',
  invocation_enabled: 0,
  delivery_mode: 'none',
  average_rating: 0,
  reputation_score: 0,
  total_reviews: 0,
  tags: '[]',
  created_at: 1,
  updated_at: 1,
  ...overrides,
});

export { registeredAgentRow } from '@agent-registry/testkit/agent-rows';

/**
 * A fresh database of the kind under test (TEST_DATABASE), migrated to the latest schema, for tests
 * of the storage below the API; close() closes it and drops it.
 */
export async function migratedTestDatabase(
  settings: Record<string, string> = {},
): Promise<{ db: Db; close(): Promise<void> }> {
  const database = await createTestDatabase();
  const handle = openDatabase(
    loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'silent', ...settings }).database,
  );
  try {
    await migrateToLatest(handle.db);
  } catch (error) {
    await handle.close();
    await database.drop();
    throw error;
  }
  return {
    db: handle.db,
    close: async () => {
      await handle.close();
      await database.drop();
    },
  };
}

const releaseFixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'upgrade');

/**
 * Puts the first complete release's schema and data (test/fixtures/upgrade/) into an empty database
 * of the kind under test: its SQLite file, or its PostgreSQL database.
 */
export async function loadRelease(database: Pick<TestDatabase, 'url' | 'file'>): Promise<void> {
  if (database.file !== undefined) {
    fs.mkdirSync(path.dirname(database.file), { recursive: true });
    fs.copyFileSync(path.join(releaseFixtures, 'release-1.sqlite'), database.file);
    return;
  }
  // pg_dump's `\restrict` lines are commands of psql, not SQL.
  const dump = fs
    .readFileSync(path.join(releaseFixtures, 'release-1.sql'), 'utf8')
    .split('\n')
    .filter((line) => !line.startsWith('\\'))
    .join('\n');
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(dump);
  } finally {
    await client.end();
  }
}

export interface DatabaseState {
  applied: string[];
  /** Tables, columns and indexes, and each table's row count. */
  schema: string[];
}

/** What a migration may change: the history, the schema and the rows. */
export async function stateOf(database: Pick<TestDatabase, 'url' | 'file'>): Promise<DatabaseState> {
  if (database.file !== undefined) {
    const sqlite = new SqliteDatabase(database.file);
    try {
      const objects = sqlite
        .prepare(
          "select type, name, sql from sqlite_master where name not like 'sqlite_%' order by type, name",
        )
        .all() as { type: string; name: string; sql: string | null }[];
      const schema = objects.map(({ type, name, sql }) => {
        const counted = type === 'table' && sql?.startsWith('CREATE VIRTUAL') !== true;
        const rows = counted
          ? (sqlite.prepare(`select count(*) as n from "${name}"`).get() as { n: number }).n
          : '';
        return `${type} ${name} ${sql ?? ''} ${rows}`;
      });
      const hasHistory = objects.some(({ name }) => name === 'kysely_migration');
      const applied = hasHistory
        ? (sqlite.prepare('select name from kysely_migration order by name').all() as { name: string }[]).map(
            ({ name }) => name,
          )
        : [];
      return { applied, schema };
    } finally {
      sqlite.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const columns = await client.query<{ line: string }>(
      `select table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' ||
         coalesce(column_default, '') as line
       from information_schema.columns where table_schema = 'public' order by 1`,
    );
    const indexes = await client.query<{ line: string }>(
      `select indexdef as line from pg_indexes where schemaname = 'public' order by 1`,
    );
    const tables = await client.query<{ name: string }>(
      `select tablename as name from pg_tables where schemaname = 'public' order by 1`,
    );
    const counts: string[] = [];
    for (const { name } of tables.rows) {
      const { rows } = await client.query<{ n: string }>(`select count(*) as n from "${name}"`);
      counts.push(`${name} ${rows[0]?.n}`);
    }
    const applied = tables.rows.some(({ name }) => name === 'kysely_migration')
      ? (await client.query<{ name: string }>('select name from kysely_migration order by name')).rows.map(
          ({ name }) => name,
        )
      : [];
    return {
      applied,
      schema: [...columns.rows.map(({ line }) => line), ...indexes.rows.map(({ line }) => line), ...counts],
    };
  } finally {
    await client.end();
  }
}
