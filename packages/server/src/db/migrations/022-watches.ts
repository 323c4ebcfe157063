import { sql, type Kysely } from 'kysely';

/**
 * Watches (modules/watches/): subscriptions of agents to another agent's or a remote entry's changes,
 * the deliveries waiting to be sent (an outbox, retried with backoff), the change feed cursor the watch
 * follower has read up to, and the last availability status each watched agent was announced with.
 * The cursor starts at the head: changes made before this release are not announced.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('watches')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('owner_did', 'text', (col) => col.notNull())
    .addColumn('target', 'text', (col) => col.notNull())
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('secret', 'text', (col) => col.notNull())
    .addColumn('events', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    // Deleted watches stay until their creation leaves the rate window, so deleting does not refill it.
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('watches_owner_idx')
    .on('watches')
    .columns(['owner_did', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('watches_target_idx').on('watches').column('target').execute();

  await db.schema
    .createTable('watch_deliveries')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('watch_id', 'text', (col) => col.notNull())
    .addColumn('body', 'text', (col) => col.notNull())
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (col) => col.notNull())
    .addColumn('lease_until', 'bigint')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('watch_deliveries_due_idx')
    .on('watch_deliveries')
    .column('next_attempt_at')
    .execute();
  await db.schema
    .createIndex('watch_deliveries_watch_idx')
    .on('watch_deliveries')
    .column('watch_id')
    .execute();

  await db.schema
    .createTable('watch_cursor')
    .addColumn('id', 'integer', (col) => col.primaryKey())
    .addColumn('seq', 'bigint', (col) => col.notNull())
    .execute();
  await sql`insert into watch_cursor (id, seq) select 1, seq from change_feed_head where id = 1`.execute(db);

  await db.schema
    .createTable('watch_availability')
    .addColumn('did', 'text', (col) => col.primaryKey())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('changed_at', 'bigint', (col) => col.notNull())
    .execute();
}
