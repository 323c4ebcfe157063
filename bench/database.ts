import pg from 'pg';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';

/**
 * A fresh database per run (SQLite file or PostgreSQL database), dropped at the end. On PostgreSQL it
 * may start as a copy of a kept seeded database (kept-database.ts); a SQLite copy is made by the caller.
 */

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

/** One statement on the cluster's admin connection (CREATE/DROP DATABASE cannot run in a transaction). */
export async function adminQuery(
  statement: string,
  values: unknown[] = [],
): Promise<pg.QueryResult<Record<string, unknown>>> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    return await client.query<Record<string, unknown>>(statement, values);
  } finally {
    await client.end();
  }
}

/** The connection string of database `name` on the bench's PostgreSQL cluster. */
export function postgresUrl(name: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function createDatabase(
  kind: 'sqlite' | 'postgres',
  postgresTemplate?: string,
): Promise<BenchDatabase> {
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
  await adminQuery(
    postgresTemplate === undefined
      ? `CREATE DATABASE ${name}`
      : `CREATE DATABASE ${name} TEMPLATE ${postgresTemplate}${await fileCopyStrategy()}`,
  );
  const url = postgresUrl(name);
  return {
    url,
    config: {
      kind: 'postgres',
      url,
      poolSize: 10,
      statementTimeoutMs: 60_000,
      connectTimeoutMs: 10_000,
    },
    sizeBytes: async () =>
      Number((await adminQuery(`SELECT pg_database_size('${name}') AS size`)).rows[0]?.size ?? 0),
    drop: async () => {
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * ` STRATEGY FILE_COPY` where PostgreSQL has it (15 and later): a copy of a large seeded database by
 * files, with a checkpoint before and after, instead of writing every page of it to the WAL (15's
 * default), which would leave gigabytes of WAL to checkpoint during the measurements.
 */
export async function fileCopyStrategy(): Promise<string> {
  const version = Number((await adminQuery('SHOW server_version_num')).rows[0]?.server_version_num ?? 0);
  return version >= 150000 ? ' STRATEGY FILE_COPY' : '';
}
