import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import { ONLINE_WINDOW_MS, slotOf, type PresenceRecord } from './availability-model.js';

/** One node's evidence about one agent since its last write. */
export interface Sighting {
  did: string;
  firstAt: number;
  lastAt: number;
}

/** Rows per statement: well under SQLite's bound on parameters (five per row). */
const BATCH_ROWS = 500;

/**
 * Writes sightings: the latest evidence wins whichever node wrote it, and a gap longer than the online
 * window restarts `online_since`. Every slot between a sighting's first and last evidence is marked seen
 * (a poll in progress is evidence all along).
 */
export async function recordSightings(db: Db, sightings: readonly Sighting[], now: number): Promise<void> {
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
          online_since: sql`case when excluded.first_seen_at - agent_presence.last_seen_at > ${sql.lit(ONLINE_WINDOW_MS)} then excluded.first_seen_at else agent_presence.online_since end`,
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
    seen_slots_24h: Number(counts.day),
    seen_slots_7d: Number(counts.week),
  };
}

/** Last evidence of each of `dids` that has any, with what decides whether it can be online. */
export async function observedAgents(
  db: Db,
  dids: readonly string[],
): Promise<
  {
    did: string;
    last_seen_at: number;
    status: 'active' | 'deactivated';
    invocation_enabled: number;
    delivery_mode: string;
  }[]
> {
  if (dids.length === 0) return [];
  const rows = await db
    .selectFrom('agent_presence')
    .innerJoin('agents', 'agents.did', 'agent_presence.did')
    .select([
      'agent_presence.did',
      'agent_presence.last_seen_at',
      'agents.status',
      'agents.invocation_enabled',
      'agents.delivery_mode',
    ])
    .where('agent_presence.did', 'in', dids.slice(0, BATCH_ROWS))
    .execute();
  return rows.map((row) => ({ ...row, last_seen_at: Number(row.last_seen_at) }));
}

/** Last evidence of each of `dids` that has any. */
export async function lastSeenOf(db: Db, dids: readonly string[]): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  for (let start = 0; start < dids.length; start += BATCH_ROWS) {
    const rows = await db
      .selectFrom('agent_presence')
      .select(['did', 'last_seen_at'])
      .where('did', 'in', dids.slice(start, start + BATCH_ROWS))
      .execute();
    for (const row of rows) seen.set(row.did, Number(row.last_seen_at));
  }
  return seen;
}

/**
 * Active, invocation-enabled queue agents with evidence in [from, to]: the agents that are online
 * (availability-model.ts says who can be).
 */
export async function agentsSeenBetween(db: Db, from: number, to: number): Promise<string[]> {
  const rows = await db
    .selectFrom('agent_presence')
    .innerJoin('agents', 'agents.did', 'agent_presence.did')
    .select('agent_presence.did')
    .where('agent_presence.last_seen_at', '>=', from)
    .where('agent_presence.last_seen_at', '<=', to)
    .where('agents.status', '=', 'active')
    .where('agents.invocation_enabled', '=', 1)
    .where('agents.delivery_mode', '=', 'queue')
    .execute();
  return rows.map((row) => row.did);
}

/**
 * Active agents by availability status: online (observable, evidence in [from, to]), offline
 * (observable, evidence before `from`) and unknown (the rest, evidence after `to` included).
 */
export async function countByStatus(
  db: Db,
  from: number,
  to: number,
): Promise<{ online: number; offline: number; unknown: number }> {
  const row = await db
    .selectFrom('agents')
    .leftJoin('agent_presence', 'agent_presence.did', 'agents.did')
    .select([
      sql<number>`count(*)`.as('total'),
      sql<number>`coalesce(sum(case when agents.delivery_mode = 'queue' and agents.invocation_enabled = 1 and agent_presence.last_seen_at >= ${from} and agent_presence.last_seen_at <= ${to} then 1 else 0 end), 0)`.as(
        'online',
      ),
      sql<number>`coalesce(sum(case when agents.delivery_mode = 'queue' and agents.invocation_enabled = 1 and agent_presence.last_seen_at < ${from} then 1 else 0 end), 0)`.as(
        'offline',
      ),
    ])
    .where('agents.status', '=', 'active')
    .executeTakeFirstOrThrow();
  const online = Number(row.online);
  const offline = Number(row.offline);
  return { online, offline, unknown: Number(row.total) - online - offline };
}

/** Deletes slots before `beforeSlot` (older than the longest uptime window). */
export async function pruneSlots(db: Db, beforeSlot: number): Promise<void> {
  await db.deleteFrom('agent_presence_slots').where('slot', '<', beforeSlot).execute();
}
