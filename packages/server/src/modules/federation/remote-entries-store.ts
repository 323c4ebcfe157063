import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/connect.js';
import { compiledOnce, type CompiledRead } from '../../db/compiled.js';
import { sqlDialect } from '../../db/dialect.js';
import type { RemoteEntriesTable } from '../../db/schema/index.js';
import { findAgentStatus } from '../agents/agents-store.js';
import { sameHomeFigures } from '../search/home-report-schema.js';

export type RemoteEntryRow = Selectable<RemoteEntriesTable>;

/** What a source writes of an entry; the store numbers it and keeps its first-seen time. */
export type RemoteEntryWrite = Omit<
  RemoteEntryRow,
  'seq' | 'created_at' | 'updated_at' | 'status' | 'home_report'
> & {
  /** A mirrored entry's HomeReport (JSON text); imported entries have none. */
  home_report?: string | null;
};

/**
 * How many entries one source may hold (listed or shadowed), for one round of its writes: counted
 * once when the round starts and kept up to date by the writes that go through it, so a source that
 * names new entries every round stops at `max` without a count per write.
 */
export interface EntryQuota {
  readonly sourceId: string;
  readonly max: number;
  /** Entries the source holds now. */
  held: number;
  /** New entries refused this round because the source held `max`. */
  refused: number;
}

export async function entryQuota(db: Db, sourceId: string, max: number): Promise<EntryQuota> {
  const row = await db
    .selectFrom('remote_entries')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('source_id', '=', sourceId)
    .where('status', '!=', 'removed')
    .executeTakeFirst();
  return { sourceId, max, held: Number(row?.n ?? 0), refused: 0 };
}

/** What a write did: stored and listed, stored but shadowed, nothing to change, or over the quota. */
export type RemoteEntryWriteResult = 'listed' | 'shadowed' | 'unchanged' | 'refused';

/**
 * Adds or replaces an entry, numbering the change after every other remote change. Every node runs the
 * importers: on PostgreSQL the write takes a transaction-scoped advisory lock first, so numbers are
 * handed out and committed in one order (a follower reading `seq > position` never skips a change
 * committed late); SQLite has one writer at a time already. The unique index on seq is the backstop.
 *
 * An entry that names a DID is listed only if no agent registered here has that DID and no other
 * source owns it better (`relistDid`); otherwise it is kept `shadowed`. A new entry of a source that
 * already holds `quota.max` is refused and counted on the quota.
 */
export async function putRemoteEntry(
  db: Db,
  entry: RemoteEntryWrite,
  now: number,
  quota?: EntryQuota,
): Promise<RemoteEntryWriteResult> {
  return db.transaction().execute(async (trx) => {
    const old = await trx
      .selectFrom('remote_entries')
      .selectAll()
      .where('id', '=', entry.id)
      .executeTakeFirst();
    if (old !== undefined && old.status !== 'removed' && sameContent(old, entry)) return 'unchanged';
    const isNew = old === undefined || old.status === 'removed';
    if (isNew && quota !== undefined && quota.held >= quota.max) {
      quota.refused += 1;
      return 'refused';
    }
    const seq = await nextSeq(trx);
    // Suspended by the operator: its source may change it, but it stays out of every listing.
    if (old !== undefined && old.status === 'suspended') {
      await trx
        .updateTable('remote_entries')
        .set({ ...entry, home_report: entry.home_report ?? null, updated_at: now, seq })
        .where('id', '=', entry.id)
        .execute();
      return 'shadowed';
    }
    if (old === undefined) {
      await trx
        .insertInto('remote_entries')
        .values({
          ...entry,
          home_report: entry.home_report ?? null,
          status: 'active',
          created_at: now,
          updated_at: now,
          seq,
        })
        .execute();
    } else {
      await trx
        .updateTable('remote_entries')
        .set({ ...entry, home_report: entry.home_report ?? null, status: 'active', updated_at: now, seq })
        .where('id', '=', entry.id)
        .execute();
    }
    if (isNew && quota !== undefined) quota.held += 1;
    // The DID it named before (if another) may now be listed from another source.
    if (old?.did != null && old.did !== entry.did) await relistDid(trx, old.did, now);
    if (entry.did === null) return 'listed';
    return (await relistDid(trx, entry.did, now)).includes(entry.id) ? 'listed' : 'shadowed';
  });
}

/** Marks entries removed (their source no longer lists them); the index drops them at its next catch-up. */
export async function removeRemoteEntries(
  db: Db,
  ids: readonly string[],
  now: number,
  quota?: EntryQuota,
): Promise<number> {
  if (ids.length === 0) return 0;
  return db.transaction().execute(async (trx) => {
    let removed = 0;
    for (const id of ids) {
      const old = await trx
        .selectFrom('remote_entries')
        .select(['did', 'status'])
        .where('id', '=', id)
        .executeTakeFirst();
      if (old === undefined || old.status === 'removed') continue;
      const seq = await nextSeq(trx);
      await trx
        .updateTable('remote_entries')
        .set({ status: 'removed', updated_at: now, seq })
        .where('id', '=', id)
        .execute();
      if (quota !== undefined) quota.held -= 1;
      if (old.status === 'active') removed += 1;
      // Another source's claim of the same DID, kept shadowed until now, may be listed instead.
      if (old.did !== null) await relistDid(trx, old.did, now);
    }
    return removed;
  });
}

/**
 * Lists exactly one claim of a DID: none if an agent registered here has it, else the claim of the
 * source that owns it (`claimRank`). Every other claim is shadowed. Returns the ids listed.
 */
async function relistDid(trx: Db, did: string, now: number): Promise<string[]> {
  const claims = await trx
    .selectFrom('remote_entries')
    .select(['id', 'status', 'home_registry', 'created_at'])
    .where('did', '=', did)
    .where('status', 'not in', ['removed', 'suspended'])
    .execute();
  const registeredHere = (await findAgentStatus(trx, did)) !== undefined;
  const owner = registeredHere
    ? undefined
    : claims.reduce<(typeof claims)[number] | undefined>(
        (best, claim) => (best === undefined || compareClaims(did, claim, best) < 0 ? claim : best),
        undefined,
      );
  for (const claim of claims) {
    const status = claim.id === owner?.id ? 'active' : 'shadowed';
    if (claim.status === status) continue;
    const seq = await nextSeq(trx);
    await trx
      .updateTable('remote_entries')
      .set({ status, updated_at: now, seq })
      .where('id', '=', claim.id)
      .execute();
  }
  return owner === undefined ? [] : [owner.id];
}

interface Claim {
  id: string;
  home_registry: string;
  created_at: number | string;
}

/**
 * The order of claims of one DID, the owner first: a claim from the host the DID names (did:web's
 * domain, its port encoded as did:web does) before any other; then one read over https before http
 * (did:web resolves over https only); then the earliest first seen, then the id.
 */
function compareClaims(did: string, a: Claim, b: Claim): number {
  const rank = (claim: Claim): number[] => [
    sourceHostNamesDid(claim.home_registry, did) ? 0 : 1,
    claim.home_registry.startsWith('https:') ? 0 : 1,
    Number(claim.created_at),
  ];
  const [ra, rb] = [rank(a), rank(b)];
  for (let i = 0; i < ra.length; i += 1) {
    const d = (ra[i] ?? 0) - (rb[i] ?? 0);
    if (d !== 0) return d;
  }
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The did:web domain of an http(s) URL's host: the hostname, and `%3A<port>` when it has one. */
export function didWebDomainOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.port === '' ? parsed.hostname : `${parsed.hostname}%3A${parsed.port}`;
  } catch {
    return undefined;
  }
}

/** Whether `did` is a did:web whose domain is the host of `url`. */
export function sourceHostNamesDid(url: string, did: string): boolean {
  if (!did.startsWith('did:web:')) return false;
  const domain = did.slice('did:web:'.length).split(':')[0]?.toLowerCase();
  return domain !== undefined && domain === didWebDomainOf(url)?.toLowerCase();
}

/** The ids of the entries a source holds (listed or shadowed). */
export async function heldEntryIdsOfSource(db: Db, sourceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('remote_entries')
    .select('id')
    .where('source_id', '=', sourceId)
    .where('status', '!=', 'removed')
    .execute();
  return rows.map((row) => row.id);
}

/** Rewrites the provenance of every entry a source holds (a peer found forked: unverified). */
export async function restampSource(
  db: Db,
  sourceId: string,
  provenance: (old: string) => string,
  now: number,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('remote_entries')
      .select(['id', 'provenance'])
      .where('source_id', '=', sourceId)
      .where('status', '!=', 'removed')
      .execute();
    for (const row of rows) {
      const seq = await nextSeq(trx);
      await trx
        .updateTable('remote_entries')
        .set({ provenance: provenance(row.provenance), updated_at: now, seq })
        .where('id', '=', row.id)
        .execute();
    }
  });
}

/**
 * Suspends an entry (docs/moderation.md): it leaves every listing and the federated index at the next
 * catch-up, and another source's claim of its DID may be listed instead. False if it is not listed or
 * shadowed now (unknown, removed or suspended already).
 */
export async function suspendRemoteEntry(trx: Db, id: string, now: number): Promise<boolean> {
  const old = await trx
    .selectFrom('remote_entries')
    .select(['did', 'status'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (old === undefined || (old.status !== 'active' && old.status !== 'shadowed')) return false;
  const seq = await nextSeq(trx);
  await trx
    .updateTable('remote_entries')
    .set({ status: 'suspended', updated_at: now, seq })
    .where('id', '=', id)
    .execute();
  if (old.did !== null) await relistDid(trx, old.did, now);
  return true;
}

/** Restores a suspended entry: listed again, or shadowed if another claim owns its DID. False if not suspended. */
export async function restoreRemoteEntry(trx: Db, id: string, now: number): Promise<boolean> {
  const old = await trx
    .selectFrom('remote_entries')
    .select(['did', 'status'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (old?.status !== 'suspended') return false;
  const seq = await nextSeq(trx);
  await trx
    .updateTable('remote_entries')
    .set({ status: 'active', updated_at: now, seq })
    .where('id', '=', id)
    .execute();
  if (old.did !== null) await relistDid(trx, old.did, now);
  return true;
}

/** A number no other key of the registry's advisory locks uses: remote-entry writes, one at a time. */
const REMOTE_WRITES_LOCK = 0x72656d6f;

async function nextSeq(trx: Db): Promise<number> {
  if (sqlDialect(trx) === 'postgres')
    await sql`select pg_advisory_xact_lock(${REMOTE_WRITES_LOCK})`.execute(trx);
  const row = await trx
    .selectFrom('remote_entries')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .executeTakeFirst();
  return Number(row?.seq ?? 0) + 1;
}

function sameContent(old: RemoteEntryRow, entry: RemoteEntryWrite): boolean {
  return (
    old.source_id === entry.source_id &&
    old.kind === entry.kind &&
    old.did === entry.did &&
    old.name === entry.name &&
    old.description === entry.description &&
    old.capabilities === entry.capabilities &&
    old.tags === entry.tags &&
    old.endpoints === entry.endpoints &&
    old.home_registry === entry.home_registry &&
    sameHomeFigures(old.home_report, entry.home_report) &&
    withoutFetchTime(old.provenance) === withoutFetchTime(entry.provenance)
  );
}

/** A re-fetch of the same card changes only fetched_at: not worth a new change number. */
function withoutFetchTime(provenance: string): string {
  const parsed = JSON.parse(provenance) as Record<string, unknown>;
  delete parsed.fetched_at;
  delete parsed.verified_at;
  return JSON.stringify(parsed);
}

/** Entries changed after `seq`, in change order (the federated index follows them). */
/**
 * The remote changes after `seq`, in change order. Compiled once, like the reads of the local search
 * (docs/decisions/performance.md, "A search's statements"): every federated search asks it to catch up.
 */
const changedAfter = compiledOnce(
  (db, seq: number, limit: number) =>
    db.selectFrom('remote_entries').selectAll().where('seq', '>', seq).orderBy('seq').limit(limit),
  [-1, -2] as const,
);

export async function remoteEntriesChangedAfter(
  db: Db,
  seq: number,
  limit: number,
): Promise<RemoteEntryRow[]> {
  return changedAfter(db, seq, limit);
}

/** Whether any remote entry was ever written (active or not): one row read at most. */
export async function anyRemoteEntry(db: Db): Promise<boolean> {
  return (await db.selectFrom('remote_entries').select('id').limit(1).executeTakeFirst()) !== undefined;
}

/** The read of a federated search page's remote entries, compiled once per page size. */
const entriesBySize = new Map<number, CompiledRead<RemoteEntryRow, string[]>>();

export async function readRemoteEntries(db: Db, ids: readonly string[]): Promise<RemoteEntryRow[]> {
  if (ids.length === 0) return [];
  let read = entriesBySize.get(ids.length);
  if (read === undefined) {
    const placeholders = Array.from({ length: ids.length }, (_, index) => `\u0000id${index}`);
    read = compiledOnce(
      (db, ...keys: string[]) => db.selectFrom('remote_entries').selectAll().where('id', 'in', keys),
      placeholders,
    );
    entriesBySize.set(ids.length, read);
  }
  return read(db, ...ids);
}

export async function readRemoteEntry(db: Db, id: string): Promise<RemoteEntryRow | undefined> {
  return db.selectFrom('remote_entries').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Active entries naming this DID (an agent may be listed by several sources). */
export async function activeRemoteEntriesByDid(db: Db, did: string): Promise<RemoteEntryRow[]> {
  return db
    .selectFrom('remote_entries')
    .selectAll()
    .where('did', '=', did)
    .where('status', '=', 'active')
    .orderBy('id')
    .limit(10)
    .execute();
}

export interface RemoteEntryFilter {
  sourceId?: string;
  kind?: RemoteEntryRow['kind'];
  /** Matched against the provenance's verification (imported) or state (mirrored). */
  verification?: string;
  after?: string;
  limit: number;
}

/** Rows one listing reads at most while filtering by verification: a bounded cost per request. */
const VERIFICATION_SCAN_MAX = 5000;
const SCAN_BATCH = 500;

/**
 * Active entries by id, for the listing. The verification filter reads the provenance JSON in the
 * process, at most VERIFICATION_SCAN_MAX rows per request: when it stops there, `resumeAfter` is the
 * last id read, where the next page continues (a page may then hold fewer than `limit` entries).
 */
export async function listRemoteEntries(
  db: Db,
  filter: RemoteEntryFilter,
): Promise<{ rows: RemoteEntryRow[]; resumeAfter?: string }> {
  let query = db.selectFrom('remote_entries').selectAll().where('status', '=', 'active').orderBy('id');
  if (filter.sourceId !== undefined) query = query.where('source_id', '=', filter.sourceId);
  if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
  if (filter.verification === undefined) {
    if (filter.after !== undefined) query = query.where('id', '>', filter.after);
    return { rows: await query.limit(filter.limit).execute() };
  }
  const wanted = filter.verification;
  const kept: RemoteEntryRow[] = [];
  let after = filter.after;
  for (let scanned = 0; scanned < VERIFICATION_SCAN_MAX; scanned += SCAN_BATCH) {
    const batch = after === undefined ? query : query.where('id', '>', after);
    const rows = await batch.limit(SCAN_BATCH).execute();
    for (const row of rows) {
      const provenance = JSON.parse(row.provenance) as { verification?: string; state?: string };
      if ((provenance.verification ?? provenance.state) === wanted) kept.push(row);
      if (kept.length === filter.limit) return { rows: kept };
    }
    if (rows.length < SCAN_BATCH) return { rows: kept };
    after = rows.at(-1)?.id;
  }
  return after === undefined ? { rows: kept } : { rows: kept, resumeAfter: after };
}
