import pg from 'pg';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';

/** A fresh database per run (SQLite file or PostgreSQL database), dropped at the end. */

export interface BenchDatabase {
  url: string;
  config:
    | { kind: 'sqlite'; path: string }
    | {
        kind: 'postgres';
        url: string;
        poolSize: number;
        statementTimeoutMs: number;
        connectTimeoutMs: number;
      };
  /** Bytes on disk: the SQLite file and its WAL, or pg_database_size. */
  sizeBytes(): Promise<number>;
  drop(): Promise<void>;
}

export const POSTGRES_ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export async function createDatabase(kind: 'sqlite' | 'postgres'): Promise<BenchDatabase> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-bench-'));
    const file = path.join(dir, 'registry.db');
    return {
      url: `sqlite:${file}`,
      config: { kind: 'sqlite', path: file },
      sizeBytes: async () =>
        [file, `${file}-wal`].reduce(
          (sum, part) => sum + (fs.existsSync(part) ? fs.statSync(part).size : 0),
          0,
        ),
      drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `registry_bench_${crypto.randomBytes(5).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await client.connect();
    try {
      return await client.query<Record<string, unknown>>(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    config: {
      kind: 'postgres',
      url: url.toString(),
      poolSize: 10,
      statementTimeoutMs: 60_000,
      connectTimeoutMs: 10_000,
    },
    sizeBytes: async () =>
      Number((await admin(`SELECT pg_database_size('${name}') AS size`)).rows[0]?.size ?? 0),
    drop: async () => {
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
