import type { Db } from './connect.js';

/**
 * Runs a compiled read straight on SQLite's one connection, without Kysely's driver (its mutex,
 * connection wrapper and promise hops cost more than a primary-key lookup; bench/RESULTS.md, "GET
 * profile"). Answers `undefined` when it must not: while a transaction (or any query) holds the
 * connection, a read on it would see that transaction's uncommitted rows, so the caller goes through
 * Kysely and waits its turn like before.
 */
export interface DirectReader {
  read<Row>(sql: string, parameters: readonly unknown[]): Row[] | undefined;
}

const readers = new WeakMap<Db, DirectReader>();

/** Called once per SQLite database handle by openDatabase. */
export function registerDirectReader(db: Db, reader: DirectReader): void {
  readers.set(db, reader);
}

/** The direct reader of a database handle; none for PostgreSQL and for transactions (their own Kysely). */
export function directReaderOf(db: Db): DirectReader | undefined {
  return readers.get(db);
}
