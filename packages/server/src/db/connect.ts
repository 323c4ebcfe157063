import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import type { DatabaseConfig } from '../config.js';
import type { DatabaseSchema } from './schema/index.js';

export type Db = Kysely<DatabaseSchema>;

export interface DatabaseHandle {
  db: Db;
  dialect: 'sqlite' | 'postgres';
  ping(): Promise<void>;
  close(): Promise<void>;
}

export function openDatabase(config: DatabaseConfig): DatabaseHandle {
  if (config.kind === 'postgres') {
    throw new Error('PostgreSQL support is not available in this build; use DATABASE_URL=sqlite:<path>');
  }
  if (config.path !== ':memory:') fs.mkdirSync(path.dirname(config.path), { recursive: true });
  const sqlite = new SqliteDatabase(config.path);
  // WAL lets readers run beside the writer; busy_timeout rides out a backup or a second process briefly.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: sqlite }) });
  return {
    db,
    dialect: 'sqlite',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}
