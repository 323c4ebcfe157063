import type { Kysely } from 'kysely';

/** Remote entries and the federation sources they come from (modules/federation/, docs/federation.md). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('remote_sources')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('state', 'text', (col) => col.notNull())
    .addColumn('last_error', 'text')
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('last_success_at', 'bigint')
    .addColumn('cursor', 'text')
    .execute();
  await db.schema
    .createTable('remote_entries')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('source_id', 'text', (col) => col.notNull())
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('did', 'text')
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('capabilities', 'text', (col) => col.notNull())
    .addColumn('tags', 'text', (col) => col.notNull())
    .addColumn('endpoints', 'text', (col) => col.notNull())
    .addColumn('home_registry', 'text', (col) => col.notNull())
    .addColumn('provenance', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .addColumn('seq', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('remote_entries_seq').on('remote_entries').column('seq').unique().execute();
  await db.schema.createIndex('remote_entries_source').on('remote_entries').column('source_id').execute();
  await db.schema.createIndex('remote_entries_did').on('remote_entries').column('did').execute();
}
