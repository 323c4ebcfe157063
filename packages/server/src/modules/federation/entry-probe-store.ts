import type { ObservedStatus } from '@agent-registry/protocol';
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { EntryObservationsTable, EntryProbesTable } from '../../db/schema/index.js';
import { appendLogEvent } from '../agents/log-event-store.js';
import type { HomeLive } from '../search/home-report-schema.js';

/** How an entry is probed: an imported entry's MCP or A2A endpoint, or a mirrored agent's profile at home. */
export type ProbeProtocol = 'mcp' | 'a2a' | 'home';

/** An imported entry a node has claimed to probe now, with what the previous probe found. */
export interface EntryProbeTarget {
  entryId: string;
  protocol: ProbeProtocol;
  url: string;
  failures: number;
  /** The DID a home read must find (mirrored entries). */
  did?: string;
}

/** What one probe found: a status class, and the tools when it listed them. */
export interface ProbeFinding {
  status: ObservedStatus;
  tools?: { count: number; digest: string };
  /** What a mirrored agent's home API says of it now. */
  home?: HomeLive;
  /** Why not `answers`, for the operator's log at debug level; never stored or served. */
  reason?: string;
}

export type EntryProbeRow = Selectable<EntryProbesTable>;

/**
 * A change an observation made, for watchers (the `entry.observed` leaf records it in the log): the
 * status class or the tools digest moved from one known value to another. A first observation is
 * logged but is no change.
 */
export type EntryChange =
  | {
      entryId: string;
      kind: 'status_changed';
      before: ObservedStatus;
      after: ObservedStatus;
      /** The `seq` of the `entry.observed` leaf that logged it. */
      logSeq: number;
      observedAt: number;
    }
  | {
      entryId: string;
      kind: 'tools_changed';
      before: string;
      after: string;
      /** How many tools the entry lists now. */
      toolsCount: number;
      /** The `seq` of the `entry.observed` leaf that logged it. */
      logSeq: number;
      observedAt: number;
    };

/** Rows per statement: under SQLite's bound on parameters. */
const BATCH_ROWS = 500;

/**
 * Probed entries: active imported entries with an MCP or A2A endpoint, and active mirrored entries (read
 * at home). Endpoints are stored as the importers' JSON.stringify of [{type, url}], so the type reads as
 * this exact text.
 */
const PROBED = sql<boolean>`(remote_entries.status = 'active' and ((remote_entries.kind = 'imported' and (remote_entries.endpoints like '%"type":"mcp"%' or remote_entries.endpoints like '%"type":"a2a"%')) or (remote_entries.kind = 'mirrored' and remote_entries.did is not null)))`;

/** Gives every probed entry without a schedule one, due at `now`; drops schedules of entries no longer probed. */
export async function enrolEntryProbes(db: Db, now: number): Promise<void> {
  await db
    .insertInto('entry_probes')
    .columns(['entry_id', 'due_at', 'failures'])
    .expression(
      db
        .selectFrom('remote_entries')
        .select(['remote_entries.id', sql<number>`${now}`.as('due_at'), sql<number>`0`.as('failures')])
        .where(PROBED)
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('entry_probes')
                .select('entry_id')
                .whereRef('entry_probes.entry_id', '=', 'remote_entries.id'),
            ),
          ),
        ),
    )
    .onConflict((conflict) => conflict.column('entry_id').doNothing())
    .execute();
  await db
    .deleteFrom('entry_probes')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('remote_entries')
            .select('remote_entries.id')
            .whereRef('remote_entries.id', '=', 'entry_probes.entry_id')
            .where(PROBED),
        ),
      ),
    )
    .execute();
}

/** The highest remote change number (0 with none). */
export async function latestRemoteChange(db: Db): Promise<number> {
  const row = await db
    .selectFrom('remote_entries')
    .select(sql<number | null>`max(seq)`.as('seq'))
    .executeTakeFirst();
  return Number(row?.seq ?? 0);
}

/** Schedules or unschedules the entries changed after `afterSeq`; the highest change number seen. */
export async function enrolChangedEntries(db: Db, afterSeq: number, now: number): Promise<number> {
  const changed = await db
    .selectFrom('remote_entries')
    .select(['id', 'seq', PROBED.as('probed')])
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(BATCH_ROWS)
    .execute();
  if (changed.length === 0) return afterSeq;
  const probed = changed.filter((row) => Boolean(row.probed)).map((row) => row.id);
  const dropped = changed.filter((row) => !row.probed).map((row) => row.id);
  if (probed.length > 0)
    await db
      .insertInto('entry_probes')
      .values(probed.map((entry_id) => ({ entry_id, due_at: now, failures: 0 })))
      .onConflict((conflict) => conflict.column('entry_id').doNothing())
      .execute();
  if (dropped.length > 0) await db.deleteFrom('entry_probes').where('entry_id', 'in', dropped).execute();
  return Number(changed.at(-1)?.seq ?? afterSeq);
}

/**
 * Claims up to `limit` due probes, earliest first, moving their due time to `leaseUntil` in a
 * conditional update (one node per entry and interval, as webhook probes are claimed).
 */
export async function claimEntryProbes(
  db: Db,
  now: number,
  limit: number,
  leaseUntil: number,
): Promise<EntryProbeTarget[]> {
  const due = await db
    .selectFrom('entry_probes')
    .select('entry_id')
    .where('due_at', '<=', now)
    .orderBy('due_at')
    .limit(limit)
    .execute();
  const targets: EntryProbeTarget[] = [];
  for (let start = 0; start < due.length; start += BATCH_ROWS) {
    const claimed = await db
      .updateTable('entry_probes')
      .set({ due_at: leaseUntil })
      .where(
        'entry_id',
        'in',
        due.slice(start, start + BATCH_ROWS).map((row) => row.entry_id),
      )
      .where('due_at', '<=', now)
      .returning(['entry_id', 'failures'])
      .execute();
    if (claimed.length === 0) continue;
    const failures = new Map(claimed.map((row) => [row.entry_id, Number(row.failures)]));
    const entries = await db
      .selectFrom('remote_entries')
      .select(['id', 'endpoints', 'kind', 'did', 'home_registry'])
      .where('id', 'in', [...failures.keys()])
      .where(PROBED)
      .execute();
    for (const entry of entries) {
      if (entry.kind === 'mirrored' && entry.did !== null) {
        const url = `${entry.home_registry}/api/agents/${encodeURIComponent(entry.did)}`;
        targets.push({
          entryId: entry.id,
          protocol: 'home',
          url,
          did: entry.did,
          failures: failures.get(entry.id) ?? 0,
        });
        continue;
      }
      const endpoint = probedEndpoint(entry.endpoints);
      if (endpoint !== undefined)
        targets.push({ entryId: entry.id, ...endpoint, failures: failures.get(entry.id) ?? 0 });
    }
  }
  return targets;
}

function probedEndpoint(endpoints: string): { protocol: ProbeProtocol; url: string } | undefined {
  const parsed = JSON.parse(endpoints) as { type: string; url: string }[];
  const found = parsed.find((endpoint) => endpoint.type === 'mcp' || endpoint.type === 'a2a');
  return found === undefined ? undefined : { protocol: found.type as ProbeProtocol, url: found.url };
}

/** One probe's outcome, with the next due time its backoff chose. */
export interface EntryProbeOutcome {
  entryId: string;
  probedAt: number;
  finding: ProbeFinding;
  failures: number;
  dueAt: number;
}

/**
 * Stores one outcome. A first observation, a new status class or a new tools digest is appended to
 * the transparency log as an `entry.observed` event and to the entry's history, in the transaction that
 * stores it, so the log records exactly the observations the API shows. Returns the changes made.
 */
export async function recordEntryProbe(db: Db, outcome: EntryProbeOutcome): Promise<EntryChange[]> {
  return db.transaction().execute(async (trx) => {
    const old = await trx
      .selectFrom('entry_probes')
      .selectAll()
      .where('entry_id', '=', outcome.entryId)
      .executeTakeFirst();
    // Unscheduled meanwhile (the entry went away): nothing to record.
    if (old === undefined) return [];
    const { finding, probedAt } = outcome;
    const answered = finding.status === 'answers';
    const digest = finding.tools?.digest ?? null;
    const toolsMoved = digest !== null && digest !== old.tools_digest;
    const statusMoved = finding.status !== old.status;
    const next = {
      due_at: outcome.dueAt,
      failures: outcome.failures,
      status: finding.status,
      checked_at: probedAt,
      last_answered_at: answered ? probedAt : old.last_answered_at,
      first_seen_at: old.first_seen_at ?? probedAt,
      tools_count: finding.tools?.count ?? old.tools_count,
      tools_digest: digest ?? old.tools_digest,
      tools_changed_at: toolsMoved ? probedAt : old.tools_changed_at,
      home_live: finding.home === undefined ? old.home_live : JSON.stringify(finding.home),
    };
    await trx.updateTable('entry_probes').set(next).where('entry_id', '=', outcome.entryId).execute();
    if (!statusMoved && !toolsMoved) return [];
    const observed = {
      status: finding.status,
      tools_digest: digest,
      tools_count: finding.tools?.count ?? null,
    };
    const logSeq = await appendLogEvent(trx, {
      op: 'entry.observed',
      subject: outcome.entryId,
      time: probedAt,
      fields: observed,
    });
    await trx
      .insertInto('entry_observations')
      .values({ entry_id: outcome.entryId, log_seq: logSeq, observed_at: probedAt, ...observed })
      .execute();
    const changes: EntryChange[] = [];
    const base = { entryId: outcome.entryId, logSeq, observedAt: probedAt };
    if (statusMoved && old.status !== null)
      changes.push({ ...base, kind: 'status_changed', before: old.status, after: finding.status });
    if (toolsMoved && digest !== null && old.tools_digest !== null)
      changes.push({
        ...base,
        kind: 'tools_changed',
        before: old.tools_digest,
        after: digest,
        toolsCount: finding.tools?.count ?? 0,
      });
    return changes;
  });
}

/** The latest observation of each of `ids` that has one. */
export async function readObserved(db: Db, ids: readonly string[]): Promise<EntryProbeRow[]> {
  const rows: EntryProbeRow[] = [];
  for (let start = 0; start < ids.length; start += BATCH_ROWS) {
    rows.push(
      ...(await db
        .selectFrom('entry_probes')
        .selectAll()
        .where('entry_id', 'in', ids.slice(start, start + BATCH_ROWS))
        .where('status', 'is not', null)
        .execute()),
    );
  }
  return rows;
}

/**
 * The ids of active entries available now (available=true): imported entries whose latest probe found
 * them answering, and mirrored agents whose home said they were online at its latest read.
 */
export async function answeringEntryIds(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom('entry_probes')
    .innerJoin('remote_entries', 'remote_entries.id', 'entry_probes.entry_id')
    .select(['entry_probes.entry_id', 'remote_entries.kind', 'entry_probes.home_live'])
    .where('entry_probes.status', '=', 'answers')
    .where('remote_entries.status', '=', 'active')
    .execute();
  return rows
    .filter(
      (row) =>
        row.kind !== 'mirrored' ||
        (row.home_live !== null && (JSON.parse(row.home_live) as HomeLive).availability?.status === 'online'),
    )
    .map((row) => row.entry_id);
}

/** An entry's observations, newest first, before `beforeSeq` when given. */
export async function listObservations(
  db: Db,
  entryId: string,
  beforeSeq: number | undefined,
  limit: number,
): Promise<{ rows: Selectable<EntryObservationsTable>[]; firstSeq: number }> {
  let query = db
    .selectFrom('entry_observations')
    .selectAll()
    .where('entry_id', '=', entryId)
    .orderBy('log_seq', 'desc')
    .limit(limit);
  if (beforeSeq !== undefined) query = query.where('log_seq', '<', beforeSeq);
  const [rows, start] = await Promise.all([
    query.execute(),
    db.selectFrom('log_start').select('first_seq').where('id', '=', 1).executeTakeFirst(),
  ]);
  return { rows, firstSeq: Number(start?.first_seq ?? 1) };
}
