import { sql, type Kysely } from 'kysely';

/**
 * The transparency log's records (modules/transparency-log/). The log begins with the next change:
 * changes numbered before this migration are not in it (their intermediate states are gone; an agent
 * enters the log at its next change). docs/decisions/transparency-log.md, "The log begins at migration 014".
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('log_records')
    .addColumn('seq', 'bigint', (col) => col.primaryKey())
    .addColumn('operation', 'text', (col) => col.notNull())
    .addColumn('record', 'text', (col) => col.notNull())
    .execute();
  await db.schema
    .createTable('log_start')
    .addColumn('id', 'integer', (col) => col.primaryKey())
    .addColumn('first_seq', 'bigint', (col) => col.notNull())
    .execute();
  await sql`insert into log_start (id, first_seq) select 1, seq + 1 from change_feed_head where id = 1`.execute(
    db,
  );
}
