import type { Telemetry } from '../telemetry/telemetry.js';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connect.js';
import type { TaskStatus } from '../db/schema/index.js';
import { findTask, listPendingTasks, type TaskRow } from '../db/stores/tasks.js';
import { ConflictError, ForbiddenError, PayloadTooLargeError, taskNotFound } from '../errors.js';
import type { TaskEvents } from '../invocation/events.js';
import { linkedSignal, longLivedController } from '../invocation/linked-signal.js';
import { OPEN_STATUSES, type TaskStateMachine } from '../invocation/task-state.js';
import { Wakeup } from '../invocation/wait.js';
import type { AuthenticatedAgent } from './authentication.js';
import { LIMITS } from './limits.js';

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
  telemetry: Telemetry;
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
  private readonly closing = longLivedController();

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
    const { signal, dispose } = linkedSignal(clientGone, this.closing.signal);
    this.deps.telemetry.longPollWaiters(1);
    try {
      // Real time, like the timer that waits: the clock only decides which tasks have expired.
      const giveUpAt = Date.now() + waitSeconds * 1000;
      for (;;) {
        const tasks = await listPendingTasks(db, caller.did, clock.now(), limit);
        const remaining = giveUpAt - Date.now();
        if (tasks.length > 0 || remaining <= 0) return tasks.map(toPending);
        if ((await wakeup.wait(remaining, signal)) === 'aborted') return [];
      }
    } finally {
      this.deps.telemetry.longPollWaiters(-1);
      dispose();
      wakeup.close();
    }
  }

  async accept(caller: AuthenticatedAgent, taskId: string): Promise<TaskAck> {
    if (!(await this.deps.states.accept(taskId, caller.did)))
      throw await this.refusal(caller, taskId, 'accepted');
    return { task_id: taskId, status: 'processing' };
  }

  async result(
    caller: AuthenticatedAgent,
    taskId: string,
    output: Record<string, unknown>,
  ): Promise<TaskAck> {
    const size = Buffer.byteLength(JSON.stringify(output));
    if (size > LIMITS.invocationPayloadMaxBytes) {
      throw new PayloadTooLargeError(
        `output is ${size} bytes of JSON; the limit is ${LIMITS.invocationPayloadMaxBytes} bytes (1 MiB)`,
      );
    }
    if (!(await this.deps.states.complete(taskId, output, caller.did))) {
      throw await this.refusal(caller, taskId, 'completed');
    }
    return { task_id: taskId, status: 'completed' };
  }

  async fail(caller: AuthenticatedAgent, taskId: string, error: string): Promise<TaskAck> {
    if (!(await this.deps.states.fail(taskId, error, 'AGENT_ERROR', caller.did))) {
      throw await this.refusal(caller, taskId, 'failed');
    }
    return { task_id: taskId, status: 'failed' };
  }

  /** Ends long polls at once (they answer with what they have). */
  shutdown(): void {
    this.closing.abort();
  }

  /**
   * Why a transition did not happen: 404 unknown task, 403 someone else's, 409 not open (or expired).
   * Transitions check ownership and state in their own conditional UPDATE, so the task is read only
   * when one is refused.
   */
  private async refusal(caller: AuthenticatedAgent, taskId: string, verb: string): Promise<Error> {
    const task = await findTask(this.deps.db, taskId);
    if (task === undefined) return taskNotFound(taskId);
    if (task.target_did !== caller.did) {
      return new ForbiddenError('NOT_YOUR_TASK', 'This task was sent to another agent');
    }
    return this.notOpen(taskId, verb);
  }

  /** Why a transition lost. An open task past its deadline is settled as a timeout first, so every reader agrees. */
  private async notOpen(taskId: string, verb: string): Promise<ConflictError> {
    let task = await findTask(this.deps.db, taskId);
    const expired =
      task !== undefined &&
      OPEN_STATUSES.includes(task.status) &&
      Number(task.deadline_at) <= this.deps.clock.now();
    if (expired) {
      await this.deps.states.timeOut(taskId);
      task = await findTask(this.deps.db, taskId);
    }
    return new ConflictError(
      expired ? 'TASK_EXPIRED' : 'TASK_NOT_OPEN',
      expired
        ? `Task ${taskId} passed its deadline and cannot be ${verb}`
        : `Task ${taskId} is ${task?.status ?? 'gone'} and cannot be ${verb}`,
    );
  }
}
