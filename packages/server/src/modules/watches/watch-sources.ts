import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import type { AvailabilityStatuses, WatchEvent } from './watch-events.js';
import type { WatchService } from './watches.js';
import {
  announcedStatuses,
  availabilityTargets,
  lockCursor,
  recordsAfterCursor,
  moveCursor,
  moveStatus,
  recordsAfter,
  rememberStatus,
  watchedTargets,
} from './watches-store.js';

/** Records read per round of the change follower. */
const FOLLOW_BATCH = 500;
/** Agents whose availability is read per query. */
const AVAILABILITY_BATCH = 500;

/**
 * agent.updated and agent.deactivated, from the transparency log's records (written by the very
 * transaction that changes an agent, in change-feed order): a durable cursor, advanced in the
 * transaction that queues the deliveries, with its row locked meanwhile, so each change is announced
 * once whichever node reads it (docs/decisions/watches.md).
 */
export async function followChanges(db: Db, watches: WatchService): Promise<number> {
  let total = 0;
  // A plain read first: an idle follower takes no lock, so it never holds one table while waiting
  // for another (which deadlocks with a pg_restore replacing the tables under running nodes).
  if (!(await recordsAfterCursor(db))) return total;
  for (;;) {
    const read = await db.transaction().execute(async (trx) => {
      const cursor = await lockCursor(trx);
      const records = await recordsAfter(trx, cursor, FOLLOW_BATCH);
      if (records.length === 0) return 0;
      const events = records.flatMap((record) => eventOf(record));
      const watched = await watchedTargets(
        trx,
        events.map((event) => event.target),
      );
      for (const event of events) if (watched.has(event.target)) await watches.publish(event, trx);
      const last = records[records.length - 1];
      if (last !== undefined) await moveCursor(trx, last.seq);
      return records.length;
    });
    total += read;
    if (read < FOLLOW_BATCH) return total;
  }
}

interface ProfileRecord {
  did?: unknown;
  status?: unknown;
  updated_at?: unknown;
}

/** The event a log record announces: profile updates and reputation changes (not registrations). */
function eventOf(record: { seq: number; operation: string; record: string }): WatchEvent[] {
  if (record.operation !== 'update' && record.operation !== 'reputation') return [];
  const profile = JSON.parse(record.record) as ProfileRecord;
  if (typeof profile.did !== 'string') return [];
  const updatedAt = Number(profile.updated_at);
  if (record.operation === 'update' && profile.status !== 'active') {
    return [
      {
        type: 'agent.deactivated',
        target: profile.did,
        time: updatedAt,
        data: { seq: record.seq, updated_at: updatedAt },
      },
    ];
  }
  return [
    {
      type: 'agent.updated',
      target: profile.did,
      time: updatedAt,
      data: { seq: record.seq, change: record.operation, updated_at: updatedAt },
    },
  ];
}

/**
 * agent.availability_changed: each watched agent's status is compared with the one last announced;
 * a change is recorded by a conditional update (status = the one read), so when several nodes see it
 * only the one whose update applies queues the deliveries, in the same transaction.
 */
export async function checkAvailability(
  db: Db,
  clock: Clock,
  statuses: AvailabilityStatuses,
  watches: WatchService,
): Promise<number> {
  let changed = 0;
  let after = '';
  for (;;) {
    const dids = await availabilityTargets(db, after, AVAILABILITY_BATCH);
    if (dids.length === 0) return changed;
    const now = await statuses(dids);
    const announced = await announcedStatuses(db, dids);
    const at = clock.now();
    for (const did of dids) {
      const status = now.get(did) ?? 'unknown';
      const previous = announced.get(did);
      if (previous === status) continue;
      if (previous === undefined) {
        await rememberStatus(db, did, status, at);
        continue;
      }
      const moved = await db.transaction().execute(async (trx) => {
        if (!(await moveStatus(trx, did, previous, status, at))) return false;
        await watches.publish(
          {
            type: 'agent.availability_changed',
            target: did,
            time: at,
            data: { status, previous_status: previous },
          },
          trx,
        );
        return true;
      });
      if (moved) changed += 1;
    }
    if (dids.length < AVAILABILITY_BATCH) return changed;
    after = dids[dids.length - 1] ?? after;
  }
}
