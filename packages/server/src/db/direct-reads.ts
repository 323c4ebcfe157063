import { Kysely, type KyselyConfig } from 'kysely';
import type { DatabaseSchema } from './schema/index.js';

/**
 * Runs a compiled read straight on SQLite's one connection, without Kysely's driver (its mutex, connection
 * wrapper and promise hops cost more than a primary-key lookup; docs/decisions/performance.md, "Direct SQLite
 * reads"). Answers `undefined` when it must not: while a transaction (or any query) holds the connection, a
 * read on it would see that transaction's uncommitted rows, so the caller goes through Kysely and waits its
 * turn like before.
 */
export interface DirectReader {
  read<Row>(sql: string, parameters: readonly unknown[]): Row[] | undefined;
}

/**
 * The SQLite database handle, carrying its direct reader. Its transactions are plain Kysely objects
 * (Kysely builds them itself), so a read inside a transaction never takes the direct path.
 */
export class DirectReadingDb extends Kysely<DatabaseSchema> {
  constructor(
    config: KyselyConfig,
    readonly directReader: DirectReader,
  ) {
    super(config);
  }
}

/** The direct reader of a database handle; none for PostgreSQL and for transactions. */
export function directReaderOf(db: Kysely<DatabaseSchema>): DirectReader | undefined {
  return db instanceof DirectReadingDb ? db.directReader : undefined;
}
