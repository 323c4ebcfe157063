import type { Kysely } from 'kysely';

/**
 * Moderation (docs/moderation.md): abuse reports (one per reporter and target), the operator's
 * decisions and the suspended agents' appeals, each numbered by the transparency log entry that records it. A suspended agent is an
 * agents row with status "suspended": no column is added to agents, so the statements that read its
 * rows in older migrations see the schema they were written for.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('moderation_reports')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('reporter_did', 'text', (col) => col.notNull())
    .addColumn('target', 'text', (col) => col.notNull())
    .addColumn('reason', 'text', (col) => col.notNull())
    .addColumn('details', 'text')
    .addColumn('task_id', 'text')
    .addColumn('verified', 'integer', (col) => col.notNull())
    .addColumn('state', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  // One report per reporter and target: the database is the last word when two submissions race.
  await db.schema
    .createIndex('moderation_reports_pair_idx')
    .on('moderation_reports')
    .columns(['reporter_did', 'target'])
    .unique()
    .execute();
  await db.schema
    .createIndex('moderation_reports_target_idx')
    .on('moderation_reports')
    .columns(['target', 'id'])
    .execute();
  await db.schema
    .createIndex('moderation_reports_reporter_idx')
    .on('moderation_reports')
    .columns(['reporter_did', 'created_at'])
    .execute();

  await db.schema
    .createTable('moderation_decisions')
    // The change number of the decision's event leaf: unique, and in commit order.
    .addColumn('seq', 'bigint', (col) => col.primaryKey())
    .addColumn('target', 'text', (col) => col.notNull())
    .addColumn('action', 'text', (col) => col.notNull())
    .addColumn('reason', 'text', (col) => col.notNull())
    .addColumn('note', 'text')
    .addColumn('decided_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('moderation_decisions_target_idx')
    .on('moderation_decisions')
    .columns(['target', 'seq'])
    .execute();

  // One appeal per suspension (its seq), by the suspended agent.
  await db.schema
    .createTable('moderation_appeals')
    .addColumn('decision_seq', 'bigint', (col) => col.primaryKey())
    .addColumn('did', 'text', (col) => col.notNull())
    .addColumn('statement', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
}
