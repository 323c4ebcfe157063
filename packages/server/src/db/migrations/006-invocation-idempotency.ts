import type { Kysely } from 'kysely';

// Idempotency-Key on POST /api/invoke (docs/decisions/invocation.md, "`Idempotency-Key` on `POST
// /api/invoke`"), and the index the background sweep of expired open tasks reads.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('invocation_idempotency')
    .addColumn('caller_did', 'text', (col) => col.notNull())
    .addColumn('idempotency_key', 'text', (col) => col.notNull())
    .addColumn('request_hash', 'text', (col) => col.notNull())
    .addColumn('task_id', 'text', (col) => col.notNull().unique())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('invocation_idempotency_pk', ['caller_did', 'idempotency_key'])
    .execute();
  await db.schema
    .createIndex('invocation_idempotency_expires_idx')
    .on('invocation_idempotency')
    .column('expires_at')
    .execute();
  await db.schema
    .createIndex('tasks_status_deadline_idx')
    .on('tasks')
    .columns(['status', 'deadline_at'])
    .execute();
}
