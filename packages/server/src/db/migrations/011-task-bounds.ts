import { sql, type Kysely, type SqlBool } from 'kysely';

/**
 * Bounds on tasks (docs/decisions/invocation.md, from "A page of pending tasks is bounded in bytes"): what
 * one caller or target may hold open, how many invocations and payload bytes a caller may send per window
 * (counted in `invocation_quota`, so every node sees the same count), a short lease so one pending task goes
 * to one long poll, and the indexes the sweep reads to drop old payloads and rows. Existing tasks keep
 * `input_bytes` 0: they were created before any quota and end within their deadline.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('tasks')
    .addColumn('input_bytes', 'bigint', (col) => col.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('tasks').addColumn('lease_until', 'bigint').execute();
  await db.schema.alterTable('tasks').addColumn('payload_purged_at', 'bigint').execute();
  const open = sql<SqlBool>`status in ('pending', 'processing')`;
  // Covering partial indexes: the open tasks (and their bytes) of one caller or one target, by deadline;
  // `status` too, which SQLite reads to check the index's own condition.
  await db.schema
    .createIndex('tasks_open_caller_idx')
    .on('tasks')
    .columns(['caller_did', 'deadline_at', 'input_bytes', 'status'])
    .where(open)
    .execute();
  await db.schema
    .createIndex('tasks_open_target_idx')
    .on('tasks')
    .columns(['target_did', 'deadline_at', 'input_bytes', 'status'])
    .where(open)
    .execute();
  // The sweep: ended tasks whose payloads are still kept, oldest first; and every ended task by age.
  await db.schema
    .createIndex('tasks_payload_kept_idx')
    .on('tasks')
    .column('completed_at')
    .where(sql<SqlBool>`payload_purged_at is null and completed_at is not null`)
    .execute();
  await db.schema.createIndex('tasks_completed_idx').on('tasks').column('completed_at').execute();
  await db.schema
    .createTable('invocation_quota')
    .addColumn('caller_did', 'text', (col) => col.notNull())
    .addColumn('window_start', 'bigint', (col) => col.notNull())
    .addColumn('invocations', 'bigint', (col) => col.notNull())
    .addColumn('payload_bytes', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('invocation_quota_pk', ['caller_did', 'window_start'])
    .execute();
  await db.schema
    .createIndex('invocation_quota_window_idx')
    .on('invocation_quota')
    .column('window_start')
    .execute();
}
