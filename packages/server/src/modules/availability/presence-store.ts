import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { AgentStatus } from '../../db/schema/index.js';
import { ONLINE_WINDOW_MS, slotOf, type PresenceRecord, type ProbeRecord } from './availability-model.js';

/** One node's evidence about one agent since its last write. */
export interface Sighting {
  did: string;
  firstAt: number;
  lastAt: number;
}

/** Rows per statement: well under SQLite's bound on parameters (five per row). */
const BATCH_ROWS = 500;

/**
 * Writes sightings: the latest evidence wins whichever node wrote it, and a gap longer than `gapMs`
 * (the online window; a webhook agent's is longer) restarts `online_since`. Every slot between a sighting's first and last evidence is marked seen
 * (a poll in progress is evidence all along).
 */
export async function recordSightings(
  db: Db,
  sightings: readonly Sighting[],
  now: number,
  gapMs: number = ONLINE_WINDOW_MS,
): Promise<void> {
  for (let start = 0; start < sightings.length; start += BATCH_ROWS) {
    const batch = sightings.slice(start, start + BATCH_ROWS);
    await db
      .insertInto('agent_presence')
      .values(
        batch.map((seen) => ({
          did: seen.did,
          first_seen_at: seen.firstAt,
          last_seen_at: seen.lastAt,
          online_since: seen.firstAt,
          checked_at: now,
        })),
      )
      .onConflict((conflict) =>
        conflict.column('did').doUpdateSet({
          first_seen_at: sql`case when excluded.first_seen_at < agent_presence.first_seen_at then excluded.first_seen_at else agent_presence.first_seen_at end`,
          // After a clean stop, the next evidence starts a new online period however soon it comes.
          online_since: sql`case when excluded.first_seen_at - agent_presence.last_seen_at > ${sql.lit(Math.floor(gapMs))} or (agent_presence.stopped_at is not null and agent_presence.stopped_at >= agent_presence.last_seen_at and excluded.first_seen_at > agent_presence.stopped_at) then excluded.first_seen_at else agent_presence.online_since end`,
          last_seen_at: sql`case when excluded.last_seen_at > agent_presence.last_seen_at then excluded.last_seen_at else agent_presence.last_seen_at end`,
          checked_at: sql`case when excluded.checked_at > agent_presence.checked_at then excluded.checked_at else agent_presence.checked_at end`,
        }),
      )
      .execute();
    const slots = batch.flatMap((seen) => {
      const marks: { did: string; slot: number }[] = [];
      for (let slot = slotOf(seen.firstAt); slot <= slotOf(seen.lastAt); slot++)
        marks.push({ did: seen.did, slot });
      return marks;
    });
    for (let from = 0; from < slots.length; from += BATCH_ROWS) {
      await db
        .insertInto('agent_presence_slots')
        .values(slots.slice(from, from + BATCH_ROWS))
        .onConflict((conflict) => conflict.columns(['did', 'slot']).doNothing())
        .execute();
    }
  }
}

/** What probes found of the agent; undefined if it was never probed. */
export async function findProbe(db: Db, did: string): Promise<ProbeRecord | undefined> {
  const row = await db
    .selectFrom('webhook_probes')
    .select(['last_probed_at', 'last_failed_at'])
    .where('did', '=', did)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    last_probed_at: row.last_probed_at === null ? null : Number(row.last_probed_at),
    last_failed_at: row.last_failed_at === null ? null : Number(row.last_failed_at),
  };
}

/** The agent's presence with its seen slots counted from the two window starts; undefined if never seen. */
export async function findPresence(
  db: Db,
  did: string,
  windowStart: (firstSeenAt: number) => { day: number; week: number },
): Promise<PresenceRecord | undefined> {
  const row = await db.selectFrom('agent_presence').selectAll().where('did', '=', did).executeTakeFirst();
  if (row === undefined) return undefined;
  const firstSeenAt = Number(row.first_seen_at);
  const { day, week } = windowStart(firstSeenAt);
  const counts = await db
    .selectFrom('agent_presence_slots')
    .select([
      sql<number>`count(*)`.as('week'),
      sql<number>`coalesce(sum(case when slot >= ${day} then 1 else 0 end), 0)`.as('day'),
    ])
    .where('did', '=', did)
    .where('slot', '>=', week)
    .executeTakeFirstOrThrow();
  return {
    first_seen_at: firstSeenAt,
    last_seen_at: Number(row.last_seen_at),
    online_since: Number(row.online_since),
    checked_at: Number(row.checked_at),
    stopped_at: row.stopped_at === null ? null : Number(row.stopped_at),
    seen_slots_24h: Number(counts.day),
    seen_slots_7d: Number(counts.week),
  };
}

/** Evidence of each of `dids` that has any (seen, or probed), with what decides whether it can be online. */
export async function observedAgents(
  db: Db,
  dids: readonly string[],
): Promise<
  {
    did: string;
    last_seen_at: number | null;
    stopped_at: number | null;
    last_probed_at: number | null;
    last_failed_at: number | null;
    status: AgentStatus;
    invocation_enabled: number;
    delivery_mode: string;
    webhook_probes: number;
  }[]
> {
  if (dids.length === 0) return [];
  const rows = await db
    .selectFrom('agents')
    .leftJoin('agent_presence', 'agent_presence.did', 'agents.did')
    .leftJoin('webhook_probes', 'webhook_probes.did', 'agents.did')
    .select([
      'agents.did',
      'agent_presence.last_seen_at',
      'agent_presence.stopped_at',
      'webhook_probes.last_probed_at',
      'webhook_probes.last_failed_at',
      'agents.status',
      'agents.invocation_enabled',
      'agents.delivery_mode',
      'agents.webhook_probes',
    ])
    .where('agents.did', 'in', dids.slice(0, BATCH_ROWS))
    .where((eb) =>
      eb.or([eb('agent_presence.did', 'is not', null), eb('webhook_probes.last_probed_at', 'is not', null)]),
    )
    .execute();
  const orNull = (value: number | null) => (value === null ? null : Number(value));
  return rows.map((row) => ({
    ...row,
    last_seen_at: orNull(row.last_seen_at),
    stopped_at: orNull(row.stopped_at),
    last_probed_at: orNull(row.last_probed_at),
    last_failed_at: orNull(row.last_failed_at),
  }));
}

/** Last evidence and last clean stop of each of `dids` that has any. */
export async function presenceEndsOf(
  db: Db,
  dids: readonly string[],
): Promise<Map<string, { last_seen_at: number; stopped_at: number | null }>> {
  const ends = new Map<string, { last_seen_at: number; stopped_at: number | null }>();
  for (let start = 0; start < dids.length; start += BATCH_ROWS) {
    const rows = await db
      .selectFrom('agent_presence')
      .select(['did', 'last_seen_at', 'stopped_at'])
      .where('did', 'in', dids.slice(start, start + BATCH_ROWS))
      .execute();
    for (const row of rows)
      ends.set(row.did, {
        last_seen_at: Number(row.last_seen_at),
        stopped_at: row.stopped_at === null ? null : Number(row.stopped_at),
      });
  }
  return ends;
}

/** Records that the agent's worker is stopping; false when the agent was never seen (nothing to end). */
export async function recordStop(db: Db, did: string, at: number): Promise<boolean> {
  const result = await db
    .updateTable('agent_presence')
    .set({ stopped_at: at })
    .where('did', '=', did)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The reading's bounds: queue evidence from `queueFrom`, webhook answers from `webhookFrom`, none after `to`. */
export interface OnlineBounds {
  queueFrom: number;
  /** Null when probing is off: no webhook agent is online. */
  webhookFrom: number | null;
  to: number;
}

/** The SQL condition "online" of availability-model.ts over agents, agent_presence and webhook_probes. */
function onlineCondition(bounds: OnlineBounds) {
  const queue = sql<boolean>`(agents.delivery_mode = 'queue' and agent_presence.last_seen_at >= ${bounds.queueFrom})`;
  const webhook =
    bounds.webhookFrom === null
      ? sql<boolean>`1 = 0`
      : sql<boolean>`(agents.delivery_mode = 'webhook' and agents.webhook_probes = 1 and agent_presence.last_seen_at >= ${bounds.webhookFrom} and (webhook_probes.last_failed_at is null or webhook_probes.last_failed_at < agent_presence.last_seen_at))`;
  const notStopped = sql<boolean>`(agent_presence.stopped_at is null or agent_presence.stopped_at < agent_presence.last_seen_at)`;
  return sql<boolean>`(agents.invocation_enabled = 1 and agent_presence.last_seen_at <= ${bounds.to} and ${notStopped} and (${queue} or ${webhook}))`;
}

/** Whether the agent can be observed at all (onlineWindowOf), in SQL. */
function observableCondition(bounds: OnlineBounds) {
  const webhook =
    bounds.webhookFrom === null
      ? sql<boolean>`1 = 0`
      : sql<boolean>`(agents.delivery_mode = 'webhook' and agents.webhook_probes = 1)`;
  return sql<boolean>`(agents.invocation_enabled = 1 and (agents.delivery_mode = 'queue' or ${webhook}))`;
}

/** Active agents online within `bounds` (availability-model.ts says who can be). */
export async function agentsOnline(db: Db, bounds: OnlineBounds): Promise<string[]> {
  const rows = await db
    .selectFrom('agent_presence')
    .innerJoin('agents', 'agents.did', 'agent_presence.did')
    .leftJoin('webhook_probes', 'webhook_probes.did', 'agent_presence.did')
    .select('agent_presence.did')
    .where('agent_presence.last_seen_at', '>=', Math.min(bounds.queueFrom, bounds.webhookFrom ?? Infinity))
    .where('agents.status', '=', 'active')
    .where(onlineCondition(bounds))
    .execute();
  return rows.map((row) => row.did);
}

/**
 * Active agents by availability status: online, offline (observable, with evidence, not online and not
 * from a fast clock) and unknown (the rest).
 */
export async function countByStatus(
  db: Db,
  bounds: OnlineBounds,
): Promise<{ online: number; offline: number; unknown: number }> {
  const online = onlineCondition(bounds);
  const observed = sql<boolean>`(${observableCondition(bounds)} and (agent_presence.last_seen_at is not null or (agents.delivery_mode = 'webhook' and webhook_probes.last_failed_at is not null)) and not coalesce(agent_presence.last_seen_at > ${bounds.to}, false))`;
  const row = await db
    .selectFrom('agents')
    .leftJoin('agent_presence', 'agent_presence.did', 'agents.did')
    .leftJoin('webhook_probes', 'webhook_probes.did', 'agents.did')
    .select([
      sql<number>`count(*)`.as('total'),
      sql<number>`coalesce(sum(case when ${online} then 1 else 0 end), 0)`.as('online'),
      sql<number>`coalesce(sum(case when ${observed} and not coalesce(${online}, false) then 1 else 0 end), 0)`.as(
        'offline',
      ),
    ])
    .where('agents.status', '=', 'active')
    .executeTakeFirstOrThrow();
  const onlineCount = Number(row.online);
  const offline = Number(row.offline);
  return { online: onlineCount, offline, unknown: Number(row.total) - onlineCount - offline };
}

/** Deletes slots before `beforeSlot` (older than the longest uptime window). */
export async function pruneSlots(db: Db, beforeSlot: number): Promise<void> {
  await db.deleteFrom('agent_presence_slots').where('slot', '<', beforeSlot).execute();
}
