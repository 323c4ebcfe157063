import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql, type SqliteDialectConfig } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import { startCheckpointer } from './checkpointer.js';
import type { DatabaseSchema } from './schema/index.js';
import { registerDirectReader } from './direct-reads.js';
import { LiteralLimits } from './literal-limits.js';
import { preparingPool } from './prepared-statements.js';
import { DatabaseUnavailableError } from '../errors.js';
import {
  classifyingDialect,
  isPostgresUnavailable,
  isSqliteUnavailable,
  type HeldConnections,
} from './unavailability.js';

export type Db = Kysely<DatabaseSchema>;
export type Dialect = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Db;
  dialect: Dialect;
  /** The PostgreSQL connection string, for the LISTEN connection of the events. */
  postgresUrl?: string;
  /** The PostgreSQL pool, for its gauges in GET /metrics. */
  pool?: pg.Pool;
  ping(): Promise<void>;
  close(): Promise<void>;
}

// int8 columns hold epoch milliseconds, well inside Number's exact range.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function openDatabase(
  config: DatabaseConfig,
  onBackgroundError: (error: Error) => void = () => undefined,
): DatabaseHandle {
  return config.kind === 'postgres'
    ? openPostgres(config, onBackgroundError)
    : openSqlite(config, onBackgroundError);
}

function openSqlite(
  config: Extract<DatabaseConfig, { kind: 'sqlite' }>,
  onError: (error: Error) => void,
): DatabaseHandle {
  const file = config.path;
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SqliteDatabase(file);
  // WAL lets readers run beside the writer; busy_timeout rides out a backup or a second process briefly
  // (beyond it, SQLITE_BUSY answers 503 DATABASE_UNAVAILABLE).
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma(`busy_timeout = ${config.busyTimeoutMs ?? 5000}`);
  sqlite.pragma('foreign_keys = ON');
  const checkpointer = file === ':memory:' ? undefined : startCheckpointer(sqlite, file, onError);
  const statements = cachingStatements(sqlite);
  const connections: HeldConnections = { held: 0 };
  const db = new Kysely<DatabaseSchema>({
    dialect: classifyingDialect(
      new SqliteDialect({ database: statements }),
      isSqliteUnavailable,
      connections,
    ),
    plugins: [new LiteralLimits()],
  });
  registerDirectReader(db, {
    read: <Row>(text: string, parameters: readonly unknown[]): Row[] | undefined => {
      if (connections.held > 0) return undefined;
      try {
        const statement = statements.statement(text);
        return statement.reader ? (rowsOf(statements, statement, parameters) as Row[]) : undefined;
      } catch (error) {
        throw isSqliteUnavailable(error) ? new DatabaseUnavailableError(error) : error;
      }
    },
  });
  return {
    db,
    dialect: 'sqlite',
    ping: () => ping(db),
    close: async () => {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

/**
 * A read's rows as objects built here from the statement's values: better-sqlite3 builds each row
 * object through V8's C++ API, a property at a time, which cost about a microsecond a row more for
 * a search page's 20 rows of 10 columns (bench/RESULTS.md, fifth session). Same objects: the later of
 * two columns with one name wins, as in better-sqlite3. The statement is shared with Kysely's driver,
 * which expects objects, so raw mode is switched off again before anything else can run.
 */
function rowsOf(
  statements: CachingStatements,
  statement: SqliteDatabase.Statement,
  parameters: readonly unknown[],
): object[] {
  let values: unknown[][];
  statement.raw(true);
  try {
    values = statement.all(parameters) as unknown[][];
  } finally {
    statement.raw(false);
  }
  let names = statements.columnNames(statement);
  // Another process's schema change can change what `select *` answers; this one's forgets the names.
  if (values.length > 0 && (values[0] as unknown[]).length !== names.length) {
    names = statements.columnNames(statement, true);
  }
  const rows: object[] = new Array<object>(values.length);
  for (let index = 0; index < values.length; index += 1) {
    const row: Record<string, unknown> = {};
    const rowValues = values[index] as unknown[];
    for (let column = 0; column < names.length; column += 1) row[names[column] as string] = rowValues[column];
    rows[index] = row;
  }
  return rows;
}

/** Distinct SQL texts are few (IN lists and multi-row inserts vary in length); beyond this, oldest go first. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every query anew, and preparing costs about as much as running a
 * primary-key lookup (docs/decisions.md, "Performance"). Statements are reusable once run, and the
 * driver runs one query at a time on its single connection, so the same text gets the same statement.
 */
type CachingStatements = SqliteDialectConfig['database'] & {
  statement(text: string): SqliteDatabase.Statement;
  /** A read statement's column names, kept until this connection runs a schema change. */
  columnNames(statement: SqliteDatabase.Statement, reread?: boolean): string[];
};

const SCHEMA_CHANGE = /^\s*(create|alter|drop)\b/i;

function cachingStatements(sqlite: SqliteDatabase.Database): CachingStatements {
  const statements = new Map<string, SqliteDatabase.Statement>();
  const schemaChanges = new Set<string>();
  const names = new Map<SqliteDatabase.Statement, string[]>();
  const statement = (text: string): SqliteDatabase.Statement => {
    let prepared = statements.get(text);
    if (prepared === undefined) {
      prepared = sqlite.prepare(text);
      if (statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = statements.keys().next().value;
        if (oldest !== undefined) {
          const evicted = statements.get(oldest);
          if (evicted !== undefined) names.delete(evicted);
          statements.delete(oldest);
          schemaChanges.delete(oldest);
        }
      }
      statements.set(text, prepared);
      if (!prepared.reader && SCHEMA_CHANGE.test(text)) schemaChanges.add(text);
    }
    // Kysely's driver prepares each query right before running it: a migration's DDL passes here.
    if (schemaChanges.has(text)) names.clear();
    return prepared;
  };
  return {
    close: () => {
      statements.clear();
      names.clear();
      sqlite.close();
    },
    prepare: statement,
    statement,
    columnNames: (prepared, reread = false) => {
      let known = reread ? undefined : names.get(prepared);
      if (known === undefined) {
        known = prepared.columns().map((column) => column.name);
        names.set(prepared, known);
      }
      return known;
    },
  };
}

function openPostgres(
  config: Extract<DatabaseConfig, { kind: 'postgres' }>,
  onPoolError: (error: Error) => void,
): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: config.url,
    max: config.poolSize,
    // Fail fast while PostgreSQL is down or restarting: requests answer 503 instead of hanging.
    connectionTimeoutMillis: config.connectTimeoutMs,
    statement_timeout: config.statementTimeoutMs,
    query_timeout: config.statementTimeoutMs + 1000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its server (restart) emits here; without a listener it would crash the process.
  pool.on('error', onPoolError);
  // pg-pool listens for a client's 'error' only while the client is idle: a checked-out client whose
  // server goes away (restart, pg_terminate_backend) emits 'error' with nobody listening, which kills
  // the process. Every client gets its own listener for its whole life; the query it was running
  // fails (503 DATABASE_UNAVAILABLE) and the pool discards the client when it is released.
  pool.on('connect', (client) => {
    client.on('error', (error) => onPoolError(error));
  });
  const db = new Kysely<DatabaseSchema>({
    dialect: classifyingDialect(new PostgresDialect({ pool: preparingPool(pool) }), isPostgresUnavailable),
  });
  return {
    db,
    dialect: 'postgres',
    postgresUrl: config.url,
    pool,
    ping: () => ping(db),
    close: () => db.destroy(),
  };
}

async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
