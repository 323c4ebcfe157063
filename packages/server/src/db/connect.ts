import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { SQLITE_DEFAULTS, type DatabaseConfig } from '../kernel/config.js';
import { startCheckpointer } from './checkpointer.js';
import type { DatabaseSchema } from './schema/index.js';
import { DirectReadingDb, type DirectReader } from './direct-reads.js';
import { LiteralLimits } from './literal-limits.js';
import { preparingPool } from './prepared-statements.js';
import { DatabaseUnavailableError } from '../kernel/errors.js';
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
  if (file !== ':memory:') ensureDirectory(path.dirname(path.resolve(file)));
  const sqlite = new SqliteDatabase(file);
  // WAL lets readers run beside the writer; busy_timeout rides out a backup or a second process briefly
  // (beyond it, SQLITE_BUSY answers 503 DATABASE_UNAVAILABLE).
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma(`busy_timeout = ${config.busyTimeoutMs ?? SQLITE_DEFAULTS.busyTimeoutMs}`);
  sqlite.pragma('foreign_keys = ON');
  // Reads come straight from the OS's page cache instead of a read() call and a copy per page: a search
  // page's rows are scattered over the file (docs/decisions/performance.md, "SQLite reads through a memory
  // map").
  sqlite.pragma(`mmap_size = ${config.mmapBytes ?? SQLITE_DEFAULTS.mmapBytes}`);
  const checkpointer = file === ':memory:' ? undefined : startCheckpointer(sqlite, file, onError);
  const statements = cachingStatements(sqlite);
  const connections: HeldConnections = { held: 0 };
  const directReader: DirectReader = {
    read: <Row>(text: string, parameters: readonly unknown[]): Row[] | undefined => {
      if (connections.held > 0) return undefined;
      try {
        const cached = statements.cached(text);
        return cached.statement.reader ? (rowsOf(cached, parameters) as Row[]) : undefined;
      } catch (error) {
        throw isSqliteUnavailable(error) ? new DatabaseUnavailableError(error) : error;
      }
    },
  };
  const db = new DirectReadingDb(
    {
      dialect: classifyingDialect(
        new SqliteDialect({ database: statements }),
        isSqliteUnavailable,
        connections,
        () => sqlite.inTransaction,
      ),
      plugins: [new LiteralLimits()],
    },
    directReader,
  );
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
 * Creates the database's directory one level at a time. Node's recursive mkdir never returns on a
 * path under /proc (mkdir keeps answering ENOENT there) and answers EEXIST under a file, so the parent
 * that is missing or not a directory is found here and named in the error.
 */
function ensureDirectory(dir: string): void {
  const missing: string[] = [];
  let at = dir;
  for (;;) {
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(at);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (stat !== undefined) {
      if (stat.isDirectory()) break;
      throw Object.assign(new Error(`${at} is not a directory (ENOTDIR)`), { code: 'ENOTDIR', path: at });
    }
    const parent = path.dirname(at);
    if (parent === at) break;
    missing.unshift(at);
    at = parent;
  }
  for (const level of missing) {
    try {
      fs.mkdirSync(level);
    } catch (error) {
      const { code } = error as NodeJS.ErrnoException;
      if (code === 'EEXIST') continue;
      throw Object.assign(new Error(`cannot create the directory ${level} (${code})`), { code, path: level });
    }
  }
}

/**
 * A read's rows as objects built here from the statement's values: better-sqlite3 builds each row object
 * through V8's C++ API, a property at a time, which is slower (docs/decisions/performance.md, "A search's
 * statements"). Same objects: the later of two columns with one name wins, as in better-sqlite3. The
 * statement is shared with Kysely's driver, which expects objects, so raw mode is switched off again
 * before anything else can run.
 */
function rowsOf(cached: CachedStatement, parameters: readonly unknown[]): object[] {
  const { statement } = cached;
  let values: unknown[][];
  statement.raw(true);
  try {
    values = statement.all(parameters) as unknown[][];
  } finally {
    statement.raw(false);
  }
  // Read again when a row is wider or narrower: another process changed what `select *` answers.
  const width = values[0]?.length;
  if (cached.columnNames === undefined || (width !== undefined && width !== cached.columnNames.length)) {
    cached.columnNames = statement.columns().map((column) => column.name);
  }
  const names = cached.columnNames;
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

const SCHEMA_CHANGE = /^\s*(create|alter|drop)\b/i;

interface CachedStatement {
  statement: SqliteDatabase.Statement;
  /** DDL: running it makes every statement's column names unknown again. */
  changesSchema: boolean;
  /** A read's column names for rowsOf, once it has run directly. */
  columnNames: string[] | undefined;
}

interface CachingStatements {
  close(): void;
  prepare(text: string): SqliteDatabase.Statement;
  cached(text: string): CachedStatement;
}

/**
 * Kysely's SQLite driver prepares every query anew, and preparing costs about as much as running a
 * primary-key lookup (docs/decisions/performance.md, "SQLite statements"). Statements are reusable once run,
 * and the driver runs one query at a time on its single connection, so the same text gets the same statement.
 */
function cachingStatements(sqlite: SqliteDatabase.Database): CachingStatements {
  const cache = new Map<string, CachedStatement>();
  const cached = (text: string): CachedStatement => {
    let entry = cache.get(text);
    if (entry === undefined) {
      const statement = sqlite.prepare(text);
      entry = {
        statement,
        changesSchema: !statement.reader && SCHEMA_CHANGE.test(text),
        columnNames: undefined,
      };
      if (cache.size >= STATEMENT_CACHE_SIZE) {
        const oldest = cache.keys().next().value;
        if (oldest !== undefined) cache.delete(oldest);
      }
      cache.set(text, entry);
    }
    // Kysely's driver prepares each query right before running it: a migration's DDL passes here.
    if (entry.changesSchema) for (const other of cache.values()) other.columnNames = undefined;
    return entry;
  };
  return {
    close: () => {
      cache.clear();
      sqlite.close();
    },
    prepare: (text) => cached(text).statement,
    cached,
  };
}

/**
 * The PostgreSQL connection migrations run on: one connection without the statement and query
 * timeouts meant for requests, since building an index over a large table, a backfill, or waiting
 * for another node's migration may take longer than any request should.
 */
export function openPostgresForMigrations(
  config: Extract<DatabaseConfig, { kind: 'postgres' }>,
  onError: (error: Error) => void,
): DatabaseHandle {
  return openPostgres(config, onError, { forMigrations: true });
}

function openPostgres(
  config: Extract<DatabaseConfig, { kind: 'postgres' }>,
  onPoolError: (error: Error) => void,
  { forMigrations = false } = {},
): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: config.url,
    max: forMigrations ? 1 : config.poolSize,
    // Fail fast while PostgreSQL is down or restarting: requests answer 503 instead of hanging.
    connectionTimeoutMillis: config.connectTimeoutMs,
    ...(forMigrations
      ? {}
      : { statement_timeout: config.statementTimeoutMs, query_timeout: config.statementTimeoutMs + 1000 }),
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
