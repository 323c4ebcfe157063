import { sql } from 'kysely';
import { compiledOnce } from '../../db/compiled.js';
import type { Db } from '../../db/connect.js';

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
