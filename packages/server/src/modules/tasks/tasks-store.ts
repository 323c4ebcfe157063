import { sql, type Selectable } from 'kysely';
import {
  compiledOnce,
  compiledWrite,
  compiledWriteReturning,
  placeholdersFor,
  type CompiledRead,
} from '../../db/compiled.js';
import { LIMITS } from '../../kernel/limits.js';
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
  if (!Number.isInteger(limit) || limit < 1 || limit > LIMITS.pendingTasksMaxLimit) {
    throw new RangeError(`listPendingTasks: limit ${limit} is not 1-${LIMITS.pendingTasksMaxLimit}`);
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

/** The read of openTaskLoad, apart so its query plan can be checked. */
export const openTaskLoadQuery = (db: Db, side: 'caller_did' | 'target_did', did: string, now: number) =>
  db
    .selectFrom('tasks')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('tasks'),
      eb.fn.coalesce(eb.fn.sum<number | string>('input_bytes'), sql.lit(0)).as('bytes'),
    ])
    .where(side, '=', did)
    // The literal condition of the partial indexes of open tasks (migration 011), so both databases use them.
    .where(sql<boolean>`status in ('pending', 'processing')`)
    // The deadline rule (task-state.ts `settle`) in SQL: a task past its deadline is no longer open.
    .where('deadline_at', '>', now);

/**
 * Input bytes every open task of the registry holds (not past its deadline). Reads every open task's
 * entry of a partial index: read once a second per node (RegistryOpenInput), never per invocation.
 */
export async function openInputBytesTotal(db: Db, now: number): Promise<number> {
  const row = await db
    .selectFrom('tasks')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('input_bytes'), sql.lit(0)).as('bytes'))
    .where(sql<boolean>`status in ('pending', 'processing')`)
    .where('deadline_at', '>', now)
    .executeTakeFirst();
  return Number(row?.bytes ?? 0);
}

/**
 * Both open loads of an invocation (its caller's and its target's) in one statement, so the invoke
 * transaction runs one read for them instead of two; each side still reads its own partial index.
 */
export const openTaskLoadsQuery = (
  db: Db,
  callerDid: string,
  callerNow: number,
  targetDid: string,
  targetNow: number,
) =>
  db
    .selectFrom([
      openTaskLoadQuery(db, 'caller_did', callerDid, callerNow).as('mine'),
      openTaskLoadQuery(db, 'target_did', targetDid, targetNow).as('theirs'),
    ])
    .select([
      'mine.tasks as caller_tasks',
      'mine.bytes as caller_bytes',
      'theirs.tasks as target_tasks',
      'theirs.bytes as target_bytes',
    ]);

const openLoadsRead = compiledOnce(openTaskLoadsQuery, [
  '\u0000caller_did' as string,
  '\u0000caller_now' as unknown as number,
  '\u0000target_did' as string,
  '\u0000target_now' as unknown as number,
] as const);

export interface OpenTaskLoad {
  tasks: number;
  bytes: number;
}

/** Open tasks (not past their deadline) and their input bytes, of one caller and of one target. */
export async function openTaskLoads(
  db: Db,
  callerDid: string,
  targetDid: string,
  now: number,
): Promise<{ caller: OpenTaskLoad; target: OpenTaskLoad }> {
  const [row] = await openLoadsRead(db, callerDid, now, targetDid, now);
  return {
    caller: { tasks: Number(row?.caller_tasks ?? 0), bytes: Number(row?.caller_bytes ?? 0) },
    target: { tasks: Number(row?.target_tasks ?? 0), bytes: Number(row?.target_bytes ?? 0) },
  };
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
