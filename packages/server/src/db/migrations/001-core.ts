import type { Kysely } from 'kysely';

// Portable column types only: text ids, bigint epoch milliseconds, integer booleans, JSON as text.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agents')
    .addColumn('did', 'text', (col) => col.primaryKey())
    .addColumn('key_type', 'text', (col) => col.notNull())
    .addColumn('public_key', 'text', (col) => col.notNull())
    .addColumn('key_id', 'text', (col) => col.notNull().unique())
    .addColumn('chain_id', 'text')
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('avatar', 'text')
    .addColumn('website', 'text')
    .addColumn('capabilities', 'text', (col) => col.notNull())
    .addColumn('tags', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('invocation_enabled', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('delivery_mode', 'text', (col) => col.notNull().defaultTo('none'))
    .addColumn('webhook_url', 'text')
    .addColumn('webhook_secret', 'text')
    .addColumn('referrer', 'text')
    .addColumn('average_rating', 'double precision', (col) => col.notNull().defaultTo(0))
    .addColumn('reputation_score', 'double precision', (col) => col.notNull().defaultTo(0))
    .addColumn('total_reviews', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .addColumn('deactivated_at', 'bigint')
    .execute();

  await db.schema
    .createIndex('agents_status_created_idx')
    .on('agents')
    .columns(['status', 'created_at'])
    .execute();

  await db.schema
    .createTable('registry_settings')
    .addColumn('key', 'text', (col) => col.primaryKey())
    .addColumn('value', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
}
