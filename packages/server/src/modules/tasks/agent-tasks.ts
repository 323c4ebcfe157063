import type { Telemetry } from '../../telemetry/telemetry.js';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import { findTask } from './tasks-store.js';
import {
  leasePendingTasks,
  listPendingTasks,
  readTaskInputs,
  type PendingTaskHead,
} from './task-queue-store.js';
import {
  ConflictError,
  ForbiddenError,
  PayloadTooLargeError,
  TooManyRequestsError,
  taskNotFound,
} from '../../kernel/errors.js';
import type { TaskEvents } from './events.js';
import { linkedSignal, longLivedController } from './linked-signal.js';
import type { TaskStateMachine } from './task-state.js';
import { Wakeup } from './wait.js';
import type { AuthenticatedAgent } from '../agents/authentication.js';
import { TASK_LIMITS } from './task-limits.js';
import type { TaskAck } from './schemas.js';

export interface AgentTaskDeps {
  db: Db;
  telemetry: Telemetry;
  clock: Clock;
  events: TaskEvents;
  states: TaskStateMachine;
  /** GET /api/agent/tasks requests in progress at once per agent on this node. */
  maxPollsPerAgent: number;
  presence: WorkerPresence;
}

/** Where a worker's polls and task updates go as evidence that it is there (modules/availability/). */
export interface WorkerPresence {
  seen(did: string): Promise<void>;
  pollStarted(did: string): void;
  pollEnded(did: string): void;
  /** The agent's worker says it is stopping: offline at once. When recorded; null if never seen. */
  stopped(did: string): Promise<number | null>;
}

/**
 * The body of GET /api/agent/tasks, `{"tasks": [...]}` with each stored input written as it was stored
 * (valid JSON, written by the invocation), so a page is never parsed and re-serialised.
 */
function pageJson(heads: readonly PendingTaskHead[], inputs: ReadonlyMap<string, string>): string {
  const tasks: string[] = [];
  for (const head of heads) {
    const input = inputs.get(head.id);
    if (input === undefined) continue;
    tasks.push(
      `{"task_id":${JSON.stringify(head.id)},"capability":${JSON.stringify(head.capability)},"input":${input},` +
        `"caller_did":${JSON.stringify(head.caller_did)},"created_at":${Number(head.created_at)},` +
        `"deadline_at":${Number(head.deadline_at)}}`,
    );
  }
  return `{"tasks":[${tasks.join(',')}]}`;
}

/** The oldest tasks whose inputs fit in one page's byte budget; always at least the first. */
function withinPageBudget(heads: readonly PendingTaskHead[]): PendingTaskHead[] {
  const page: PendingTaskHead[] = [];
  let bytes = 0;
  for (const head of heads) {
    bytes += Number(head.input_bytes);
    if (page.length > 0 && bytes > TASK_LIMITS.pendingTasksPageMaxBytes) break;
    page.push(head);
  }
  return page;
}

/** The worker side of queue mode: list (with long poll), accept, result, fail. */
export class AgentTaskService {
  private readonly closing = longLivedController();

  constructor(private readonly deps: AgentTaskDeps) {}

  /** Polls in progress per agent on this node. */
  private readonly polls = new Map<string, number>();

  /**
   * Pending tasks, oldest first, as the JSON body of the answer. A page stops before its inputs pass
   * pendingTasksPageMaxBytes. With `waitSeconds`, returns as soon as one arrives (or when time is up).
   * The tasks a poll returns are leased to it: no long poll of the agent gets them for
   * pendingTaskLeaseMs, unless they are accepted or end first; a plain listing still shows them.
   */
  /**
   * The caller's worker is stopping (after its last poll ended): its agent reads offline at once, and
   * invocations are refused as offline instead of waiting out their timeout.
   */
  async workerStopped(caller: AuthenticatedAgent): Promise<{ did: string; stopped_at: number | null }> {
    return { did: caller.did, stopped_at: await this.deps.presence.stopped(caller.did) };
  }

  async listPending(
    caller: AuthenticatedAgent,
    limit: number,
    waitSeconds: number,
    clientGone: AbortSignal,
  ): Promise<string> {
    const running = this.polls.get(caller.did) ?? 0;
    if (running >= this.deps.maxPollsPerAgent) {
      throw new TooManyRequestsError(
        'TOO_MANY_POLLS',
        `At most ${this.deps.maxPollsPerAgent} requests for pending tasks per agent at once; one of yours must answer first`,
        1,
      );
    }
    this.polls.set(caller.did, running + 1);
    const { presence } = this.deps;
    presence.pollStarted(caller.did);
    try {
      await presence.seen(caller.did);
      return await this.poll(caller, limit, waitSeconds, clientGone);
    } finally {
      presence.pollEnded(caller.did);
      const left = (this.polls.get(caller.did) ?? 1) - 1;
      if (left === 0) this.polls.delete(caller.did);
      else this.polls.set(caller.did, left);
    }
  }

  private async poll(
    caller: AuthenticatedAgent,
    limit: number,
    waitSeconds: number,
    clientGone: AbortSignal,
  ): Promise<string> {
    const { db, clock, events } = this.deps;
    if (waitSeconds <= 0) {
      // A plain listing shows every pending task, leased or not, and leases the free ones it shows, so
      // a long poll right after it (a worker's next poll) does not hand them out again.
      const now = clock.now();
      const page = withinPageBudget(await listPendingTasks(db, caller.did, now, limit));
      const ids = page.map((head) => head.id);
      await leasePendingTasks(db, ids, now, now + TASK_LIMITS.pendingTaskLeaseMs);
      return pageJson(page, await readTaskInputs(db, ids));
    }
    const wakeup = new Wakeup((wake) => events.onWorkAvailable(caller.did, wake));
    const { signal, dispose } = linkedSignal(clientGone, this.closing.signal);
    this.deps.telemetry.longPollWaiters(1);
    let page: PendingTaskHead[] = [];
    try {
      // Real time, like the timer that waits: the clock only decides which tasks have expired.
      const giveUpAt = Date.now() + waitSeconds * 1000;
      for (;;) {
        const now = clock.now();
        const candidates = withinPageBudget(await listPendingTasks(db, caller.did, now, limit, now));
        const won = await leasePendingTasks(
          db,
          candidates.map((head) => head.id),
          now,
          now + TASK_LIMITS.pendingTaskLeaseMs,
        );
        page = candidates.filter((head) => won.has(head.id));
        const remaining = giveUpAt - Date.now();
        if (page.length > 0 || remaining <= 0) break;
        // Another poll leased them first: look again at once for the ones after them.
        if (candidates.length > 0) continue;
        // Re-read at least once a lease: a task another poll leased and never accepted comes back then.
        const slept = await wakeup.wait(Math.min(remaining, TASK_LIMITS.pendingTaskLeaseMs), signal);
        if (slept === 'aborted') break;
      }
    } finally {
      this.deps.telemetry.longPollWaiters(-1);
      dispose();
      // A wake-up this poll took but did not use goes to the agent's next waiting poll on this node.
      if (wakeup.close()) void events.workAvailable(caller.did, { localOnly: true });
    }
    return pageJson(
      page,
      await readTaskInputs(
        db,
        page.map((head) => head.id),
      ),
    );
  }

  async accept(caller: AuthenticatedAgent, taskId: string): Promise<TaskAck> {
    if (!(await this.deps.states.accept(taskId, caller.did)))
      throw await this.refusal(caller, taskId, 'accepted');
    await this.deps.presence.seen(caller.did);
    return { task_id: taskId, status: 'processing' };
  }

  async result(
    caller: AuthenticatedAgent,
    taskId: string,
    output: Record<string, unknown>,
  ): Promise<TaskAck> {
    const size = Buffer.byteLength(JSON.stringify(output));
    if (size > TASK_LIMITS.invocationPayloadMaxBytes) {
      throw new PayloadTooLargeError(
        `output is ${size} bytes of JSON; the limit is ${TASK_LIMITS.invocationPayloadMaxBytes} bytes (1 MiB)`,
      );
    }
    if (!(await this.deps.states.complete(taskId, output, caller.did))) {
      throw await this.refusal(caller, taskId, 'completed');
    }
    await this.deps.presence.seen(caller.did);
    return { task_id: taskId, status: 'completed' };
  }

  async fail(caller: AuthenticatedAgent, taskId: string, error: string): Promise<TaskAck> {
    if (!(await this.deps.states.fail(taskId, error, 'AGENT_ERROR', caller.did))) {
      throw await this.refusal(caller, taskId, 'failed');
    }
    await this.deps.presence.seen(caller.did);
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
    const stored = await findTask(this.deps.db, taskId);
    const task = stored === undefined ? undefined : await this.deps.states.settled(stored);
    // Settling moved it: its deadline had passed while it was still open.
    const expired = stored !== undefined && task?.status !== stored.status;
    return new ConflictError(
      expired ? 'TASK_EXPIRED' : 'TASK_NOT_OPEN',
      expired
        ? `Task ${taskId} passed its deadline and cannot be ${verb}`
        : `Task ${taskId} is ${task?.status ?? 'gone'} and cannot be ${verb}`,
    );
  }
}
