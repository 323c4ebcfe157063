import { sql, type Kysely } from 'kysely';
import { sqlDialect } from '../dialect.js';

/**
 * The profile columns a log record holds, as the stamp wrote them when this migration was written
 * (modules/agents/agents-store.ts PROFILE_COLUMNS). Copied, not imported: a migration never follows
 * live code.
 */
const PROFILE_COLUMNS = [
  'did',
  'name',
  'description',
  'avatar',
  'website',
  'public_key',
  'key_type',
  'chain_id',
  'capabilities',
  'tags',
  'status',
  'invocation_enabled',
  'delivery_mode',
  'webhook_probes',
  'average_rating',
  'reputation_score',
  'total_reviews',
  'created_at',
  'updated_at',
] as const;

/**
 * Every agent whose latest change predates the transparency log (migration 014) enters it: each takes
 * the change feed's next number, in the order of its last change, and one `update` record of its
 * profile as it stands, so `log-proof` and `verify` cover it and mirrors receive it
 * (docs/decisions/transparency-log.md, "Agents older than the log enter it at the upgrade").
 * The profile itself is untouched (its updated_at stays): the leaf's digest is that of the profile
 * served. One transaction, a fixed number of statements whatever the number of agents; the head row
 * is taken first, so a node of the earlier release writing meanwhile waits for it and numbers after.
 * A second run finds nothing to log.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const dialect = sqlDialect(db);
  const head = await sql<{ seq: number | string }>`
    update change_feed_head set seq = seq where id = 1 returning seq`.execute(db);
  const before = head.rows[0];
  if (before === undefined) throw new Error('change_feed_head row is missing (migration 008)');
  const headSeq = Number(before.seq);

  await sql`update agents set change_seq = ${headSeq} + numbered.n
    from (
      select did, row_number() over (order by change_seq, did) as n from agents
      where change_seq is null or change_seq < (select first_seq from log_start where id = 1)
    ) as numbered
    where numbered.did = agents.did`.execute(db);

  const pairs = PROFILE_COLUMNS.map((column) => `'${column}', ${column}`).join(', ');
  const record = dialect === 'postgres' ? `json_build_object(${pairs})::text` : `json_object(${pairs})`;
  await sql`insert into log_records (seq, operation, record)
    select change_seq, 'update', ${sql.raw(record)} from agents
    where change_seq > ${headSeq} order by change_seq`.execute(db);

  await sql`update change_feed_head
    set seq = (select coalesce(max(change_seq), ${headSeq}) from agents where change_seq > ${headSeq})
    where id = 1`.execute(db);
}
