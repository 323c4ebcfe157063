import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../connect.js';
import type { TaskErrorCode, TaskStatus, TasksTable } from '../schema/index.js';

export type TaskRow = Selectable<TasksTable>;

export async function insertTask(db: Db, row: Insertable<TasksTable>): Promise<void> {
  await db.insertInto('tasks').values(row).execute();
}

export async function findTask(db: Db, id: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Queue tasks waiting for this agent, oldest first; expired ones are left out. */
export async function listPendingTasks(
  db: Db,
  targetDid: string,
  now: number,
  limit: number,
): Promise<TaskRow[]> {
  return db
    .selectFrom('tasks')
    .selectAll()
    .where('target_did', '=', targetDid)
    .where('status', '=', 'pending')
    .where('delivery_mode', '=', 'queue')
    .where('deadline_at', '>', now)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

export interface TransitionPatch {
  status: TaskStatus;
  output?: string;
  error?: string;
  error_code?: TaskErrorCode;
  accepted_at?: number;
  completed_at?: number;
}

/**
 * One conditional UPDATE: the task moves only if it is still in one of `from` (and, when given, its
 * deadline has not passed). Returns whether this caller won the transition.
 */
export async function transitionTask(
  db: Db,
  id: string,
  from: readonly TaskStatus[],
  patch: TransitionPatch,
  options: { targetDid?: string; notExpiredAt?: number } = {},
): Promise<boolean> {
  let query = db.updateTable('tasks').set(patch).where('id', '=', id).where('status', 'in', from);
  if (options.targetDid !== undefined) query = query.where('target_did', '=', options.targetDid);
  if (options.notExpiredAt !== undefined) query = query.where('deadline_at', '>', options.notExpiredAt);
  const result = await query.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Moves at most `limit` open tasks whose deadline has passed to `timeout` (oldest deadline first) and
 * returns their ids. Conditional on the status, so nodes sweeping at once never move a task twice.
 */
export async function timeOutExpiredTasks(db: Db, now: number, limit: number): Promise<string[]> {
  const expired = await db
    .selectFrom('tasks')
    .select('id')
    .where('status', 'in', ['pending', 'processing'])
    .where('deadline_at', '<=', now)
    .orderBy('deadline_at')
    .limit(limit)
    .execute();
  if (expired.length === 0) return [];
  const moved = await db
    .updateTable('tasks')
    .set({ status: 'timeout', completed_at: now })
    .where(
      'id',
      'in',
      expired.map((row) => row.id),
    )
    .where('status', 'in', ['pending', 'processing'])
    .returning('id')
    .execute();
  return moved.map((row) => row.id);
}
