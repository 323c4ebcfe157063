import type { Kysely } from 'kysely';

/**
 * Invocation input counted per client address and per network (docs/decisions/invocation.md, "Task storage
 * per client address"), beside the per-caller count of 011: one address registering many agents no longer
 * multiplies what it may make the registry store.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('invocation_client_quota')
    .addColumn('bucket', 'text', (col) => col.notNull())
    .addColumn('window_start', 'bigint', (col) => col.notNull())
    .addColumn('payload_bytes', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('invocation_client_quota_pk', ['bucket', 'window_start'])
    .execute();
  // Past windows are deleted by age.
  await db.schema
    .createIndex('invocation_client_quota_window_idx')
    .on('invocation_client_quota')
    .column('window_start')
    .execute();
}
