import { INVOCATION_LIMITS } from '@agent-registry/protocol';
import type { RegistryClient } from './client.js';
import { RegistryError } from './errors.js';
import { OutputValidator } from './output-validation.js';
import type { JsonObject, PendingTask } from './types.js';

export interface TaskContext {
  /** Aborts when the task's deadline passes (and when the worker is closed with `{ abort: true }`). */
  signal: AbortSignal;
  /** The task as polled: task_id, capability, caller_did, created_at, deadline_at. */
  task: PendingTask;
}

export type CapabilityHandler = (input: JsonObject, ctx: TaskContext) => Promise<JsonObject> | JsonObject;

export interface ServeOptions {
  /** A client of a queue-mode agent, with its key (so tokens renew) or a token. */
  client: RegistryClient;
  /** One handler per capability type. */
  capabilities: Record<string, CapabilityHandler>;
  /** Handlers running at once (default 1). */
  concurrency?: number;
  /** Long-poll wait in seconds (default 30, at most 60). */
  waitSeconds?: number;
  /** Check outputs against the capability's published output_schema (default true). */
  validateOutput?: boolean;
  /** First and longest pause between reconnection attempts (default 500 ms and 30 s). */
  backoff?: { initialMs?: number; maxMs?: number };
}

export interface WorkerEvents {
  completed: { task: PendingTask; output: JsonObject };
  failed: { task: PendingTask; error: string };
  error: unknown;
  connected: undefined;
  disconnected: unknown;
}

type Listener<T> = (payload: T) => void;

/** A running worker: `close()` stops polling and waits for in-flight tasks. */
export interface Worker {
  on<E extends keyof WorkerEvents>(event: E, listener: Listener<WorkerEvents[E]>): Worker;
  off<E extends keyof WorkerEvents>(event: E, listener: Listener<WorkerEvents[E]>): Worker;
  /** Tasks being handled now. */
  readonly active: number;
  /**
   * Stops polling; in-flight tasks finish (or fail at their deadline). `abort: true` also aborts their
   * signals. Then tells the registry the worker stopped, so the agent reads offline at once (unless
   * `reportOffline: false`, e.g. when other workers of the same agent go on serving).
   */
  close(options?: { abort?: boolean; reportOffline?: boolean }): Promise<void>;
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });

const messageOf = (error: unknown): string =>
  (error instanceof Error ? error.message : typeof error === 'string' ? error : JSON.stringify(error)) ||
  'the handler failed without a message';

/** Codes meaning the task is no longer ours to work on (taken, finished or expired). */
const TASK_GONE = new Set([404, 409]);

/**
 * Serves a queue-mode agent: long-polls `GET /api/agent/tasks?wait=`, accepts each task, runs its
 * capability's handler (at most `concurrency` at once) and reports the result or the failure.
 */
export function serve(options: ServeOptions): Worker {
  return new QueueWorker(options);
}

class QueueWorker implements Worker {
  private readonly listeners = new Map<keyof WorkerEvents, Set<Listener<never>>>();
  private readonly stopping = new AbortController();
  private readonly aborting = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  /**
   * Tasks this worker holds, by id, with their accept call: a task stays pending (so polls return it
   * again) until the registry has our accept, and it must not reach a second slot meanwhile.
   */
  private readonly held = new Map<string, Promise<unknown>>();
  private readonly concurrency: number;
  private readonly waitSeconds: number;
  private readonly validator: OutputValidator | undefined;
  private slotFreed: (() => void) | undefined;
  private connected = false;
  private everConnected = false;
  private readonly loop: Promise<void>;

  constructor(private readonly options: ServeOptions) {
    this.concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
    this.waitSeconds = Math.min(
      INVOCATION_LIMITS.pendingTasksMaxWaitSeconds,
      Math.max(0, options.waitSeconds ?? 30),
    );
    this.validator = options.validateOutput === false ? undefined : new OutputValidator(options.client);
    this.loop = this.run();
  }

  get active(): number {
    return this.inFlight.size;
  }

  on<E extends keyof WorkerEvents>(event: E, listener: Listener<WorkerEvents[E]>): Worker {
    const set = this.listeners.get(event) ?? new Set();
    set.add(listener as Listener<never>);
    this.listeners.set(event, set);
    return this;
  }

  off<E extends keyof WorkerEvents>(event: E, listener: Listener<WorkerEvents[E]>): Worker {
    this.listeners.get(event)?.delete(listener as Listener<never>);
    return this;
  }

  async close(options: { abort?: boolean; reportOffline?: boolean } = {}): Promise<void> {
    const first = !this.stopping.signal.aborted;
    this.stopping.abort();
    if (options.abort) this.aborting.abort();
    this.slotFreed?.();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
    // After the last poll and task update: any of them would make the agent online again. A registry
    // out of reach is not told; the online window ends it there.
    if (first && this.everConnected && options.reportOffline !== false) {
      await this.options.client.reportWorkerStopped().catch((error: unknown) => this.emit('error', error));
    }
  }

  private emit<E extends keyof WorkerEvents>(event: E, payload: WorkerEvents[E]): void {
    for (const listener of this.listeners.get(event) ?? []) {
      try {
        (listener as Listener<WorkerEvents[E]>)(payload);
      } catch {
        // A throwing listener must not stop the worker.
      }
    }
  }

  private async run(): Promise<void> {
    const initial = this.options.backoff?.initialMs ?? 500;
    const max = this.options.backoff?.maxMs ?? 30_000;
    let delay = initial;
    const stop = this.stopping.signal;
    while (!stop.aborted) {
      if (this.inFlight.size >= this.concurrency) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        continue;
      }
      try {
        const tasks = await this.options.client.pollTasks({
          // Free slots beyond what one poll may ask for are filled by the next polls.
          limit: Math.min(this.concurrency - this.inFlight.size, INVOCATION_LIMITS.pendingTasksMaxLimit),
          // A first poll that answers at once tells us (and 'connected' listeners) the registry is back.
          wait: this.connected ? this.waitSeconds : 0,
          signal: stop,
        });
        if (!this.connected) {
          this.connected = true;
          this.everConnected = true;
          this.emit('connected', undefined);
        }
        delay = initial;
        const fresh = tasks.filter((task) => !this.held.has(task.task_id));
        for (const task of fresh) this.start(task);
        if (fresh.length === 0 && tasks.length > 0) {
          // Only tasks we are accepting came back: polling again before those accepts land would
          // return them at once, in a loop.
          await Promise.race(tasks.map((task) => this.held.get(task.task_id)));
        }
      } catch (error) {
        if (stop.aborted) break;
        if (this.connected) {
          this.connected = false;
          this.emit('disconnected', error);
        }
        this.emit('error', error);
        // Full jitter: many workers coming back after a registry restart do not all poll at once.
        await sleep(delay / 2 + Math.random() * (delay / 2), stop);
        delay = Math.min(max, delay * 2);
      }
    }
  }

  private start(task: PendingTask): void {
    let accepted!: () => void;
    this.held.set(task.task_id, new Promise<void>((resolve) => (accepted = resolve)));
    const work = this.handle(task, accepted).catch((error: unknown) => this.emit('error', error));
    this.inFlight.add(work);
    void work.finally(() => {
      accepted();
      this.held.delete(task.task_id);
      this.inFlight.delete(work);
      const freed = this.slotFreed;
      this.slotFreed = undefined;
      freed?.();
    });
  }

  private async handle(task: PendingTask, accepted: () => void): Promise<void> {
    const { client } = this.options;
    try {
      await client.acceptTask(task.task_id);
    } catch (error) {
      if (error instanceof RegistryError && TASK_GONE.has(error.status)) return;
      throw error;
    } finally {
      accepted();
    }
    const handler = this.options.capabilities[task.capability];
    if (handler === undefined) {
      await this.fail(task, `this worker has no handler for capability "${task.capability}"`);
      return;
    }
    const deadline = new AbortController();
    const onAbort = (): void => deadline.abort(this.aborting.signal.reason);
    this.aborting.signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () => deadline.abort(new Error(`deadline of task ${task.task_id} passed`)),
      Math.max(0, task.deadline_at - Date.now()),
    );
    let output: JsonObject;
    try {
      output = await Promise.race([
        Promise.resolve().then(() => handler(task.input, { signal: deadline.signal, task })),
        new Promise<never>((_resolve, reject) => {
          const rejectOnAbort = (): void => reject(deadline.signal.reason);
          if (deadline.signal.aborted) rejectOnAbort();
          deadline.signal.addEventListener('abort', rejectOnAbort, { once: true });
        }),
      ]);
    } catch (error) {
      await this.fail(task, messageOf(error));
      return;
    } finally {
      clearTimeout(timer);
      this.aborting.signal.removeEventListener('abort', onAbort);
    }
    if (output === null || typeof output !== 'object' || Array.isArray(output)) {
      await this.fail(
        task,
        `the handler of "${task.capability}" returned ${JSON.stringify(output) ?? 'undefined'}, not a JSON object`,
      );
      return;
    }
    const problem = await this.validator?.check(task.capability, output);
    if (problem !== undefined && problem !== null) {
      await this.fail(task, `output does not match the output_schema of "${task.capability}": ${problem}`);
      return;
    }
    try {
      await client.completeTask(task.task_id, output);
      this.emit('completed', { task, output });
    } catch (error) {
      if (error instanceof RegistryError && TASK_GONE.has(error.status)) {
        this.emit('failed', { task, error: `the registry no longer accepts a result: ${error.details}` });
        return;
      }
      throw error;
    }
  }

  private async fail(task: PendingTask, message: string): Promise<void> {
    const error = message.slice(0, INVOCATION_LIMITS.taskErrorMaxLength);
    try {
      await this.options.client.failTask(task.task_id, error);
    } catch (failure) {
      if (!(failure instanceof RegistryError && TASK_GONE.has(failure.status))) throw failure;
    }
    this.emit('failed', { task, error });
  }
}
