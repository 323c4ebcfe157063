import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tasks')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('caller_did', 'text', (col) => col.notNull())
    .addColumn('target_did', 'text', (col) => col.notNull())
    .addColumn('capability', 'text', (col) => col.notNull())
    .addColumn('input', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('delivery_mode', 'text', (col) => col.notNull())
    .addColumn('output', 'text')
    .addColumn('error', 'text')
    .addColumn('error_code', 'text')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('deadline_at', 'bigint', (col) => col.notNull())
    .addColumn('accepted_at', 'bigint')
    .addColumn('completed_at', 'bigint')
    .execute();
  // Workers list their pending tasks oldest first.
  await db.schema
    .createIndex('tasks_target_status_created_idx')
    .on('tasks')
    .columns(['target_did', 'status', 'created_at'])
    .execute();
  // Verified reviews look a task up by caller and target.
  await db.schema
    .createIndex('tasks_caller_target_idx')
    .on('tasks')
    .columns(['caller_did', 'target_did'])
    .execute();
}
