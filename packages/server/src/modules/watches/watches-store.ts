import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { WatchDeliveriesTable, WatchesTable } from '../../db/schema/index.js';

export type WatchRow = WatchesTable;
export type DeliveryRow = WatchDeliveriesTable & { url: string; secret: string; owner_did: string };

export async function insertWatch(db: Db, row: WatchRow): Promise<void> {
  await db.insertInto('watches').values(row).execute();
}

/** Live watches of an owner, oldest first, after (created_at, id). */
export async function watchesOf(
  db: Db,
  owner: string,
  after: { createdAt: number; id: string } | undefined,
  limit: number,
): Promise<WatchRow[]> {
  let query = db
    .selectFrom('watches')
    .selectAll()
    .where('owner_did', '=', owner)
    .where('deleted_at', 'is', null);
  if (after !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '>', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)]),
      ]),
    );
  }
  const rows = await query.orderBy('created_at').orderBy('id').limit(limit).execute();
  return rows.map((row) => ({ ...row, created_at: Number(row.created_at) }));
}

/** Live watches of an owner and of a target, and the owner's creations since `since` (deleted ones too). */
export async function watchCounts(
  db: Db,
  owner: string,
  target: string,
  since: number,
): Promise<{ owned: number; onTarget: number; createdSince: number; oldestSince: number | null }> {
  const owned = await db
    .selectFrom('watches')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('owner_did', '=', owner)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  const onTarget = await db
    .selectFrom('watches')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('target', '=', target)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  const created = await db
    .selectFrom('watches')
    .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('owner_did', '=', owner)
    .where('created_at', '>=', since)
    .executeTakeFirst();
  return {
    owned: Number(owned?.n ?? 0),
    onTarget: Number(onTarget?.n ?? 0),
    createdSince: Number(created?.n ?? 0),
    oldestSince: created?.oldest == null ? null : Number(created.oldest),
  };
}

/** Marks the owner's watch deleted and drops its pending deliveries; false when it has no such watch. */
export async function deleteWatch(db: Db, owner: string, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('watches')
    .set({ deleted_at: now })
    .where('id', '=', id)
    .where('owner_did', '=', owner)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  await db.deleteFrom('watch_deliveries').where('watch_id', '=', id).execute();
  return true;
}

/** Deleted watches whose creation is older than `before` (past the rate window): nothing counts them. */
export async function purgeDeletedWatches(db: Db, before: number): Promise<void> {
  await db
    .deleteFrom('watches')
    .where('deleted_at', 'is not', null)
    .where('created_at', '<', before)
    .execute();
}

/** Live watches of `target` that subscribe to `event` (at most `limit`: the per-target bound). */
export async function watchersOf(db: Db, target: string, event: string, limit: number): Promise<WatchRow[]> {
  const rows = await db
    .selectFrom('watches')
    .selectAll()
    .where('target', '=', target)
    .where('deleted_at', 'is', null)
    .limit(limit)
    .execute();
  return rows.filter((row) => (JSON.parse(row.events) as string[]).includes(event));
}

export async function insertDeliveries(
  db: Db,
  rows: readonly Omit<WatchDeliveriesTable, 'attempts' | 'lease_until'>[],
): Promise<void> {
  // In batches: one statement for every watcher of a much-watched agent would pass the dialects'
  // bounds on parameters (SQLite 32,766; PostgreSQL 65,535).
  for (let start = 0; start < rows.length; start += DELIVERY_INSERT_BATCH)
    await db
      .insertInto('watch_deliveries')
      .values(
        rows
          .slice(start, start + DELIVERY_INSERT_BATCH)
          .map((row) => ({ ...row, attempts: 0, lease_until: null })),
      )
      .execute();
}

/** Deliveries per insert statement (seven parameters each). */
const DELIVERY_INSERT_BATCH = 1000;

/**
 * Takes up to `limit` due deliveries for this node until `leaseUntil`. The lease is re-checked by the
 * update itself, so two nodes never take one delivery at once.
 */
export async function claimDueDeliveries(
  db: Db,
  now: number,
  leaseUntil: number,
  limit: number,
): Promise<DeliveryRow[]> {
  const due = await db
    .selectFrom('watch_deliveries')
    .select('id')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
  if (due.length === 0) return [];
  const claimed = await db
    .updateTable('watch_deliveries')
    .set({ lease_until: leaseUntil, attempts: sql<number>`attempts + 1` })
    .where(
      'id',
      'in',
      due.map((row) => row.id),
    )
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .returning('id')
    .execute();
  if (claimed.length === 0) return [];
  const rows = await db
    .selectFrom('watch_deliveries')
    .innerJoin('watches', 'watches.id', 'watch_deliveries.watch_id')
    .select([
      'watch_deliveries.id',
      'watch_deliveries.watch_id',
      'watch_deliveries.body',
      'watch_deliveries.attempts',
      'watch_deliveries.next_attempt_at',
      'watch_deliveries.lease_until',
      'watch_deliveries.created_at',
      'watches.url',
      'watches.secret',
      'watches.owner_did',
    ])
    .where(
      'watch_deliveries.id',
      'in',
      claimed.map((row) => row.id),
    )
    .execute();
  return rows.map((row) => ({ ...row, attempts: Number(row.attempts) }));
}

export async function finishDelivery(db: Db, id: string): Promise<void> {
  await db.deleteFrom('watch_deliveries').where('id', '=', id).execute();
}

export async function retryDeliveryAt(db: Db, id: string, at: number): Promise<void> {
  await db
    .updateTable('watch_deliveries')
    .set({ next_attempt_at: at, lease_until: null })
    .where('id', '=', id)
    .execute();
}

/**
 * Takes the change feed cursor for this transaction (locked until commit on PostgreSQL; SQLite's
 * transaction holds the write lock): one node at a time turns changes into deliveries.
 */
export async function lockCursor(db: Db): Promise<number> {
  const result = await sql<{
    seq: number | string;
  }>`update watch_cursor set seq = seq where id = 1 returning seq`.execute(db);
  const row = result.rows[0];
  if (row === undefined) throw new Error('watch_cursor row is missing (migration 022-watches)');
  return Number(row.seq);
}

/** Whether the log holds records past the cursor (read without locking the cursor). */
export async function recordsAfterCursor(db: Db): Promise<boolean> {
  const cursor = await db.selectFrom('watch_cursor').select('seq').where('id', '=', 1).executeTakeFirst();
  if (cursor === undefined) return false;
  const next = await db
    .selectFrom('log_records')
    .select('seq')
    .where('seq', '>', Number(cursor.seq))
    .limit(1)
    .executeTakeFirst();
  return next !== undefined;
}

export async function moveCursor(db: Db, seq: number): Promise<void> {
  await db.updateTable('watch_cursor').set({ seq }).where('id', '=', 1).execute();
}

/** Log records after `seq` (profile changes and events), in order. */
export async function recordsAfter(
  db: Db,
  seq: number,
  limit: number,
): Promise<{ seq: number; operation: string; record: string }[]> {
  const rows = await db
    .selectFrom('log_records')
    .select(['seq', 'operation', 'record'])
    .where('seq', '>', seq)
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ ...row, seq: Number(row.seq) }));
}

/** Which of `targets` have a live watch (so the follower reads no watch for unwatched agents). */
export async function watchedTargets(db: Db, targets: readonly string[]): Promise<Set<string>> {
  if (targets.length === 0) return new Set();
  const rows = await db
    .selectFrom('watches')
    .select('target')
    .distinct()
    .where('target', 'in', [...new Set(targets)])
    .where('deleted_at', 'is', null)
    .execute();
  return new Set(rows.map((row) => row.target));
}

/** Agents watched for availability, after `after` in DID order. */
export async function availabilityTargets(db: Db, after: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('watches')
    .select('target')
    .distinct()
    .where('deleted_at', 'is', null)
    .where('events', 'like', '%agent.availability_changed%')
    .where('target', '>', after)
    .orderBy('target')
    .limit(limit)
    .execute();
  return rows.map((row) => row.target);
}

export async function announcedStatuses(db: Db, dids: readonly string[]): Promise<Map<string, string>> {
  if (dids.length === 0) return new Map();
  const rows = await db
    .selectFrom('watch_availability')
    .select(['did', 'status'])
    .where('did', 'in', [...dids])
    .execute();
  return new Map(rows.map((row) => [row.did, row.status]));
}

/** Records `did`'s first known status; false when a row was there already. */
export async function rememberStatus(db: Db, did: string, status: string, now: number): Promise<boolean> {
  const result = await db
    .insertInto('watch_availability')
    .values({ did, status, changed_at: now })
    .onConflict((oc) => oc.column('did').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/**
 * Moves `did` from status `from` to `to`; true only for the one transaction (of any node) that did, so
 * the change is announced once.
 */
export async function moveStatus(
  db: Db,
  did: string,
  from: string,
  to: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('watch_availability')
    .set({ status: to, changed_at: now })
    .where('did', '=', did)
    .where('status', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
