import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { DEFAULT_TEST_POSTGRES_URL } from './postgres.js';

export type DatabaseKind = 'sqlite' | 'postgres';

/** Which database the suite runs on: `TEST_DATABASE=postgres` runs it on the local PostgreSQL. */
export const testDatabase: DatabaseKind = process.env.TEST_DATABASE === 'postgres' ? 'postgres' : 'sqlite';
const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? DEFAULT_TEST_POSTGRES_URL;

export interface TestDatabase {
  url: string;
  /** The SQLite file, when on SQLite. */
  file?: string;
  drop(): Promise<void>;
}

/**
 * A fresh, empty database (an SQLite file in a temp directory, or a PostgreSQL database of its own on
 * the server at TEST_POSTGRES_URL) of the kind under test unless `kind` says; `drop` removes it.
 */
export async function createTestDatabase(kind: DatabaseKind = testDatabase): Promise<TestDatabase> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-test-'));
    const file = path.join(dir, 'registry.db');
    return {
      url: `sqlite:${file}`,
      file,
      drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `registry_test_${crypto.randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    // The query's rejection reports a failure; without a listener the client's own 'error' event (the
    // server restarting under another test file, e.g. multi-node's restart test) would crash this file.
    client.on('error', () => undefined);
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
