import { sql, type RawBuilder } from 'kysely';
import { compiledOnce, type CompiledRead } from '../../db/compiled.js';
import type { Db } from '../../db/connect.js';
import type { AgentsTable } from '../../db/schema/index.js';

export type SearchSort =
  'relevance' | 'reputation' | 'created_at' | 'success_rate' | 'latency' | 'availability';
export type SearchOrder = 'asc' | 'desc';
export type ServiceRecordSort = Extract<SearchSort, 'success_rate' | 'latency'>;

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
  | 'updated_at'
  | 'status'
  | 'change_seq'
>;

/**
 * What the search index holds of an agent, and the change number it was read at: the index's loads
 * and catch-ups read these, a search page reads them and `updated_at`. The change number is also what
 * a rendering of the row is kept by (modules/ard): it moves with every change, updated_at may not.
 */
export const INDEXED_AGENT_COLUMNS = [
  'did',
  'name',
  'description',
  'capabilities',
  'tags',
  'status',
  'reputation_score',
  'average_rating',
  'total_reviews',
  'created_at',
  'change_seq',
] as const;

/**
 * The rows a search page shows, by DID. No `status` condition in SQL: with one, SQLite's planner (the
 * registry never runs ANALYZE) preferred the (status, created_at) index over the DID index for `in`, and
 * every page scanned all active agents.
 */
export function searchRowsQuery(db: Db, dids: readonly string[]) {
  return db
    .selectFrom('agents')
    .select([...INDEXED_AGENT_COLUMNS, 'updated_at'])
    .where('did', 'in', dids);
}

/**
 * searchRowsQuery compiled once per page size: every search reads its page's rows, and building and
 * compiling it costs more than SQLite's lookups (docs/decisions/performance.md, "A search's statements").
 */
const searchRowsBySize = new Map<number, CompiledRead<AgentSearchRow, string[]>>();

function searchRowsRead(size: number): CompiledRead<AgentSearchRow, string[]> {
  let read = searchRowsBySize.get(size);
  if (read === undefined) {
    const placeholders = Array.from({ length: size }, (_, index) => `\u0000did${index}`);
    read = compiledOnce((db, ...dids: string[]) => searchRowsQuery(db, dids), placeholders);
    searchRowsBySize.set(size, read);
  }
  return read;
}

/** The search rows of these agents, in the given order; agents no longer active are left out. */
export async function readSearchRows(db: Db, dids: readonly string[]): Promise<AgentSearchRow[]> {
  if (dids.length === 0) return [];
  const rows = await searchRowsRead(dids.length)(db, ...dids);
  const byDid = new Map<string, AgentSearchRow>();
  for (const row of rows) if (row.status === 'active') byDid.set(row.did, row);
  return dids.flatMap((did) => byDid.get(did) ?? []);
}

/** An agent's status and change number only: enough to tell whether a kept rendering of it is current. */
const changeByDid = compiledOnce(
  (db, did: string) => db.selectFrom('agents').select(['status', 'change_seq']).where('did', '=', did),
  ['\u0000did'] as const,
);

export async function readSearchChange(
  db: Db,
  did: string,
): Promise<{ status: AgentSearchRow['status']; change_seq: number | null } | undefined> {
  return (await changeByDid(db, did))[0];
}

/** One agent's search row, whatever its status. */
const searchRowByDid = compiledOnce((db, did: string) => searchRowsQuery(db, [did]), ['\u0000did'] as const);

export async function readSearchRow(db: Db, did: string): Promise<AgentSearchRow | undefined> {
  return (await searchRowByDid(db, did))[0];
}

/** What a filtered listing tests of an agent before reading its whole row. */
export interface CreationOrderRow {
  did: string;
  name: string;
  created_at: number;
  updated_at: number;
}

export interface CreationOrderOptions {
  createdAfter?: number;
  after?: { createdAt: number; did: string };
  limit: number;
}

/**
 * Active agents in creation order (created_at, then DID), created after `createdAfter` and after the
 * position `after`, at most `limit`: one range of the (status, created_at) index, so a read costs the
 * rows it returns whatever the registry holds.
 */
export function creationOrderQuery(db: Db, options: CreationOrderOptions) {
  let query = db
    .selectFrom('agents')
    .select(['did', 'name', 'created_at', 'updated_at'])
    .where('status', '=', 'active');
  if (options.createdAfter !== undefined) query = query.where('created_at', '>', options.createdAfter);
  const after = options.after;
  if (after !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '>', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('did', '>', after.did)]),
      ]),
    );
  }
  return query.orderBy('created_at').orderBy('did').limit(options.limit);
}

export async function activeAgentsInCreationOrder(
  db: Db,
  options: CreationOrderOptions,
): Promise<CreationOrderRow[]> {
  const rows = await creationOrderQuery(db, options).execute();
  return rows.map((row) => ({
    ...row,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  }));
}

export interface ServiceRecordFilter {
  /** 30-day success rate, 0-1 (agents without a measured record are left out). */
  minSuccessRate?: number;
  /** Epoch ms: only agents that completed a counted call at or after it. */
  activeSince?: number;
  /** In this order of the record; in no particular order without it. */
  sort?: { sort: ServiceRecordSort; order: SearchOrder };
}

/**
 * The active agents the service-record part of a search keeps, by DID: those passing the record's
 * filters or, without filters, every agent with calls in the last 30 days (the only agents whose record
 * orders them: all others tie). Read through the partial indexes of migration 009, which hold only
 * agents that have a record, so this costs what the record holds, not what the registry holds.
 */
export function agentsByServiceRecordQuery(db: Db, filter: ServiceRecordFilter) {
  // Status is tested here, not in SQL: with it in SQL, SQLite's planner (no ANALYZE) took the
  // (status, created_at) index and read every active agent instead of the partial index.
  let query = db.selectFrom('agents').select(['did', 'status']);
  // A success rate exists exactly when there were calls in the window (`service_calls_30d > 0`); saying
  // so lets the database use the partial index on that condition.
  if (filter.minSuccessRate !== undefined || filter.activeSince === undefined) {
    query = query.where('service_calls_30d', '>', sql.lit(0));
  }
  if (filter.minSuccessRate !== undefined) {
    query = query.where('service_success_rate', '>=', filter.minSuccessRate);
  }
  if (filter.activeSince !== undefined) {
    query = query.where('service_last_completed_at', '>=', filter.activeSince);
  }
  if (filter.sort !== undefined)
    query = query.orderBy(serviceRecordOrder(filter.sort.sort, filter.sort.order));
  return query;
}

export async function agentsByServiceRecord(db: Db, filter: ServiceRecordFilter): Promise<string[]> {
  const query = agentsByServiceRecordQuery(db, filter);
  return (await query.execute()).flatMap((row) => (row.status === 'active' ? [row.did] : []));
}

/**
 * ORDER BY on the service record. `desc` means best first: highest success rate, or lowest median
 * latency. Agents without a measured value come last in either direction (they are unmeasured, not
 * worst); ties by 30-day calls, then DID ascending. Agents without calls in the window have neither
 * value and no calls, so among themselves they are in DID order (modules/service-record/service-record-search.ts).
 */
function serviceRecordOrder(sort: ServiceRecordSort, order: SearchOrder): RawBuilder<unknown> {
  const dir = order === 'asc' ? sql`asc` : sql`desc`;
  if (sort === 'success_rate') {
    return sql`case when service_success_rate is null then 1 else 0 end asc,
      service_success_rate ${dir}, service_calls_30d desc, did asc`;
  }
  const fastestFirst = order === 'asc' ? sql`desc` : sql`asc`;
  return sql`case when service_latency_p50_ms is null then 1 else 0 end asc,
    service_latency_p50_ms ${fastestFirst}, service_calls_30d desc, did asc`;
}
