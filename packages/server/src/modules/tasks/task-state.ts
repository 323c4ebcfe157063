import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import type { TaskErrorCode, TaskStatus } from '../../db/schema/index.js';
import { findTask, timeOutExpiredTasks, transitionTask, type TaskRow } from './tasks-store.js';
import type { TaskEvents } from './events.js';

/**
 * The task state machine, in one place:
 *   pending -> processing (accept, before the deadline)
 *   pending | processing -> completed (result) | failed (fail, webhook failure) | timeout (deadline)
 * Each move is one conditional UPDATE, so two workers never both win and a late result never
 * overwrites a timeout. Every move to a final status is announced inside its own transaction (on
 * PostgreSQL a NOTIFY, delivered at commit), waking the invoker on any node;
 * moves to processing are not (an invoker waits for the end, and a wake-up costs it a read, and on
 * PostgreSQL a NOTIFY).
 */
export const OPEN_STATUSES: readonly TaskStatus[] = ['pending', 'processing'];
export const FINAL_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'timeout'];

/**
 * The deadline rule, for readers: the task as it must be seen at `now`. An open task whose deadline has
 * passed is a timeout that ended now (what `timeOut` records), whether or not the move is stored yet;
 * any other task is returned as is. Pure: `TaskStateMachine.settled` records the move.
 */
export function settle(task: TaskRow, now: number): TaskRow {
  if (!OPEN_STATUSES.includes(task.status) || Number(task.deadline_at) > now) return task;
  return { ...task, status: 'timeout', completed_at: now };
}

export class TaskStateMachine {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly events: TaskEvents,
    /** Runs in the transaction of every terminal move (the service record). */
    private readonly onFinished?: (trx: Db, taskId: string) => Promise<void>,
  ) {}

  accept(id: string, targetDid: string): Promise<boolean> {
    const now = this.clock.now();
    return this.move(
      id,
      ['pending'],
      { status: 'processing', accepted_at: now },
      { targetDid, notExpiredAt: now },
    );
  }

  /** A result counts only before the deadline: after it the task is (or is about to be) a timeout. */
  complete(id: string, output: unknown, targetDid?: string): Promise<boolean> {
    const now = this.clock.now();
    const patch = { status: 'completed' as const, output: JSON.stringify(output), completed_at: now };
    return this.move(id, OPEN_STATUSES, patch, { targetDid, notExpiredAt: now });
  }

  fail(id: string, error: string, code: TaskErrorCode, targetDid?: string): Promise<boolean> {
    const now = this.clock.now();
    const patch = { status: 'failed' as const, error, error_code: code, completed_at: now };
    return this.move(id, OPEN_STATUSES, patch, { targetDid, notExpiredAt: now });
  }

  /** The webhook answered 202: the agent has the task and will report through result or fail. */
  markDelivered(id: string): Promise<boolean> {
    return this.move(id, ['pending'], { status: 'processing', accepted_at: this.clock.now() });
  }

  /** The deadline passed first (no result, or a webhook that had not answered): 504 INVOCATION_TIMEOUT. */
  timeOut(id: string): Promise<boolean> {
    return this.move(id, OPEN_STATUSES, { status: 'timeout', completed_at: this.clock.now() });
  }

  /**
   * The caller hung up while the task still waited for a worker, and nobody can attach to it again: it
   * leaves the agent's queue as a timeout. Not counted in the agent's service record, which the caller
   * could otherwise spoil by hanging up.
   */
  abandon(id: string): Promise<boolean> {
    return this.move(id, ['pending'], { status: 'timeout', completed_at: this.clock.now() }, {}, false);
  }

  /**
   * The stored task brought in line with `settle`, for every reader: a passed deadline not recorded yet
   * (its invoker vanished, no sweep ran) is recorded as a timeout move (counted, announced) and the task
   * read back, so this reader, later ones and other nodes see the same task.
   */
  async settled(task: TaskRow): Promise<TaskRow> {
    const seen = settle(task, this.clock.now());
    if (seen.status === task.status) return task;
    await this.timeOut(task.id);
    return (await findTask(this.db, task.id)) ?? seen;
  }

  /** Background sweep: up to `limit` open tasks past their deadline become `timeout`. Returns how many. */
  async sweepExpired(limit: number): Promise<number> {
    const ids = await timeOutExpiredTasks(this.db, this.clock.now(), limit);
    for (const id of ids) await this.events.taskChanged(id);
    return ids.length;
  }

  private async move(
    id: string,
    from: readonly TaskStatus[],
    patch: Parameters<typeof transitionTask>[3],
    options: { targetDid?: string; notExpiredAt?: number } = {},
    record = true,
  ): Promise<boolean> {
    if (!FINAL_STATUSES.includes(patch.status)) return transitionTask(this.db, id, from, patch, options);
    // A final move, its service record and its announcement to other nodes commit together.
    const moved = await this.db.transaction().execute(async (trx) => {
      const won = await transitionTask(trx, id, from, patch, options);
      if (won) {
        if (record) await this.onFinished?.(trx, id);
        await this.events.announceTaskChange(trx, id);
      }
      return won;
    });
    if (moved) await this.events.taskChanged(id, { announced: true });
    return moved;
  }
}
