import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../connect.js';
import { sqlDialect } from '../dialect.js';
import { countFullTextMatches, fullTextSource, topMatches } from '../full-text.js';
import type { AgentsTable } from '../schema/index.js';

export type SearchSort = 'relevance' | 'reputation' | 'created_at' | 'success_rate' | 'latency';
export type SearchOrder = 'asc' | 'desc';

export interface AgentSearchFilter {
  /** Full-text terms (see db/full-text.ts); every term must match. */
  terms?: readonly string[];
  /** Capability type, already in search-key form. */
  capability?: string;
  /** Any of these tags, already in search-key form. */
  tags?: readonly string[];
  minReputation?: number;
  /** 30-day success rate, 0-1 (agents without a measured record are left out). */
  minSuccessRate?: number;
  /** Epoch ms: only agents that completed a counted call at or after it. */
  activeSince?: number;
  sort: SearchSort;
  order: SearchOrder;
  limit: number;
  offset: number;
}

export type AgentSearchRow = Pick<
  AgentsTable,
  | 'did'
  | 'name'
  | 'description'
  | 'capabilities'
  | 'tags'
  | 'reputation_score'
  | 'average_rating'
  | 'total_reviews'
  | 'created_at'
  | 'status'
>;

/** Pages this deep or shallower are first looked for by walking the sort order (see `sortedPage`). */
const WALK_MAX_DEPTH = 200;
/** How many agents, in sort order, that walk looks at before collecting the matches instead. */
const WALK_ROWS = 3000;

/**
 * Active agents matching every given filter: one page in the requested order plus the exact total,
 * read in one transaction. Shapes chosen by measuring at 100,000 agents (bench/RESULTS.md):
 *
 * - The search index (side tables and full text) holds active agents only, so a total is counted in
 *   one index: the full-text index for `q`, else the capability index, else the tag index, else the
 *   agents' (status, reputation) index. Any other filter is a correlated EXISTS probe by DID.
 * - Relevance: the full-text index ranks every match and keeps the best `offset + limit + 1`; ties at
 *   the page boundary are settled by reputation then DID, as the order promises.
 * - Reputation or creation order: first walk that order's index, probing the filters, which is fast
 *   when the filters keep many agents; when the walk finds too few, collect the matches from the
 *   filter's index and sort them.
 */
export async function searchAgents(
  db: Db,
  filter: AgentSearchFilter,
): Promise<{ rows: AgentSearchRow[]; total: number }> {
  return db.transaction().execute(async (trx) => {
    const total = await countMatching(trx, filter);
    if (total === 0 || filter.offset >= total) return { rows: [], total };

    const page =
      filter.sort === 'relevance' && filter.terms !== undefined
        ? await relevancePage(trx, filter, filter.terms)
        : await sortedPage(trx, filter, total);
    return { rows: await readSearchRows(trx, page), total };
  });
}

/** The search rows of these agents, in the given order; agents no longer active are left out. */
export async function readSearchRows(db: Db, dids: readonly string[]): Promise<AgentSearchRow[]> {
  if (dids.length === 0) return [];
  const rows = await db
    .selectFrom('agents')
    .select([
      'did',
      'name',
      'description',
      'capabilities',
      'tags',
      'reputation_score',
      'average_rating',
      'total_reviews',
      'created_at',
      'status',
    ])
    .where('did', 'in', dids)
    .where('status', '=', 'active')
    .execute();
  const byDid = new Map(rows.map((row) => [row.did, row]));
  return dids.flatMap((did) => byDid.get(did) ?? []);
}

type Filter = 'capability' | 'tags' | 'minReputation';

/**
 * Conditions on a DID for every filter except those the caller's driving index already applies.
 * `probe`: a correlated lookup per row, for callers that stop early or read few rows. `set`: the
 * capability and tag filters as `did in (...)`, whose DIDs the database collects once (about half the
 * cost when every full-text match is tested, as a count does).
 */
function probes(
  filter: AgentSearchFilter,
  did: RawBuilder<string>,
  skip: readonly Filter[],
  style: 'probe' | 'set' = 'probe',
): RawBuilder<boolean>[] {
  const conditions: RawBuilder<boolean>[] = [];
  if (filter.capability !== undefined && !skip.includes('capability')) {
    conditions.push(
      style === 'set'
        ? sql<boolean>`${did} in (select did from agent_capabilities where type = ${filter.capability})`
        : sql<boolean>`exists (select 1 from agent_capabilities
            where agent_capabilities.did = ${did} and agent_capabilities.type = ${filter.capability})`,
    );
  }
  if (filter.tags !== undefined && !skip.includes('tags')) {
    const tags = sql.join([...filter.tags]);
    conditions.push(
      style === 'set'
        ? sql<boolean>`${did} in (select did from agent_tags where tag in (${tags}))`
        : sql<boolean>`exists (select 1 from agent_tags where agent_tags.did = ${did} and agent_tags.tag in (${tags}))`,
    );
  }
  if (hasAgentColumnFilter(filter) && !skip.includes('minReputation')) {
    conditions.push(sql<boolean>`exists (select 1 from agents as probe
      where probe.did = ${did} and probe.status = 'active'${agentColumnConditions(filter, 'probe')})`);
  }
  return conditions;
}

const hasAgentColumnFilter = (filter: AgentSearchFilter): boolean =>
  filter.minReputation !== undefined ||
  filter.minSuccessRate !== undefined ||
  filter.activeSince !== undefined;

/** The filters on the agent row itself (reputation and the service record), each as ` and ...`. */
function agentColumnConditions(filter: AgentSearchFilter, table: string): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [];
  if (filter.minReputation !== undefined) {
    parts.push(sql` and ${sql.ref(`${table}.reputation_score`)} >= ${filter.minReputation}`);
  }
  if (filter.minSuccessRate !== undefined) {
    parts.push(sql` and ${sql.ref(`${table}.service_success_rate`)} >= ${filter.minSuccessRate}`);
  }
  if (filter.activeSince !== undefined) {
    parts.push(sql` and ${sql.ref(`${table}.service_last_completed_at`)} >= ${filter.activeSince}`);
  }
  return sql.join(parts, sql``);
}

const allOf = (conditions: RawBuilder<boolean>[]): RawBuilder<boolean> =>
  conditions.length === 0 ? sql<boolean>`1 = 1` : sql<boolean>`${sql.join(conditions, sql` and `)}`;

async function countOf(trx: Db, query: RawBuilder<{ count: number }>): Promise<number> {
  const { rows } = await query.execute(trx);
  return Number(rows[0]?.count ?? 0);
}

/** The exact number of matches, counted in the most specific index. */
async function countMatching(trx: Db, filter: AgentSearchFilter): Promise<number> {
  if (filter.terms !== undefined) {
    const source = fullTextSource(trx, filter.terms);
    const others = probes(filter, source.did, [], 'set');
    if (others.length === 0) return countFullTextMatches(trx, filter.terms);
    return countOf(
      trx,
      sql`select count(*) as count from ${source.from} where ${source.match} and ${allOf(others)}`,
    );
  }
  if (filter.capability !== undefined) {
    const others = probes(filter, sql.ref('agent_capabilities.did'), ['capability']);
    return countOf(
      trx,
      sql`select count(*) as count from agent_capabilities
        where agent_capabilities.type = ${filter.capability} and ${allOf(others)}`,
    );
  }
  if (filter.tags !== undefined) {
    const others = probes(filter, sql.ref('tagged.did'), ['tags']);
    return countOf(
      trx,
      sql`select count(*) as count from
        (select distinct did from agent_tags where tag in (${sql.join([...filter.tags])})) as tagged
        where ${allOf(others)}`,
    );
  }
  return countOf(
    trx,
    sql`select count(*) as count from agents where agents.status = 'active'${agentColumnConditions(filter, 'agents')}`,
  );
}

/** Extra matches read past the page, so that a tie at its boundary is usually settled in one read. */
const RELEVANCE_MARGIN = 32;

type RankedRow = { did: string; score: number; reputation: number };

/**
 * Relevance order (bm25 / ts_rank, then reputation, then DID). The full-text index scores every
 * match either way. Without other filters nearly every match passes, so the index keeps only its best
 * few (a bounded heap); with filters, matches are walked in rank order until enough pass, since how
 * many pass among the best cannot be known beforehand.
 */
async function relevancePage(
  trx: Db,
  filter: AgentSearchFilter,
  terms: readonly string[],
): Promise<string[]> {
  const filtered =
    filter.capability !== undefined || filter.tags !== undefined || hasAgentColumnFilter(filter);
  const candidates = filtered
    ? await walkRankOrder(trx, filter, terms)
    : await bestOfIndex(trx, filter, terms);
  const better = filter.order === 'desc' ? 1 : -1;
  candidates.sort(
    (a, b) =>
      better * (a.score - b.score) ||
      b.reputation - a.reputation ||
      (a.did < b.did ? -1 : a.did > b.did ? 1 : 0),
  );
  return candidates.slice(filter.offset, filter.offset + filter.limit).map((row) => row.did);
}

/**
 * The index's best `fetch` matches, their status checked; `fetch` grows only when the tie at the page
 * boundary may continue past the matches read (or an agent deactivated behind the index dropped out).
 */
async function bestOfIndex(
  trx: Db,
  filter: AgentSearchFilter,
  terms: readonly string[],
): Promise<RankedRow[]> {
  const bestFirst = filter.order === 'desc';
  const better = bestFirst ? 1 : -1;
  const want = filter.offset + filter.limit;
  for (let fetch = want + 1 + RELEVANCE_MARGIN; ; fetch *= 4) {
    // The index holds active agents only; the status is still checked on the rows a page reads, so an
    // agent deactivated by an older node during a rolling upgrade never shows (see sweepInactiveFromIndex).
    const { rows } = await sql<RankedRow & { active: number | boolean }>`
      select ranked.did, ranked.score, live.reputation_score as reputation,
        case when live.status = 'active' then 1 else 0 end as active
      from ${topMatches(trx, terms, bestFirst, fetch)} join agents as live on live.did = ranked.did`.execute(
      trx,
    );
    rows.sort((a, b) => better * (a.score - b.score));
    const kept = rows.filter((row) => Number(row.active) === 1);
    const boundary = kept[want - 1]?.score;
    // Every match not read ranks at or after the last one read: if that one ranks after the page's
    // last, nothing unread can enter the page or tie with it.
    const settled = boundary !== undefined && rows.at(-1)?.score !== boundary;
    if (rows.length < fetch || settled) return kept;
  }
}

/**
 * Matches in rank order, their filters probed only until `offset + limit + 1` pass. When the last two
 * of those tie, every passing match of that rank is read so the tie-break is exact.
 */
async function walkRankOrder(
  trx: Db,
  filter: AgentSearchFilter,
  terms: readonly string[],
): Promise<RankedRow[]> {
  const bestFirst = filter.order === 'desc';
  const ranked = topMatches(trx, terms, bestFirst, -1);
  const passes = allOf([
    sql<boolean>`exists (select 1 from agents as live where live.did = ranked.did and live.status = 'active')`,
    ...probes(filter, sql.ref('ranked.did'), []),
  ]);
  const want = filter.offset + filter.limit;
  const inOrder = (rows: { score: number }[]) =>
    rows.every((row, index) => {
      const previous = rows[index - 1];
      return (
        previous === undefined || (bestFirst ? previous.score <= row.score : previous.score >= row.score)
      );
    });
  const direction = bestFirst ? sql`asc` : sql`desc`;
  // SQLite runs the ordered subquery as a co-routine and probes its rows in that order, so the walk
  // stops after `want + 1` pass. PostgreSQL may plan the probes as a hash join that drops the order
  // while the few rows returned still look ordered: there the outer query sorts (every match probed).
  const outerOrder = sqlDialect(trx) === 'sqlite' ? sql`` : sql`order by ranked.score ${direction}`;
  let { rows: walked } = await sql<{ did: string; score: number }>`select ranked.did, ranked.score
    from ${ranked} where ${passes} ${outerOrder} limit ${want + 1}`.execute(trx);
  if (!inOrder(walked)) {
    // The rank order of a subquery is an implementation detail of the database; if it ever does not
    // hold, sort explicitly (every match is then probed).
    walked = (
      await sql<{ did: string; score: number }>`select ranked.did, ranked.score from ${ranked}
        where ${passes} order by ranked.score ${direction} limit ${want + 1}`.execute(trx)
    ).rows;
  }
  let candidates = walked;
  const boundary = walked[want - 1]?.score;
  if (walked.length > want && boundary !== undefined && walked[want]?.score === boundary) {
    const { rows: tied } = await sql<{ did: string; score: number }>`select ranked.did, ranked.score
      from ${ranked} where ranked.score = ${boundary} and ${passes}`.execute(trx);
    candidates = [...walked.filter((row) => row.score !== boundary), ...tied];
  }
  const reputations = new Map<string, number>();
  const dids = candidates.map((row) => row.did);
  for (let start = 0; start < dids.length; start += 500) {
    const rows = await trx
      .selectFrom('agents')
      .select(['did', 'reputation_score'])
      .where('did', 'in', dids.slice(start, start + 500))
      .execute();
    for (const row of rows) reputations.set(row.did, row.reputation_score);
  }
  return candidates.map((row) => ({ ...row, reputation: reputations.get(row.did) ?? 0 }));
}

/** Reputation, creation or service-record order (see `sortOrder`), either direction. */
async function sortedPage(trx: Db, filter: AgentSearchFilter, total: number): Promise<string[]> {
  const orderBy = (table: string) => sortOrder(filter, table);
  const minimum = agentColumnConditions(filter, 'agents');
  const page = sql`limit ${filter.limit} offset ${filter.offset}`;
  const dids = (rows: { did: string }[]) => rows.map((row) => row.did);

  const filtered = filter.terms !== undefined || filter.capability !== undefined || filter.tags !== undefined;
  if (!filtered) {
    // The (status, reputation_score, created_at, did) or (status, created_at) index answers in order.
    const { rows } = await sql<{ did: string }>`select agents.did from agents
      where agents.status = 'active'${minimum} order by ${orderBy('agents')} ${page}`.execute(trx);
    return dids(rows);
  }

  const wanted = Math.min(filter.limit, total - filter.offset);
  if (filter.terms === undefined && filter.offset + filter.limit <= WALK_MAX_DEPTH) {
    // Walk the first WALK_ROWS agents in this order and probe the filters: enough when they keep many.
    const walked = sql`(select agents.did, agents.reputation_score, agents.created_at,
      agents.service_success_rate, agents.service_latency_p50_ms, agents.service_calls_30d from agents
      where agents.status = 'active'${minimum} order by ${orderBy('agents')} limit ${WALK_ROWS}) as walked`;
    const { rows } = await sql<{ did: string }>`select walked.did from ${walked}
      where ${allOf(probes(filter, sql.ref('walked.did'), ['minReputation']))}
      order by ${orderBy('walked')} ${page}`.execute(trx);
    if (rows.length >= wanted) return dids(rows);
  }

  // Collect the matches from the filter's own index, then sort them. SQLite keeps the join order as
  // written with CROSS JOIN; PostgreSQL plans the join itself.
  const join = sqlDialect(trx) === 'sqlite' ? sql`cross join` : sql`join`;
  let driver: RawBuilder<unknown>;
  let skip: Filter[];
  let driverDid: RawBuilder<string>;
  if (filter.terms !== undefined) {
    const source = fullTextSource(trx, filter.terms);
    driver = sql`(select ${source.did} as did from ${source.from} where ${source.match}) as matches`;
    driverDid = sql<string>`matches.did`;
    skip = ['minReputation'];
  } else if (filter.capability !== undefined) {
    driver = sql`(select did from agent_capabilities where type = ${filter.capability}) as matches`;
    driverDid = sql<string>`matches.did`;
    skip = ['capability', 'minReputation'];
  } else {
    driver = sql`(select distinct did from agent_tags where tag in (${sql.join([...(filter.tags ?? [])])})) as matches`;
    driverDid = sql<string>`matches.did`;
    skip = ['tags', 'minReputation'];
  }
  const { rows } = await sql<{
    did: string;
  }>`select agents.did from ${driver} ${join} agents on agents.did = ${driverDid}
    where agents.status = 'active'${minimum} and ${allOf(probes(filter, driverDid, skip))}
    order by ${orderBy('agents')} ${page}`.execute(trx);
  return dids(rows);
}

/**
 * ORDER BY for the sorted (non-relevance) orders. `desc` means best first for the service record:
 * highest success rate, or lowest median latency. Agents without a measured record come last in
 * either direction (they are unmeasured, not worst); ties by 30-day calls, then DID.
 */
function sortOrder(filter: AgentSearchFilter, table: string): RawBuilder<unknown> {
  const dir = filter.order === 'asc' ? sql`asc` : sql`desc`;
  const column = (name: string) => sql.ref(`${table}.${name}`);
  switch (filter.sort) {
    case 'created_at':
      return sql`${column('created_at')} ${dir}, ${column('did')} ${dir}`;
    case 'success_rate':
      return sql`case when ${column('service_success_rate')} is null then 1 else 0 end asc,
        ${column('service_success_rate')} ${dir}, ${column('service_calls_30d')} desc, ${column('did')} asc`;
    case 'latency': {
      const fastestFirst = filter.order === 'asc' ? sql`desc` : sql`asc`;
      return sql`case when ${column('service_latency_p50_ms')} is null then 1 else 0 end asc,
        ${column('service_latency_p50_ms')} ${fastestFirst}, ${column('service_calls_30d')} desc, ${column('did')} asc`;
    }
    default:
      return sql`${column('reputation_score')} ${dir}, ${column('created_at')} ${dir}, ${column('did')} ${dir}`;
  }
}
