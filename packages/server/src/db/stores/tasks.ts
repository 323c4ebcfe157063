import { sql, type Selectable } from 'kysely';
import { compiledOnce, compiledWrite, placeholdersFor, type CompiledRead } from '../compiled.js';
import { LIMITS } from '../../services/limits.js';
import type { Db } from '../connect.js';
import type { TaskErrorCode, TaskStatus, TasksTable } from '../schema/index.js';

export type TaskRow = Selectable<TasksTable>;

/** Every column of a task, in the order the compiled insert takes their values. */
const TASK_COLUMNS = [
  'id',
  'caller_did',
  'target_did',
  'capability',
  'input',
  'status',
  'delivery_mode',
  'output',
  'error',
  'error_code',
  'created_at',
  'deadline_at',
  'accepted_at',
  'completed_at',
] as const satisfies readonly (keyof TasksTable)[];

const insertTaskRow = compiledWrite(
  (db, ...values: unknown[]) =>
    db
      .insertInto('tasks')
      // The placeholders stand for values of every column's type; Kysely only carries them.
      .values(Object.fromEntries(TASK_COLUMNS.map((column, index) => [column, values[index]])) as TaskRow),
  placeholdersFor(TASK_COLUMNS),
);

/** Inserts a task with every column given (the compiled insert takes them all). */
export async function insertTask(db: Db, row: TaskRow): Promise<void> {
  await insertTaskRow(db, ...TASK_COLUMNS.map((column) => row[column]));
}

const taskById = compiledOnce((db, id: string) => db.selectFrom('tasks').selectAll().where('id', '=', id), [
  '\u0000id',
] as const);

export async function findTask(db: Db, id: string): Promise<TaskRow | undefined> {
  return (await taskById(db, id))[0];
}

/**
 * The poll's read, compiled once per page size: the limit is written into the statement as a literal.
 * Bound as a parameter, SQLite spent about 20 µs more on every run of the statement than with the same
 * number written in (measured with better-sqlite3 on the bench's database), and a page size is one of
 * at most pendingTasksMaxLimit values.
 */
const pendingForTarget = new Map<number, CompiledRead<TaskRow, readonly [string, number]>>();

function pendingTasksRead(limit: number): CompiledRead<TaskRow, readonly [string, number]> {
  let read = pendingForTarget.get(limit);
  if (read === undefined) {
    read = compiledOnce(
      (db, targetDid: string, now: number) =>
        db
          .selectFrom('tasks')
          .selectAll()
          .where('target_did', '=', targetDid)
          .where('status', '=', sql.lit('pending'))
          .where('delivery_mode', '=', sql.lit('queue'))
          // `status = 'pending'` selects the partial index of pending tasks, already in (created_at, id)
          // order (migration 010). `+deadline_at`: no index on this term, so SQLite's planner (no
          // ANALYZE) does not scan every agent's pending tasks by deadline instead.
          .where(sql<number>`+${sql.ref('deadline_at')}`, '>', now)
          .orderBy('created_at')
          .orderBy('id')
          .limit(sql.lit(limit)),
      ['\u0000target_did' as string, '\u0000now' as unknown as number] as const,
    );
    pendingForTarget.set(limit, read);
  }
  return read;
}

/** The text of the pending-tasks read, for its query-plan test. */
export const pendingTasksSql = (db: Db, limit: number): string => pendingTasksRead(limit).sqlFor(db);

/** Queue tasks waiting for this agent, oldest first; expired ones are left out. */
export async function listPendingTasks(
  db: Db,
  targetDid: string,
  now: number,
  limit: number,
): Promise<TaskRow[]> {
  if (!Number.isInteger(limit) || limit < 1 || limit > LIMITS.pendingTasksMaxLimit) {
    throw new RangeError(`listPendingTasks: limit ${limit} is not 1-${LIMITS.pendingTasksMaxLimit}`);
  }
  return pendingTasksRead(limit)(db, targetDid, now);
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
  const columns = Object.keys(patch) as (keyof TransitionPatch)[];
  const shape = `${from.join(',')}|${columns.join(',')}|${options.targetDid !== undefined}|${options.notExpiredAt !== undefined}`;
  let run = transitions.get(shape);
  if (run === undefined) {
    run = compiledTransition(
      from,
      columns,
      options.targetDid !== undefined,
      options.notExpiredAt !== undefined,
    );
    transitions.set(shape, run);
  }
  const values: unknown[] = columns.map((column) => patch[column]);
  values.push(id);
  if (options.targetDid !== undefined) values.push(options.targetDid);
  if (options.notExpiredAt !== undefined) values.push(options.notExpiredAt);
  return (await run(db, ...values)) > 0;
}

/** The few shapes of a transition (the state machine's moves), each compiled once per database handle. */
const transitions = new Map<string, (db: Db, ...values: unknown[]) => Promise<number>>();

function compiledTransition(
  from: readonly TaskStatus[],
  columns: readonly (keyof TransitionPatch)[],
  byTarget: boolean,
  beforeDeadline: boolean,
) {
  const names = [
    ...columns,
    'id',
    ...(byTarget ? ['target_did'] : []),
    ...(beforeDeadline ? ['deadline_at'] : []),
  ];
  return compiledWrite((db, ...values: unknown[]) => {
    const patch = Object.fromEntries(
      columns.map((column, index) => [column, values[index]]),
    ) as unknown as TransitionPatch;
    let next = columns.length;
    // `from` is part of the shape: its statuses are literals of the statement, not parameters.
    let query = db
      .updateTable('tasks')
      .set(patch)
      .where('id', '=', values[next++] as string)
      .where(
        'status',
        'in',
        from.map((status) => sql.lit(status)),
      );
    if (byTarget) query = query.where('target_did', '=', values[next++] as string);
    if (beforeDeadline) query = query.where('deadline_at', '>', values[next++] as number);
    return query;
  }, placeholdersFor(names));
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
