import { sql, type Kysely } from 'kysely';

/**
 * A worker's poll lists its pending tasks oldest first, by (created_at, id). The index of 002 held
 * (target_did, status, created_at) for every task ever made, so the `id` tie-break needed a sort step on each
 * poll, even an empty one (docs/decisions/performance.md, "Pending-tasks index and literal page size"), and
 * every status change rewrote the entry. A partial index of the pending tasks alone, in poll order, answers
 * the poll without sorting; a task enters it when created and leaves it when accepted or ended. The poll
 * repeats the literal condition (`status = 'pending'`) so that both databases use it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('tasks_pending_idx')
    .on('tasks')
    .columns(['target_did', 'created_at', 'id'])
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
  await db.schema.dropIndex('tasks_target_status_created_idx').ifExists().execute();
}
