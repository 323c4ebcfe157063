import { sql, type Kysely } from 'kysely';
import { sqlDialect } from '../dialect.js';

// Search side tables, reviews and counters in portable types; only the full-text index is per dialect.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agent_capabilities')
    .addColumn('did', 'text', (col) => col.notNull().references('agents.did'))
    .addColumn('type', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('agent_capabilities_pk', ['did', 'type'])
    .execute();
  await db.schema
    .createIndex('agent_capabilities_type_idx')
    .on('agent_capabilities')
    .columns(['type', 'did'])
    .execute();

  await db.schema
    .createTable('agent_tags')
    .addColumn('did', 'text', (col) => col.notNull().references('agents.did'))
    .addColumn('tag', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('agent_tags_pk', ['did', 'tag'])
    .execute();
  await db.schema.createIndex('agent_tags_tag_idx').on('agent_tags').columns(['tag', 'did']).execute();

  // Search sorts by reputation (ties: newest first, then DID) straight off this index.
  await db.schema
    .createIndex('agents_status_reputation_idx')
    .on('agents')
    .columns(['status', 'reputation_score', 'created_at', 'did'])
    .execute();
  // Filtered searches check and order the agents a side table names without reading their rows.
  await db.schema
    .createIndex('agents_did_search_idx')
    .on('agents')
    .columns(['did', 'status', 'reputation_score', 'created_at'])
    .execute();

  await db.schema
    .createTable('reviews')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('reviewer_did', 'text', (col) => col.notNull().references('agents.did'))
    .addColumn('target_did', 'text', (col) => col.notNull().references('agents.did'))
    .addColumn('rating', 'integer', (col) => col.notNull())
    .addColumn('comment', 'text')
    .addColumn('verified', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('call_record_id', 'text')
    .addColumn('edit_count', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();
  // One review per reviewer per agent, even when two requests race.
  await db.schema
    .createIndex('reviews_reviewer_target_idx')
    .on('reviews')
    .columns(['reviewer_did', 'target_did'])
    .unique()
    .execute();
  // An agent's reviews, newest first, and the recomputation of its aggregates.
  await db.schema
    .createIndex('reviews_target_created_idx')
    .on('reviews')
    .columns(['target_did', 'created_at'])
    .execute();
  // A reviewer's own reviews and the rate-limit window.
  await db.schema
    .createIndex('reviews_reviewer_created_idx')
    .on('reviews')
    .columns(['reviewer_did', 'created_at'])
    .execute();

  await db.schema
    .createTable('registry_counters')
    .addColumn('name', 'text', (col) => col.primaryKey())
    .addColumn('value', 'bigint', (col) => col.notNull().defaultTo(0))
    .execute();

  if (sqlDialect(db) === 'sqlite') {
    // FTS5 rowids must be stable integers; agents has a text key, so map DIDs to integer ids here.
    await sql`create table agents_fts_ids (
      id integer primary key,
      did text not null unique references agents (did)
    )`.execute(db);
    await sql`create virtual table agents_fts using fts5(
      name, description, capabilities, tags,
      content = '', contentless_delete = 1, prefix = '2 3',
      tokenize = 'porter unicode61 remove_diacritics 2'
    )`.execute(db);
  } else {
    await sql`create table agents_fts (
      did text primary key references agents (did),
      document tsvector not null
    )`.execute(db);
    await sql`create index agents_fts_document_idx on agents_fts using gin (document)`.execute(db);
  }

  // Agents registered before this migration were indexed here until migration 009 dropped the SQL
  // search structures: a database migrating now reaches 009 in the same run, so nothing is filled.
}
