import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';

/** A webhook agent a node has claimed to probe now. */
export interface ProbeTarget {
  did: string;
  webhook_url: string;
  webhook_secret: string;
  /** Probes failed in a row before this one. */
  failures: number;
  /** When the previous probe was answered; null if it failed or there was none. */
  answeredAt: number | null;
}

/** One probe's outcome, written with the next due time its backoff chose. */
export interface ProbeOutcome {
  did: string;
  probedAt: number;
  ok: boolean;
  failures: number;
  dueAt: number;
}

/** Rows per statement: under SQLite's bound on parameters (five per row). */
const BATCH_ROWS = 500;

/** Probed agents: active, invocation-enabled webhook agents that did not opt out, with a webhook. */
const PROBED = sql<boolean>`(agents.status = 'active' and agents.invocation_enabled = 1 and agents.delivery_mode = 'webhook' and agents.webhook_probes = 1 and agents.webhook_url is not null and agents.webhook_secret is not null)`;

/**
 * Gives every probed agent without a schedule one, due at `now`, and drops the schedules of agents no
 * longer probed (opted out, other mode, deactivated). Idempotent on every node.
 */
export async function enrolProbes(db: Db, now: number): Promise<void> {
  await db
    .insertInto('webhook_probes')
    .columns(['did', 'due_at', 'failures'])
    .expression(
      db
        .selectFrom('agents')
        .select(['agents.did', sql<number>`${now}`.as('due_at'), sql<number>`0`.as('failures')])
        .where(PROBED)
        .where((eb) =>
          eb.not(
            eb.exists(
              eb.selectFrom('webhook_probes').select('did').whereRef('webhook_probes.did', '=', 'agents.did'),
            ),
          ),
        ),
    )
    .onConflict((conflict) => conflict.column('did').doNothing())
    .execute();
  await db
    .deleteFrom('webhook_probes')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('agents')
            .select('agents.did')
            .whereRef('agents.did', '=', 'webhook_probes.did')
            .where(PROBED),
        ),
      ),
    )
    .execute();
}

/** The highest change number of any agent (0 with none). */
export async function latestChange(db: Db): Promise<number> {
  const row = await db
    .selectFrom('agents')
    .select(sql<number | null>`max(change_seq)`.as('seq'))
    .executeTakeFirst();
  return Number(row?.seq ?? 0);
}

/**
 * Schedules (due at `now`) or unschedules the agents whose change number is above `afterSeq`: the
 * agents registered or reconfigured since the last look, read by the change number's index. Returns
 * the highest change number seen (`afterSeq` when nothing changed).
 */
export async function enrolChanged(db: Db, afterSeq: number, now: number): Promise<number> {
  const changed = await db
    .selectFrom('agents')
    .select(['did', 'change_seq', PROBED.as('probed')])
    .where('change_seq', '>', afterSeq)
    .orderBy('change_seq')
    .limit(BATCH_ROWS)
    .execute();
  if (changed.length === 0) return afterSeq;
  const probed = changed.filter((row) => Boolean(row.probed)).map((row) => row.did);
  const dropped = changed.filter((row) => !row.probed).map((row) => row.did);
  if (probed.length > 0)
    await db
      .insertInto('webhook_probes')
      .values(probed.map((did) => ({ did, due_at: now, failures: 0 })))
      .onConflict((conflict) => conflict.column('did').doNothing())
      .execute();
  if (dropped.length > 0) await db.deleteFrom('webhook_probes').where('did', 'in', dropped).execute();
  return Number(changed.at(-1)?.change_seq ?? afterSeq);
}

/**
 * Claims up to `limit` probes due at `now`, earliest first, by moving their due time to `leaseUntil`
 * in a conditional update: of nodes claiming at once, each row goes to one (the update re-checks
 * `due_at <= now` under the row's lock on PostgreSQL; SQLite has one writer). A node that dies with
 * claimed probes leaves them due again at `leaseUntil`.
 */
export async function claimProbes(
  db: Db,
  now: number,
  limit: number,
  leaseUntil: number,
): Promise<ProbeTarget[]> {
  const due = await db
    .selectFrom('webhook_probes')
    .innerJoin('agents', 'agents.did', 'webhook_probes.did')
    .select('webhook_probes.did')
    .where('webhook_probes.due_at', '<=', now)
    .where(PROBED)
    .orderBy('webhook_probes.due_at')
    .limit(limit)
    .execute();
  const claimed: string[] = [];
  for (let start = 0; start < due.length; start += BATCH_ROWS) {
    const rows = await db
      .updateTable('webhook_probes')
      .set({ due_at: leaseUntil })
      .where(
        'did',
        'in',
        due.slice(start, start + BATCH_ROWS).map((row) => row.did),
      )
      .where('due_at', '<=', now)
      .returning('did')
      .execute();
    for (const row of rows) claimed.push(row.did);
  }
  const targets: ProbeTarget[] = [];
  for (let start = 0; start < claimed.length; start += BATCH_ROWS) {
    const rows = await db
      .selectFrom('webhook_probes')
      .innerJoin('agents', 'agents.did', 'webhook_probes.did')
      .select([
        'agents.did',
        'agents.webhook_url',
        'agents.webhook_secret',
        'webhook_probes.failures',
        'webhook_probes.last_probed_at',
        'webhook_probes.last_failed_at',
      ])
      .where('agents.did', 'in', claimed.slice(start, start + BATCH_ROWS))
      .execute();
    for (const row of rows) {
      if (row.webhook_url === null || row.webhook_secret === null) continue;
      targets.push({
        did: row.did,
        webhook_url: row.webhook_url,
        webhook_secret: row.webhook_secret,
        failures: Number(row.failures),
        answeredAt:
          row.last_probed_at !== null && row.last_failed_at === null ? Number(row.last_probed_at) : null,
      });
    }
  }
  return targets;
}

/** Writes probe outcomes: the next due time, the run of failures, and the failure if the latest failed. */
export async function recordProbes(db: Db, outcomes: readonly ProbeOutcome[]): Promise<void> {
  for (let start = 0; start < outcomes.length; start += BATCH_ROWS) {
    await db
      .insertInto('webhook_probes')
      .values(
        outcomes.slice(start, start + BATCH_ROWS).map((outcome) => ({
          did: outcome.did,
          due_at: outcome.dueAt,
          failures: outcome.failures,
          last_probed_at: outcome.probedAt,
          last_failed_at: outcome.ok ? null : outcome.probedAt,
        })),
      )
      .onConflict((conflict) =>
        conflict.column('did').doUpdateSet({
          due_at: sql`excluded.due_at`,
          failures: sql`excluded.failures`,
          last_probed_at: sql`case when webhook_probes.last_probed_at > excluded.last_probed_at then webhook_probes.last_probed_at else excluded.last_probed_at end`,
          // An answer clears the failure: the latest probe decides.
          last_failed_at: sql`excluded.last_failed_at`,
        }),
      )
      .execute();
  }
}

/**
 * Makes the probes of `dids` due at `now` (a delivery to them failed: the probe decides whether they
 * are down), unless they were probed within `recentMs`: failed calls cannot drive probes faster.
 */
export async function probeSoon(
  db: Db,
  dids: readonly string[],
  now: number,
  recentMs: number,
): Promise<void> {
  for (let start = 0; start < dids.length; start += BATCH_ROWS) {
    await db
      .updateTable('webhook_probes')
      .set({ due_at: now })
      .where('did', 'in', dids.slice(start, start + BATCH_ROWS))
      .where('due_at', '>', now)
      .where((eb) => eb.or([eb('last_probed_at', 'is', null), eb('last_probed_at', '<', now - recentMs)]))
      .execute();
  }
}
