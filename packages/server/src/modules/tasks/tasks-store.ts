import { sql, type Selectable } from 'kysely';
import { compiledOnce, compiledWrite, placeholdersFor } from '../../db/compiled.js';
import type { Db } from '../../db/connect.js';
import type { TaskErrorCode, TaskStatus, TasksTable } from '../../db/schema/index.js';

export type TaskRow = Selectable<TasksTable>;

/** A task as created: the lease and the purge mark start empty; `input_bytes` defaults to 0. */
export type NewTaskRow = Omit<TaskRow, 'input_bytes' | 'lease_until' | 'payload_purged_at'> & {
  input_bytes?: number;
};

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
  'input_bytes',
] as const satisfies readonly (keyof TasksTable)[];

const insertTaskRow = compiledWrite(
  (db, ...values: unknown[]) =>
    db
      .insertInto('tasks')
      // The placeholders stand for values of every column's type; Kysely only carries them.
      .values(Object.fromEntries(TASK_COLUMNS.map((column, index) => [column, values[index]])) as NewTaskRow),
  placeholdersFor(TASK_COLUMNS),
);

/** Inserts a task with every column given (the compiled insert takes them all). */
export async function insertTask(db: Db, row: NewTaskRow): Promise<void> {
  await insertTaskRow(
    db,
    ...TASK_COLUMNS.map((column) => row[column] ?? (column === 'input_bytes' ? 0 : null)),
  );
}

const taskById = compiledOnce((db, id: string) => db.selectFrom('tasks').selectAll().where('id', '=', id), [
  '\u0000id',
] as const);

export async function findTask(db: Db, id: string): Promise<TaskRow | undefined> {
  return (await taskById(db, id))[0];
}

/**
 * Drops input and output of at most `limit` tasks that ended before `endedBefore` (oldest first); the
 * row stays for statistics and verified reviews. Returns how many.
 */
export async function purgeTaskPayloads(
  db: Db,
  endedBefore: number,
  now: number,
  limit: number,
): Promise<number> {
  const due = await db
    .selectFrom('tasks')
    .select('id')
    .where(sql<boolean>`payload_purged_at is null and completed_at is not null`)
    .where('completed_at', '<', endedBefore)
    .orderBy('completed_at')
    .limit(limit)
    .execute();
  if (due.length === 0) return 0;
  const purged = await db
    .updateTable('tasks')
    .set({ input: '{}', output: null, error: null, payload_purged_at: now })
    .where(
      'id',
      'in',
      due.map((row) => row.id),
    )
    .where('payload_purged_at', 'is', null)
    .executeTakeFirst();
  return Number(purged.numUpdatedRows);
}

/** Deletes at most `limit` tasks that ended before `endedBefore`, oldest first. Returns how many. */
export async function deleteOldTasks(db: Db, endedBefore: number, limit: number): Promise<number> {
  const due = await db
    .selectFrom('tasks')
    .select('id')
    .where('completed_at', '<', endedBefore)
    .orderBy('completed_at')
    .limit(limit)
    .execute();
  if (due.length === 0) return 0;
  const deleted = await db
    .deleteFrom('tasks')
    .where(
      'id',
      'in',
      due.map((row) => row.id),
    )
    .executeTakeFirst();
  return Number(deleted.numDeletedRows);
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
    // The deadline rule (task-state.ts `settle`) in SQL: past its deadline, only the timeout move remains.
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
    // The deadline rule (task-state.ts `settle`) in SQL: an open task past its deadline is a timeout.
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

/** Which of one caller's tasks with one agent to list (see `listCallerTasks`). */
export interface CallerTasksQuery {
  callerDid: string;
  targetDid: string;
  /** Only these statuses, as `settle` sees them at `now` (an open task past its deadline is a timeout). */
  statuses?: readonly TaskStatus[];
  /** Only tasks whose last change (end, else creation) is at or after this time. */
  changedSince?: number;
  /** Only this task. */
  taskId?: string;
  /** Continue after this task of the order (last change, then id, both descending). */
  after?: { changedAt: number; id: string };
  limit: number;
  now: number;
}

/**
 * One caller's tasks with one agent, the most recently changed first (a task's last change is its end,
 * else its creation), each page continuing after the last task of the one before.
 */
export async function listCallerTasks(
  db: Db,
  query: CallerTasksQuery,
): Promise<{ rows: TaskRow[]; total: number }> {
  const changedAt = sql<number>`coalesce(completed_at, created_at)`;
  let select = db
    .selectFrom('tasks')
    .where('caller_did', '=', query.callerDid)
    .where('target_did', '=', query.targetDid);
  if (query.taskId !== undefined) select = select.where('id', '=', query.taskId);
  if (query.changedSince !== undefined) select = select.where(changedAt, '>=', query.changedSince);
  const statuses = query.statuses;
  if (statuses !== undefined) {
    const open = statuses.filter((status) => status === 'pending' || status === 'processing');
    const ended = statuses.filter((status) => status !== 'pending' && status !== 'processing');
    select = select.where((eb) =>
      eb.or([
        ...(open.length > 0 ? [eb.and([eb('status', 'in', open), eb('deadline_at', '>', query.now)])] : []),
        ...(ended.length > 0 ? [eb('status', 'in', ended)] : []),
        // The deadline rule: an open task past its deadline reads as a timeout.
        ...(statuses.includes('timeout')
          ? [eb.and([eb('status', 'in', ['pending', 'processing']), eb('deadline_at', '<=', query.now)])]
          : []),
      ]),
    );
  }
  const counted = await select
    .select((eb) => eb.fn.countAll<number | string>().as('total'))
    .executeTakeFirst();
  const after = query.after;
  const page =
    after === undefined
      ? select
      : select.where((eb) =>
          eb.or([
            eb(changedAt, '<', after.changedAt),
            eb.and([eb(changedAt, '=', after.changedAt), eb('id', '<', after.id)]),
          ]),
        );
  const rows = await page
    .selectAll()
    .orderBy(changedAt, 'desc')
    .orderBy('id', 'desc')
    .limit(query.limit)
    .execute();
  return { rows, total: Number(counted?.total ?? 0) };
}
