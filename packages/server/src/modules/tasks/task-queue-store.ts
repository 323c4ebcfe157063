import { sql } from 'kysely';
import { compiledOnce, compiledWriteReturning, type CompiledRead } from '../../db/compiled.js';
import type { Db } from '../../db/connect.js';
import { TASK_LIMITS } from './task-limits.js';
import type { TaskRow } from './tasks-store.js';

/** What a poll reads of each pending task before it decides which inputs fit in its page. */
export type PendingTaskHead = Pick<
  TaskRow,
  'id' | 'capability' | 'caller_did' | 'created_at' | 'deadline_at' | 'input_bytes'
>;

/**
 * The poll's read, compiled once per page size: the limit is written into the statement as a literal.
 * Bound as a parameter, SQLite spent about 20 µs more on every run of the statement than with the same
 * number written in (measured with better-sqlite3 on the bench's database), and a page size is one of
 * at most pendingTasksMaxLimit values. It reads no input: the page's inputs are read once it is cut to
 * its byte budget.
 */
const pendingForTarget = new Map<number, CompiledRead<PendingTaskHead, readonly [string, number, number]>>();

function pendingTasksRead(limit: number): CompiledRead<PendingTaskHead, readonly [string, number, number]> {
  let read = pendingForTarget.get(limit);
  if (read === undefined) {
    read = compiledOnce(
      (db, targetDid: string, now: number, leaseFreeAt: number) =>
        db
          .selectFrom('tasks')
          .select(['id', 'capability', 'caller_did', 'created_at', 'deadline_at', 'input_bytes'])
          .where('target_did', '=', targetDid)
          .where('status', '=', sql.lit('pending'))
          .where('delivery_mode', '=', sql.lit('queue'))
          // `status = 'pending'` selects the partial index of pending tasks, already in (created_at, id)
          // order (migration 010). `+deadline_at`: no index on this term, so SQLite's planner (no
          // ANALYZE) does not scan every agent's pending tasks by deadline instead.
          // The deadline rule (task-state.ts `settle`) in SQL: a task past its deadline is not pending.
          .where(sql<number>`+${sql.ref('deadline_at')}`, '>', now)
          .where(sql<number>`coalesce(${sql.ref('lease_until')}, 0)`, '<=', leaseFreeAt)
          .orderBy('created_at')
          .orderBy('id')
          .limit(sql.lit(limit)),
      [
        '\u0000target_did' as string,
        '\u0000now' as unknown as number,
        '\u0000lease_free_at' as unknown as number,
      ] as const,
    );
    pendingForTarget.set(limit, read);
  }
  return read;
}

/** The text of the pending-tasks read, for its query-plan test. */
export const pendingTasksSql = (db: Db, limit: number): string => pendingTasksRead(limit).sqlFor(db);

/**
 * Queue tasks waiting for this agent, oldest first, without their input; expired ones are left out,
 * and with `skipLeasedAt`, those another long poll holds at that time.
 */
export async function listPendingTasks(
  db: Db,
  targetDid: string,
  now: number,
  limit: number,
  skipLeasedAt?: number,
): Promise<PendingTaskHead[]> {
  if (!Number.isInteger(limit) || limit < 1 || limit > TASK_LIMITS.pendingTasksMaxLimit) {
    throw new RangeError(`listPendingTasks: limit ${limit} is not 1-${TASK_LIMITS.pendingTasksMaxLimit}`);
  }
  return pendingTasksRead(limit)(db, targetDid, now, skipLeasedAt ?? Number.MAX_SAFE_INTEGER);
}

/** Statements whose `id in (...)` list has `count` members, each built and compiled once per count. */
function perIdCount<T>(build: (count: number) => T): (count: number) => T {
  const byCount = new Map<number, T>();
  return (count) => {
    let built = byCount.get(count);
    if (built === undefined) {
      built = build(count);
      byCount.set(count, built);
    }
    return built;
  };
}

const idMarkers = (count: number): string[] =>
  Array.from({ length: count }, (_, index) => `\u0000id${index}`);

/**
 * Leases pending tasks to one poll until `until`: only those still pending and not held by another
 * poll at `now` move, so two polls (on any nodes) never both win one. Returns the ids this poll won.
 */
export async function leasePendingTasks(
  db: Db,
  ids: readonly string[],
  now: number,
  until: number,
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const won = await leaseStatement(ids.length)(db, until, now, ...ids);
  return new Set(won.map((row) => row.id));
}

const leaseStatement = perIdCount((count) =>
  compiledWriteReturning(
    (db, until: number, now: number, ...ids: string[]) =>
      db
        .updateTable('tasks')
        .set({ lease_until: until })
        // In the order of the placeholders: the ids, which vary in number, come last.
        .where(sql<number>`coalesce(${sql.ref('lease_until')}, 0)`, '<=', now)
        .where('status', '=', sql.lit('pending'))
        .where('id', 'in', ids)
        .returning('id'),
    ['\u0000until' as unknown as number, '\u0000now' as unknown as number, ...idMarkers(count)] as const,
  ),
);

const inputsRead = perIdCount((count) =>
  compiledOnce(
    (db, ...ids: string[]) => db.selectFrom('tasks').select(['id', 'input']).where('id', 'in', ids),
    idMarkers(count),
  ),
);

/** The stored input JSON text of each task, by id, as written at invocation (never re-parsed). */
export async function readTaskInputs(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await inputsRead(ids.length)(db, ...ids);
  return new Map(rows.map((row) => [row.id, row.input]));
}
