import { sql, type Kysely } from 'kysely';

/**
 * Every write to an agent's public profile stamps the agent with the next value of one registry-wide
 * sequence (`change_feed_head`), taken as the last statement of the writing transaction. The head row is
 * locked from that update until commit, so sequence order is commit order on every dialect and node
 * (docs/decisions/search.md, "Change feed"): a reader that sees head H has every change <= H. Existing agents
 * are numbered in (updated_at, did) order.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('agents').addColumn('change_seq', 'bigint').execute();
  await sql`update agents set change_seq = numbered.seq
    from (select did, row_number() over (order by updated_at, did) as seq from agents) as numbered
    where numbered.did = agents.did`.execute(db);
  // Not unique (the head row already hands each number out once): on PostgreSQL, updating a column of
  // a unique index is a key update, which waits for every foreign-key share lock on the row (a review
  // or task being inserted for the agent) and deadlocked with them against the head row's lock.
  await db.schema.createIndex('agents_change_seq_idx').on('agents').column('change_seq').execute();

  await db.schema
    .createTable('change_feed_head')
    .addColumn('id', 'integer', (col) => col.primaryKey())
    .addColumn('seq', 'bigint', (col) => col.notNull())
    .execute();
  await sql`insert into change_feed_head (id, seq) select 1, coalesce(max(change_seq), 0) from agents`.execute(
    db,
  );
}
