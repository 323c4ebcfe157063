import type { Clock } from '../clock.js';
import type { Db } from '../db/connect.js';
import type { TaskStatus } from '../db/schema/index.js';
import { findTask, listPendingTasks, type TaskRow } from '../db/stores/tasks.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../errors.js';
import type { TaskEvents } from '../invocation/events.js';
import type { TaskStateMachine } from '../invocation/task-state.js';
import { Wakeup } from '../invocation/wait.js';
import type { AuthenticatedAgent } from './authentication.js';

export interface PendingTask {
  task_id: string;
  capability: string;
  input: Record<string, unknown>;
  caller_did: string;
  created_at: number;
  deadline_at: number;
}

export interface TaskAck {
  task_id: string;
  status: TaskStatus;
}

export interface AgentTaskDeps {
  db: Db;
  clock: Clock;
  events: TaskEvents;
  states: TaskStateMachine;
}

const toPending = (task: TaskRow): PendingTask => ({
  task_id: task.id,
  capability: task.capability,
  input: JSON.parse(task.input) as Record<string, unknown>,
  caller_did: task.caller_did,
  created_at: Number(task.created_at),
  deadline_at: Number(task.deadline_at),
});

/** The worker side of queue mode: list (with long poll), accept, result, fail. */
export class AgentTaskService {
  private readonly closing = new AbortController();

  constructor(private readonly deps: AgentTaskDeps) {}

  /** Pending tasks, oldest first. With `waitSeconds`, returns as soon as one arrives (or when time is up). */
  async listPending(
    caller: AuthenticatedAgent,
    limit: number,
    waitSeconds: number,
    clientGone: AbortSignal,
  ): Promise<PendingTask[]> {
    const { db, clock, events } = this.deps;
    if (waitSeconds <= 0) return (await listPendingTasks(db, caller.did, clock.now(), limit)).map(toPending);
    const wakeup = new Wakeup((wake) => events.onWorkAvailable(caller.did, wake));
    try {
      const giveUpAt = Date.now() + waitSeconds * 1000;
      const signal = AbortSignal.any([clientGone, this.closing.signal]);
      for (;;) {
        const tasks = await listPendingTasks(db, caller.did, clock.now(), limit);
        const remaining = giveUpAt - Date.now();
        if (tasks.length > 0 || remaining <= 0) return tasks.map(toPending);
        if ((await wakeup.wait(remaining, signal)) === 'aborted') return [];
      }
    } finally {
      wakeup.close();
    }
  }

  async accept(caller: AuthenticatedAgent, taskId: string): Promise<TaskAck> {
    await this.requireOwnTask(caller, taskId);
    if (!(await this.deps.states.accept(taskId, caller.did))) throw await this.notOpen(taskId, 'accepted');
    return { task_id: taskId, status: 'processing' };
  }

  async result(
    caller: AuthenticatedAgent,
    taskId: string,
    output: Record<string, unknown>,
  ): Promise<TaskAck> {
    await this.requireOwnTask(caller, taskId);
    if (!(await this.deps.states.complete(taskId, output, caller.did)))
      throw await this.notOpen(taskId, 'completed');
    return { task_id: taskId, status: 'completed' };
  }

  async fail(caller: AuthenticatedAgent, taskId: string, error: string): Promise<TaskAck> {
    await this.requireOwnTask(caller, taskId);
    if (!(await this.deps.states.fail(taskId, error, 'AGENT_ERROR', caller.did)))
      throw await this.notOpen(taskId, 'failed');
    return { task_id: taskId, status: 'failed' };
  }

  /** Ends long polls at once (they answer with what they have). */
  shutdown(): void {
    this.closing.abort();
  }

  private async requireOwnTask(caller: AuthenticatedAgent, taskId: string): Promise<TaskRow> {
    const task = await findTask(this.deps.db, taskId);
    if (task === undefined) throw new NotFoundError('TASK_NOT_FOUND', `No task ${taskId}`, 'Task not found');
    if (task.target_did !== caller.did) {
      throw new ForbiddenError('NOT_YOUR_TASK', 'This task was sent to another agent');
    }
    return task;
  }

  private async notOpen(taskId: string, verb: string): Promise<ConflictError> {
    const task = await findTask(this.deps.db, taskId);
    const status = task?.status ?? 'gone';
    const expired =
      task !== undefined && task.status === 'pending' && Number(task.deadline_at) <= this.deps.clock.now();
    return new ConflictError(
      expired ? 'TASK_EXPIRED' : 'TASK_NOT_OPEN',
      expired
        ? `Task ${taskId} passed its deadline and cannot be ${verb}`
        : `Task ${taskId} is ${status} and cannot be ${verb}`,
    );
  }
}
