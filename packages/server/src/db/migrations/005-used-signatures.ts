import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('used_signatures')
    .addColumn('digest', 'text', (col) => col.primaryKey())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .execute();
  // The sweep deletes by age.
  await db.schema
    .createIndex('used_signatures_expires_idx')
    .on('used_signatures')
    .column('expires_at')
    .execute();
}
