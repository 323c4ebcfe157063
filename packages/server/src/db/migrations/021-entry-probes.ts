import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per probed remote entry: its schedule and what the latest probe found (docs/federation.md, "Observed").
  await db.schema
    .createTable('entry_probes')
    .addColumn('entry_id', 'text', (col) => col.primaryKey())
    .addColumn('due_at', 'bigint', (col) => col.notNull())
    .addColumn('failures', 'integer', (col) => col.notNull())
    .addColumn('status', 'text')
    .addColumn('checked_at', 'bigint')
    .addColumn('last_answered_at', 'bigint')
    .addColumn('first_seen_at', 'bigint')
    .addColumn('tools_count', 'integer')
    .addColumn('tools_digest', 'text')
    .addColumn('tools_changed_at', 'bigint')
    .execute();
  await db.schema.createIndex('entry_probes_due_idx').on('entry_probes').column('due_at').execute();
  // Each change of status class or tools digest, with the log record that made it evidence.
  await db.schema
    .createTable('entry_observations')
    .addColumn('entry_id', 'text', (col) => col.notNull())
    .addColumn('log_seq', 'bigint', (col) => col.notNull())
    .addColumn('observed_at', 'bigint', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('tools_count', 'integer')
    .addColumn('tools_digest', 'text')
    .addPrimaryKeyConstraint('entry_observations_pk', ['entry_id', 'log_seq'])
    .execute();
}
