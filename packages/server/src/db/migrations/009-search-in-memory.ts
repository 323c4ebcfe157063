import { sql, type Kysely } from 'kysely';

/**
 * Search runs on each node's in-memory index, and the service-record searches take their words,
 * capability and tag matches from it, so the SQL search structures that every registration and profile
 * update wrote are read by nothing (docs/decisions/search.md, "SQL search structures"): the full-text index
 * (SQLite FTS5 and its id table, PostgreSQL's tsvector table), the capability and tag side tables, and
 * the agents' indexes for the SQL search orders. What the database still answers in a search is the
 * service record, through partial indexes that hold only agents with a record (none for a new agent, so
 * registration pays nothing). Older nodes write the dropped tables: docs/operations.md.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // agents_fts is an FTS5 virtual table on SQLite (agents_fts_ids gave it integer ids), a table with a
  // GIN index on PostgreSQL; `drop table` removes either, with its indexes.
  for (const table of ['agents_fts', 'agents_fts_ids', 'agent_capabilities', 'agent_tags']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
  await db.schema.dropIndex('agents_did_search_idx').ifExists().execute();
  await db.schema.dropIndex('agents_status_reputation_idx').ifExists().execute();

  // Agents with calls in the last 30 days: the ones a success-rate or latency sort orders, and the only
  // ones with a success rate. Queries repeat the literal condition so that both databases use it.
  await db.schema
    .createIndex('agents_service_calls_idx')
    .on('agents')
    .column('service_calls_30d')
    .where(sql.ref('service_calls_30d'), '>', sql.lit(0))
    .execute();
  // Agents that ever completed a counted call, for active_within_days.
  await db.schema
    .createIndex('agents_service_last_completed_idx')
    .on('agents')
    .column('service_last_completed_at')
    .where(sql.ref('service_last_completed_at'), 'is not', null)
    .execute();
}
