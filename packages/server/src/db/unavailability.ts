import SqliteDatabase from 'better-sqlite3';
import type {
  CompiledQuery,
  DatabaseConnection,
  DatabaseIntrospector,
  Dialect,
  DialectAdapter,
  Driver,
  Kysely,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely';
import pg from 'pg';
import { DatabaseUnavailableError } from '../kernel/errors.js';

/** Decides whether an error thrown by a driver means "the database is unreachable", not "this statement failed". */
export type UnavailabilityClassifier = (error: unknown) => boolean;

/**
 * SQLSTATE classes and codes that mean the server or the connection is gone, not that the statement
 * was wrong: 08 connection exception, 53 insufficient resources (too many connections, disk full),
 * 57P01-57P05 operator intervention (admin/crash shutdown, cannot connect now, idle timeouts), and
 * 57014 query_canceled (statement_timeout: the database did not answer in time).
 */
export function isUnavailableSqlState(code: string | undefined): boolean {
  if (code === undefined) return false;
  return code.startsWith('08') || code.startsWith('53') || code.startsWith('57P') || code === '57014';
}

/**
 * PostgreSQL: a server error (pg.DatabaseError) is classified by its SQLSTATE. Any other error the
 * client raises for a query or a connection attempt (socket reset, "connection terminated", connect
 * timeout, client no longer queryable) concerns the connection, not the statement. Programming
 * errors (TypeError, RangeError, SyntaxError, e.g. an unserialisable parameter) stay 500s.
 */
export const isPostgresUnavailable: UnavailabilityClassifier = (error) => {
  if (error instanceof pg.DatabaseError) return isUnavailableSqlState(error.code);
  if (error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError) return false;
  return error instanceof Error;
};

/** SQLite result codes (primary, so extended codes like SQLITE_IOERR_WRITE match too) that mean "try again later". */
const SQLITE_UNAVAILABLE_PRIMARY_CODES = [
  'SQLITE_BUSY', // another process held the lock beyond busy_timeout
  'SQLITE_LOCKED',
  'SQLITE_IOERR', // disk I/O error
  'SQLITE_FULL', // disk full
  'SQLITE_CANTOPEN',
  'SQLITE_PROTOCOL',
  'SQLITE_NOMEM',
];

export const isSqliteUnavailable: UnavailabilityClassifier = (error) => {
  if (!(error instanceof SqliteDatabase.SqliteError)) return false;
  return SQLITE_UNAVAILABLE_PRIMARY_CODES.some(
    (code) => error.code === code || error.code.startsWith(`${code}_`),
  );
};

/**
 * Wraps a Kysely dialect so that every driver error meaning "database unavailable" surfaces as the
 * typed DatabaseUnavailableError (503 + Retry-After), whichever query, transaction step or connection
 * checkout raised it. Other errors pass through untouched (unique violations, bugs).
 * `inTransaction` (SQLite) says whether a transaction is still open: SQLite rolls one back by itself
 * on some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM), and the driver's ROLLBACK would then fail
 * with "no transaction is active" in place of the error that caused it.
 */
export function classifyingDialect(
  inner: Dialect,
  isUnavailable: UnavailabilityClassifier,
  connections: HeldConnections = { held: 0 },
  inTransaction?: () => boolean,
): Dialect {
  return {
    createDriver: () =>
      new ClassifyingDriver(inner.createDriver(), isUnavailable, connections, inTransaction),
    createQueryCompiler: (): QueryCompiler => inner.createQueryCompiler(),
    createAdapter: (): DialectAdapter => inner.createAdapter(),
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's own Dialect signature
    createIntrospector: (db: Kysely<any>): DatabaseIntrospector => inner.createIntrospector(db),
  };
}

/** How many connections Kysely has checked out right now (on SQLite: 1 while a query or transaction runs). */
export interface HeldConnections {
  held: number;
}

class ClassifyingDriver implements Driver {
  private readonly innerConnections = new WeakMap<DatabaseConnection, DatabaseConnection>();

  constructor(
    private readonly inner: Driver,
    private readonly isUnavailable: UnavailabilityClassifier,
    private readonly connections: HeldConnections,
    private readonly inTransaction: (() => boolean) | undefined,
  ) {}

  init(): Promise<void> {
    return this.guard(() => this.inner.init());
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.guard(() => this.inner.acquireConnection());
    this.connections.held++;
    const wrapped = new ClassifyingConnection(connection, (run) => this.guard(run), this.isUnavailable);
    this.innerConnections.set(wrapped, connection);
    return wrapped;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.guard(() => this.inner.beginTransaction(this.unwrap(connection), settings));
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.guard(() => this.inner.commitTransaction(this.unwrap(connection)));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.inTransaction !== undefined && !this.inTransaction()) return Promise.resolve();
    return this.guard(() => this.inner.rollbackTransaction(this.unwrap(connection)));
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    this.connections.held--;
    return this.inner.releaseConnection(this.unwrap(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }

  private unwrap(connection: DatabaseConnection): DatabaseConnection {
    return this.innerConnections.get(connection) ?? connection;
  }

  private async guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw this.isUnavailable(error) ? new DatabaseUnavailableError(error) : error;
    }
  }
}

class ClassifyingConnection implements DatabaseConnection {
  constructor(
    private readonly inner: DatabaseConnection,
    private readonly guard: <T>(run: () => Promise<T>) => Promise<T>,
    private readonly isUnavailable: UnavailabilityClassifier,
  ) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.guard(() => this.inner.executeQuery<R>(query));
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize);
    } catch (error) {
      throw this.isUnavailable(error) ? new DatabaseUnavailableError(error) : error;
    }
  }
}
