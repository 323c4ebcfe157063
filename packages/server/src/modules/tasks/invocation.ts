import type { InvocationEndStatus, Telemetry } from '../../telemetry/telemetry.js';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import type { TaskDelivery } from '../../db/schema/index.js';
import type { AgentRow } from '../agents/agents-store.js';
import {
  findTask,
  insertTask,
  listCallerTasks,
  type CallerTasksQuery,
  type NewTaskRow,
  type TaskRow,
} from './tasks-store.js';
import { InvocationBounds } from './invocation-bounds.js';
import type { TaskBoundsConfig } from '../../kernel/config.js';
import { isUniqueViolation } from '../../db/errors.js';
import { findIdempotencyKey, rememberIdempotencyKey, type IdempotencyRow } from './idempotency-store.js';
import { fingerprint, requireIdempotencyKey } from './idempotency.js';
import { KeyedQueue } from './keyed-queue.js';
import { taskView } from './task-view.js';
import { invocationResult, workerOffline } from './invocation-result.js';
import {
  ApiError,
  ForbiddenError,
  PayloadTooLargeError,
  shuttingDown,
  taskNotFound,
} from '../../kernel/errors.js';
import { linkedSignal, longLivedController } from './linked-signal.js';
import type { Deliverer } from './deliverers.js';
import type { TaskEvents } from './events.js';
import type { CapabilitySchemas } from '../capabilities/capability-schemas.js';
import { FINAL_STATUSES, settle, type TaskStateMachine } from './task-state.js';
import { Wakeup } from './wait.js';
import type { AuthenticatedAgent } from '../agents/authentication.js';
import type { RemoteReferrals } from '../agents/agents.js';
import { requireCapability, requireInvocableTarget } from './invocation-target.js';
import { TASK_LIMITS } from './task-limits.js';
import { v7 as uuidv7 } from 'uuid';
import type { InvokeRequest, InvokeResult, TaskView } from './schemas.js';

export interface InvocationDeps {
  db: Db;
  telemetry: Telemetry;
  clock: Clock;
  events: TaskEvents;
  states: TaskStateMachine;
  deliverers: Record<TaskDelivery, Deliverer>;
  schemas: CapabilitySchemas;
  didWebDomain: string;
  bounds: TaskBoundsConfig;
  presence: TargetPresence;
  /** Agents listed here that live at another registry (modules/federation/): invoked there, not here. */
  remote?: RemoteReferrals;
}

/** What an invocation asks of availability (modules/availability/) about its target's worker. */
export interface TargetPresence {
  /**
   * When the agent's worker was last seen, if the agent is offline now, and when it said it stopped if
   * it did so since; undefined if online or never seen.
   */
  offlineSince(did: string): Promise<{ lastSeenAt: number; stoppedAt?: number } | undefined>;
  /** Whether a worker of the agent was ever seen. */
  everSeen(did: string): Promise<boolean>;
}

/** Where an invocation came from: the client's address (behind TRUST_PROXY, the forwarded one). */
export interface InvocationClient {
  address: string;
}

export class InvocationService {
  private readonly closing = longLivedController();
  /** What a submitted task's watch waits with in place of a caller's connection: it never aborts. */
  private readonly unattended = longLivedController().signal;
  private readonly bounds: InvocationBounds;
  /**
   * One caller's task-creating transactions on this node run one at a time: they would wait for each
   * other on the caller's rate row anyway, and waiting here holds no database connection, so a burst
   * from one caller cannot take the pool from everyone else.
   */
  private readonly perCaller = new KeyedQueue();

  constructor(private readonly deps: InvocationDeps) {
    this.bounds = new InvocationBounds(deps.db, deps.bounds);
  }

  /**
   * Creates the task, hands it to the agent, and blocks until it ends or its deadline passes. With an
   * idempotency key, a retry of the same request by the same caller attaches to the task the key
   * already names (blocking for its outcome, or answering at once when it has ended).
   */
  async invoke(
    caller: AuthenticatedAgent,
    request: InvokeRequest,
    client: InvocationClient,
    clientGone: AbortSignal,
    idempotencyKey?: string,
  ): Promise<InvokeResult> {
    const admitted = await this.admit(caller, request, client, idempotencyKey);
    if ('existing' in admitted) return this.follow(admitted.existing, undefined, clientGone);
    const { written, target } = admitted;
    // Without a key nobody can attach to the task again: if the caller hangs up, it leaves the queue.
    return this.follow(
      written.id,
      written,
      clientGone,
      () => this.deps.deliverers[written.delivery_mode].dispatch(written, target),
      idempotencyKey === undefined,
    );
  }

  /**
   * Creates the task and hands it to the agent like `invoke`, under the same rules and bounds, but
   * answers at once with the task as it is now (pending) instead of waiting: the caller reads it later
   * (getTask, listTasks). The task is not tied to the caller's connection; this node still watches it to
   * its end or deadline, as a blocked invocation would, so its timeout and its end are recorded on time.
   */
  async submit(
    caller: AuthenticatedAgent,
    request: InvokeRequest,
    client: InvocationClient,
  ): Promise<TaskView> {
    const admitted = await this.admit(caller, request, client);
    if ('existing' in admitted) throw new Error('a submission without a key names no existing task');
    const { written, target } = admitted;
    await this.deps.deliverers[written.delivery_mode].dispatch(written, target);
    // Nobody waits on the answer: the watch's outcome (an error for a failure) is already on the task.
    void this.follow(written.id, undefined, this.unattended).catch(() => undefined);
    return taskView(written);
  }

  /**
   * The admission both kinds of call share: bounds, the target and its capability, the input schema,
   * then the task (and its key) stored. A key already naming a task answers that task's id; an agent
   * known to be offline for longer than the call may wait gets a task recorded as timed out, and the
   * 504 that says so (docs/decisions/availability.md, "An invocation of an agent known to be offline").
   */
  private async admit(
    caller: AuthenticatedAgent,
    request: InvokeRequest,
    client: InvocationClient,
    idempotencyKey?: string,
  ): Promise<{ existing: string } | { written: TaskRow; target: AgentRow }> {
    this.assertOpen();
    const inputJson = JSON.stringify(request.input);
    const inputBytes = Buffer.byteLength(inputJson);
    if (inputBytes > TASK_LIMITS.invocationPayloadMaxBytes) {
      throw new PayloadTooLargeError(
        `input is ${inputBytes} bytes of JSON; the limit is ${TASK_LIMITS.invocationPayloadMaxBytes} bytes (1 MiB)`,
      );
    }
    const key = idempotencyKey === undefined ? undefined : requireIdempotencyKey(idempotencyKey);
    const requestHash = key === undefined ? '' : fingerprint(request);
    if (key !== undefined) {
      const remembered = await this.remembered(caller.did, key, requestHash);
      if (remembered !== undefined) return { existing: remembered.task_id };
    }
    const { db, clock, didWebDomain, remote } = this.deps;
    const target = await requireInvocableTarget(db, didWebDomain, remote, request.target_did);
    const capability = requireCapability(target, request.capability);
    await this.deps.schemas.assertInputMatches(capability, request.input, inputJson);

    const delivery = target.delivery_mode as TaskDelivery;
    const timeoutMs = request.timeout_ms ?? TASK_LIMITS.invokeTimeoutDefaultMs;
    const offline = delivery === 'queue' ? await this.deps.presence.offlineSince(target.did) : undefined;
    const now = clock.now();
    // A worker that said it stopped is not coming back within this call; one merely unseen might.
    const offlineSince =
      offline !== undefined && (offline.stoppedAt !== undefined || now - offline.lastSeenAt > timeoutMs)
        ? offline
        : undefined;
    await this.bounds.assertRegistryHasRoom(inputBytes, now);
    const task: NewTaskRow = {
      id: uuidv7(),
      caller_did: caller.did,
      target_did: target.did,
      capability: capability.type,
      input: inputJson,
      status: 'pending',
      delivery_mode: delivery,
      output: null,
      error: null,
      error_code: null,
      created_at: now,
      deadline_at: now + timeoutMs,
      accepted_at: null,
      completed_at: null,
      input_bytes: inputBytes,
    };
    try {
      // The quota checks, the task and its key commit together: a refused invocation counts nothing.
      await this.perCaller.run(caller.did, () =>
        db.transaction().execute(async (trx) => {
          await this.bounds.assertWithinBounds(trx, caller.did, client.address, target.did, inputBytes, now);
          await insertTask(trx, task);
          if (key === undefined) return;
          await rememberIdempotencyKey(trx, {
            caller_did: caller.did,
            idempotency_key: key,
            request_hash: requestHash,
            task_id: task.id,
            created_at: now,
            expires_at: now + TASK_LIMITS.idempotencyKeyTtlMs,
          });
        }),
      );
    } catch (error) {
      if (key === undefined) throw error;
      // A concurrent retry with the same key won the race: follow its task instead.
      const winner = isUniqueViolation(error)
        ? await this.remembered(caller.did, key, requestHash)
        : undefined;
      if (winner === undefined) throw error;
      return { existing: winner.task_id };
    }
    this.bounds.admitted(inputBytes);
    const written: TaskRow = { ...task, input_bytes: inputBytes, lease_until: null, payload_purged_at: null };
    if (offlineSince !== undefined) {
      // Recorded as the timeout it would become (it counts in the service record), never delivered.
      await this.deps.states.timeOut(task.id);
      this.reportEnd({ ...written, status: 'timeout' });
      throw workerOffline(task.id, offlineSince, now, timeoutMs, capability.type);
    }
    return { written, target };
  }

  /**
   * Blocks until the task ends or its deadline passes. The subscription opens before `start` (the
   * dispatch) and before the first read, so no change in between is missed.
   */
  private async follow(
    taskId: string,
    written: TaskRow | undefined,
    clientGone: AbortSignal,
    start?: () => Promise<void>,
    abandonOnHangUp = false,
  ): Promise<InvokeResult> {
    const { db, clock, states } = this.deps;
    const wakeup = new Wakeup((wake) => this.deps.events.onTaskChanged(taskId, wake));
    const { signal, dispose } = linkedSignal(clientGone, this.closing.signal);
    this.deps.telemetry.invocationsWaiting(1);
    try {
      await start?.();
      // The row just written is the first state; any change from here on wakes the loop to re-read it.
      let current: TaskRow | undefined = written;
      for (let first = true; ; first = false) {
        if (!first || current === undefined) current = await findTask(db, taskId);
        if (current === undefined) throw new Error(`task ${taskId} vanished`);
        current = await states.settled(current);
        if (FINAL_STATUSES.includes(current.status)) {
          this.reportEnd(current);
          return invocationResult(current, await this.workerNote(current));
        }
        const reason = await wakeup.wait(Number(current.deadline_at) - clock.now(), signal);
        if (reason === 'aborted') {
          if (abandonOnHangUp && !this.closing.signal.aborted) await states.abandon(taskId);
          throw shuttingDown('The registry is shutting down; read the task later at GET /api/tasks/{id}', {
            task_id: taskId,
          });
        }
        if (reason !== 'timeout') continue;
        // The wait ran to the deadline: whether the agent or its webhook had not answered, a timeout (504).
        await states.timeOut(taskId);
      }
    } finally {
      this.deps.telemetry.invocationsWaiting(-1);
      dispose();
      wakeup.close();
    }
  }

  /** The task a live key names, or undefined; the same key with another request is refused. */
  private async remembered(
    callerDid: string,
    key: string,
    requestHash: string,
  ): Promise<IdempotencyRow | undefined> {
    const row = await findIdempotencyKey(this.deps.db, callerDid, key, this.deps.clock.now());
    if (row !== undefined && row.request_hash !== requestHash) {
      throw new ApiError(
        422,
        'IDEMPOTENCY_KEY_REUSED',
        'Idempotency key reused',
        `Idempotency-Key "${key}" was used with a different request (target_did, capability or input) for task ${row.task_id}; use a new key for a new request`,
        {},
        { task_id: row.task_id },
      );
    }
    return row;
  }

  async getTask(caller: AuthenticatedAgent, taskId: string): Promise<TaskView> {
    const stored = await this.requireTask(taskId);
    if (stored.caller_did !== caller.did) {
      throw new ForbiddenError('NOT_TASK_CREATOR', 'Only the agent that created a task may read it');
    }
    // A task whose invoker vanished (crash, restart) expires when read.
    return taskView(await this.deps.states.settled(stored));
  }

  /**
   * The input the caller sent with a task of theirs; undefined once the retention sweep dropped it.
   * Refused as `getTask` refuses.
   */
  async getTaskInput(
    caller: AuthenticatedAgent,
    taskId: string,
  ): Promise<Record<string, unknown> | undefined> {
    const stored = await this.requireTask(taskId);
    if (stored.caller_did !== caller.did) {
      throw new ForbiddenError('NOT_TASK_CREATOR', 'Only the agent that created a task may read it');
    }
    if (stored.payload_purged_at !== null) return undefined;
    return JSON.parse(stored.input) as Record<string, unknown>;
  }

  /**
   * The caller's own tasks with one agent, the most recently changed first: a page of at most `limit`,
   * each task as `settle` sees it now, and how many match without the page. With `withInputs`, the input
   * each task was sent with, by task id (none once the retention sweep dropped it).
   */
  async listTasks(
    caller: AuthenticatedAgent,
    query: Omit<CallerTasksQuery, 'callerDid' | 'now'>,
    options: { withInputs?: boolean } = {},
  ): Promise<{ tasks: TaskView[]; total: number; inputs: Map<string, Record<string, unknown>> }> {
    const inputs = new Map<string, Record<string, unknown>>();
    if (query.statuses !== undefined && query.statuses.length === 0) return { tasks: [], total: 0, inputs };
    const now = this.deps.clock.now();
    const { rows, total } = await listCallerTasks(this.deps.db, { ...query, callerDid: caller.did, now });
    if (options.withInputs === true) {
      for (const row of rows) {
        if (row.payload_purged_at === null)
          inputs.set(row.id, JSON.parse(row.input) as Record<string, unknown>);
      }
    }
    return { tasks: rows.map((row) => taskView(settle(row, now))), total, inputs };
  }

  /** Wakes every blocked invocation with a 503 and refuses new ones; tasks stay readable. */
  async shutdown(): Promise<void> {
    this.closing.abort();
    await Promise.all(Object.values(this.deps.deliverers).map((deliverer) => deliverer.close()));
  }

  private reportEnd(task: TaskRow): void {
    const outcome: InvocationEndStatus =
      task.status === 'completed'
        ? 'completed'
        : task.status === 'timeout'
          ? 'timeout'
          : task.error_code === 'WEBHOOK_FAILED'
            ? 'webhook_failed'
            : 'failed';
    this.deps.telemetry.invocationEnded({
      taskId: task.id,
      callerDid: task.caller_did,
      targetDid: task.target_did,
      capability: task.capability,
      delivery: task.delivery_mode,
      outcome,
      durationMs: this.deps.clock.now() - Number(task.created_at),
    });
  }

  /**
   * For a queue task that timed out: what the registry knows of the agent's worker, so the 504 says
   * whether one was there (docs/availability.md).
   */
  private async workerNote(task: TaskRow): Promise<string> {
    if (task.status !== 'timeout' || task.delivery_mode !== 'queue') return '';
    const offline = await this.deps.presence.offlineSince(task.target_did);
    if (offline !== undefined) {
      return `; no worker of this agent has polled for tasks since ${new Date(offline.lastSeenAt).toISOString()} (it is offline)`;
    }
    if (!(await this.deps.presence.everSeen(task.target_did))) {
      return '; no worker of this agent has ever polled for tasks';
    }
    return '';
  }

  private async requireTask(taskId: string): Promise<TaskRow> {
    const task = await findTask(this.deps.db, taskId);
    if (task === undefined) throw taskNotFound(taskId);
    return task;
  }

  private assertOpen(): void {
    if (this.closing.signal.aborted)
      throw shuttingDown('The registry is shutting down; retry on another node');
  }
}
