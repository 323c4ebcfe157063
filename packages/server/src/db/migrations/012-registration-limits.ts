import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('registration_counts')
    .addColumn('bucket', 'text', (col) => col.notNull())
    .addColumn('window_start', 'bigint', (col) => col.notNull())
    .addColumn('count', 'integer', (col) => col.notNull())
    .addPrimaryKeyConstraint('registration_counts_pk', ['bucket', 'window_start'])
    .execute();
  // Past windows are deleted by age.
  await db.schema
    .createIndex('registration_counts_window_idx')
    .on('registration_counts')
    .column('window_start')
    .execute();
}
