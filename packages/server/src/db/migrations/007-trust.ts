import { sql, type Kysely } from 'kysely';

/**
 * The measured service record (daily rollups written in the transaction that ends a task),
 * the caller -> target pairs that reputation v2 reads for breadth and reciprocity, the evidence that
 * links identities of one operator, and the per-agent record columns search sorts and filters on.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per (agent, capability, UTC day): outcome counts and a fixed latency histogram.
  let daily = db.schema
    .createTable('service_daily')
    .addColumn('did', 'text', (col) => col.notNull())
    .addColumn('capability', 'text', (col) => col.notNull())
    .addColumn('day', 'integer', (col) => col.notNull())
    .addColumn('completed', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('timeout', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('last_completed_at', 'bigint');
  for (let bucket = 0; bucket < LATENCY_BUCKET_COUNT; bucket += 1) {
    daily = daily.addColumn(`lat_${bucket}`, 'integer', (col) => col.notNull().defaultTo(0));
  }
  await daily.addPrimaryKeyConstraint('service_daily_pk', ['did', 'day', 'capability']).execute();

  // Distinct callers, exactly: one row per (agent, capability, day, caller), kept for the 30-day window.
  await db.schema
    .createTable('service_callers')
    .addColumn('did', 'text', (col) => col.notNull())
    .addColumn('day', 'integer', (col) => col.notNull())
    .addColumn('capability', 'text', (col) => col.notNull())
    .addColumn('caller_did', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('service_callers_pk', ['did', 'day', 'capability', 'caller_did'])
    .execute();

  // All-time totals per (agent, capability): what the daily rows roll up into once they are pruned.
  await db.schema
    .createTable('service_totals')
    .addColumn('did', 'text', (col) => col.notNull())
    .addColumn('capability', 'text', (col) => col.notNull())
    .addColumn('completed', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('timeout', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('last_completed_at', 'bigint')
    .addPrimaryKeyConstraint('service_totals_pk', ['did', 'capability'])
    .execute();

  // Who really called whom (a completed, counted invocation), for reviewer breadth and reciprocity.
  await db.schema
    .createTable('call_partners')
    .addColumn('caller_did', 'text', (col) => col.notNull())
    .addColumn('target_did', 'text', (col) => col.notNull())
    .addColumn('completed', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('first_completed_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('call_partners_pk', ['caller_did', 'target_did'])
    .execute();
  await db.schema
    .createIndex('call_partners_target_idx')
    .on('call_partners')
    .columns(['target_did', 'caller_did'])
    .execute();

  // Evidence that identities share an operator: agents with a common key are linked.
  await db.schema
    .createTable('identity_evidence')
    .addColumn('did', 'text', (col) => col.notNull())
    .addColumn('evidence', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('identity_evidence_pk', ['did', 'evidence'])
    .execute();
  await db.schema
    .createIndex('identity_evidence_key_idx')
    .on('identity_evidence')
    .columns(['evidence', 'did'])
    .execute();

  // The 30-day summary search sorts and filters on, kept on the agent row.
  await db.schema.alterTable('agents').addColumn('service_success_rate', 'double precision').execute();
  await db.schema.alterTable('agents').addColumn('service_latency_p50_ms', 'double precision').execute();
  await db.schema
    .alterTable('agents')
    .addColumn('service_calls_30d', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('agents').addColumn('service_last_completed_at', 'bigint').execute();

  await backfill(db);
}

/** Latency bucket edges in ms as this migration counts them (frozen: later releases may change theirs). */
const LATENCY_EDGES_MS = [50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 60_000, 120_000] as const;
/** Must equal LATENCY_BUCKETS_MS.length + 1 in modules/service-record/service-record-model.ts (a test checks it). */
export const LATENCY_BUCKET_COUNT = LATENCY_EDGES_MS.length + 1;
const DAY_MS = 86_400_000;
const WINDOW_DAYS = 30;
/** Rows per multi-row statement: far below either database's parameter limit. */
const BATCH = 500;

/**
 * What the registry already knows when this migration runs: links from the webhooks and referrers on
 * file, then every finished task, counted as the broker counts new ones. Written against the tables
 * with the rules of this release frozen here, set-based (one INSERT ... SELECT per table, not a
 * statement per task), so it runs inside the migration's transaction in one pass over `tasks`.
 * Agents' reputation moves to v2 at their next review or the next periodic refresh.
 */
async function backfill(db: Kysely<unknown>): Promise<void> {
  // Webhook hosts: a URL's host is the URL parser's answer (case, IDN, brackets), not a substring.
  const hooks = await sql<{ did: string; webhook_url: string; created_at: number | string }>`
    select did, webhook_url, created_at from agents where webhook_url is not null`.execute(db);
  const hostEvidence: [string, string, number][] = [];
  for (const { did, webhook_url: url, created_at: at } of hooks.rows) {
    try {
      hostEvidence.push([did, `webhook-host:${new URL(url).hostname.toLowerCase()}`, Number(at)]);
    } catch {
      // A stored URL that no longer parses links nothing.
    }
  }
  for (let from = 0; from < hostEvidence.length; from += BATCH) {
    const rows = hostEvidence
      .slice(from, from + BATCH)
      .map(([did, evidence, at]) => sql`(${did}, ${evidence}, ${at})`);
    await sql`insert into identity_evidence (did, evidence, created_at) values ${sql.join(rows)}
      on conflict do nothing`.execute(db);
  }

  // A referrer that names a registered agent links the two; DIDs compare as the registry spells them
  // in any case, with the domain's port written `:` or `%3A`.
  const key = (column: string) => sql`replace(lower(trim(${sql.ref(column)})), '%3a', ':')`;
  const referrals = sql`referred as materialized (
      select a.did as did, r.did as referrer_did, a.created_at as created_at
      from agents a
      join (select did, ${key('did')} as k from agents) r on r.k = ${key('a.referrer')}
      where a.referrer is not null and r.did <> a.did
    )`;
  await sql`with ${referrals}
    insert into identity_evidence (did, evidence, created_at)
    select did, 'referral:' || referrer_did, created_at from referred where true
    on conflict do nothing`.execute(db);
  await sql`with ${referrals}
    insert into identity_evidence (did, evidence, created_at)
    select referrer_did, 'referral:' || referrer_did, min(created_at) from referred where true
    group by referrer_did
    on conflict do nothing`.execute(db);

  // Finished tasks between identities that are not linked (nor one agent calling itself).
  const counted = sql`counted as materialized (
      select t.target_did as did, t.capability as capability, t.caller_did as caller_did,
        t.status as status, t.completed_at as completed_at, t.completed_at - t.created_at as latency,
        t.completed_at / ${sql.lit(DAY_MS)} as day
      from tasks t
      where t.status in ('completed', 'failed', 'timeout') and t.completed_at is not null
        and t.caller_did <> t.target_did
        and not exists (
          select 1 from identity_evidence mine
          join identity_evidence theirs on theirs.evidence = mine.evidence
          where mine.did = t.caller_did and theirs.did = t.target_did
        )
    )`;
  const count = (status: string) => sql`sum(case when status = ${sql.lit(status)} then 1 else 0 end)`;
  const lastCompleted = sql`max(case when status = 'completed' then completed_at end)`;
  const buckets = Array.from({ length: LATENCY_BUCKET_COUNT }, (_, bucket) => {
    const lower = bucket === 0 ? undefined : LATENCY_EDGES_MS[bucket - 1];
    const upper = LATENCY_EDGES_MS[bucket];
    const conditions = [
      ...(lower === undefined ? [] : [sql`latency > ${sql.lit(lower)}`]),
      ...(upper === undefined ? [] : [sql`latency <= ${sql.lit(upper)}`]),
    ];
    return sql`sum(case when status = 'completed' and ${sql.join(conditions, sql` and `)} then 1 else 0 end)`;
  });
  const latencyColumns = sql.join(buckets.map((_, bucket) => sql.ref(`lat_${bucket}`)));
  await sql`with ${counted}
    insert into service_daily (did, capability, day, completed, failed, timeout, last_completed_at, ${latencyColumns})
    select did, capability, day, ${count('completed')}, ${count('failed')}, ${count('timeout')}, ${lastCompleted},
      ${sql.join(buckets)}
    from counted group by did, capability, day`.execute(db);
  await sql`with ${counted}
    insert into service_totals (did, capability, completed, failed, timeout, last_completed_at)
    select did, capability, ${count('completed')}, ${count('failed')}, ${count('timeout')}, ${lastCompleted}
    from counted group by did, capability`.execute(db);
  await sql`with ${counted}
    insert into service_callers (did, day, capability, caller_did)
    select distinct did, day, capability, caller_did from counted`.execute(db);
  await sql`with ${counted}
    insert into call_partners (caller_did, target_did, completed, first_completed_at)
    select caller_did, did, count(*), min(completed_at) from counted where status = 'completed'
    group by caller_did, did`.execute(db);

  await backfillSummaries(db);
}

/** The 30-day columns search reads, for every agent with a record, as of now. */
async function backfillSummaries(db: Kysely<unknown>): Promise<void> {
  const today = Math.floor(Date.now() / DAY_MS);
  const latencySums = sql.join(
    Array.from({ length: LATENCY_BUCKET_COUNT }, (_, bucket) => sql`sum(${sql.ref(`d.lat_${bucket}`)})`),
    sql` || ',' || `,
  );
  const rows = await sql<{
    did: string;
    completed: number | string | null;
    failed: number | string | null;
    timeout: number | string | null;
    latency: string | null;
    last: number | string | null;
  }>`select t.did as did, w.completed as completed, w.failed as failed, w.timeout as timeout,
      w.latency as latency, t.last as last
    from (select did, max(last_completed_at) as last from service_totals group by did) t
    left join (
      select d.did as did, sum(d.completed) as completed, sum(d.failed) as failed, sum(d.timeout) as timeout,
        ${latencySums} as latency
      from service_daily d where d.day > ${today - WINDOW_DAYS} and d.day <= ${today}
      group by d.did
    ) w on w.did = t.did`.execute(db);
  const summaries = rows.rows.map((row) => {
    const completed = Number(row.completed ?? 0);
    const invocations = completed + Number(row.failed ?? 0) + Number(row.timeout ?? 0);
    const histogram = (row.latency ?? '')
      .split(',')
      .filter((part) => part !== '')
      .map(Number);
    return sql`(${row.did}, cast(${invocations === 0 ? null : Math.round((completed / invocations) * 10_000) / 10_000} as double precision),
      cast(${median(histogram)} as double precision), cast(${invocations} as integer),
      cast(${row.last === null ? null : Number(row.last)} as bigint))`;
  });
  for (let from = 0; from < summaries.length; from += BATCH) {
    // Both databases name a VALUES list's columns column1, column2, ...
    await sql`update agents set service_success_rate = v.column2, service_latency_p50_ms = v.column3,
        service_calls_30d = v.column4, service_last_completed_at = v.column5
      from (values ${sql.join(summaries.slice(from, from + BATCH))}) as v
      where agents.did = v.column1`.execute(db);
  }
}

/** The median of a latency histogram, interpolated inside its bucket; the open last bucket gives its lower edge. */
function median(histogram: readonly number[]): number | null {
  const total = histogram.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = 0.5 * total;
  let below = 0;
  for (let index = 0; index < histogram.length; index += 1) {
    const count = histogram[index] ?? 0;
    if (count > 0 && below + count >= rank) {
      const lower = index === 0 ? 0 : (LATENCY_EDGES_MS[index - 1] ?? 0);
      const upper = LATENCY_EDGES_MS[index];
      if (upper === undefined) return lower;
      return Math.round(lower + ((rank - below) / count) * (upper - lower));
    }
    below += count;
  }
  return LATENCY_EDGES_MS[LATENCY_EDGES_MS.length - 1] ?? 0;
}
