import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import type { TaskBoundsConfig } from '../../kernel/config.js';
import { forgetExpiredIdempotencyKeys } from './idempotency-store.js';
import { forgetClientInputWindows, forgetInvocationWindows } from './invocation-quota-store.js';
import { deleteOldTasks, purgeTaskPayloads } from './tasks-store.js';
import type { TaskStateMachine } from './task-state.js';
import { every, type BackgroundJobs } from '../../kernel/periodic.js';

/** Rows one batch touches, and batches one run does at most: bounded work per run on every node. */
export const TASK_MAINTENANCE = { batchSize: 500, maxBatchesPerRun: 10 } as const;

export interface TaskMaintenanceDeps {
  db: Db;
  clock: Clock;
  states: TaskStateMachine;
  bounds: Pick<TaskBoundsConfig, 'payloadRetentionMs' | 'rowRetentionMs' | 'invokeRateWindowMs'>;
  intervalMs: number;
  onError: (job: string, error: unknown) => void;
}

/**
 * One run: open tasks past their deadline become `timeout` (their invoker may have vanished with its
 * node); expired idempotency keys are forgotten; ended tasks lose input, output and error after the
 * payload retention and their row after the row retention; past rate windows are forgotten. Every step
 * is a conditional statement, so every node may run it at the same time; at most
 * maxBatchesPerRun x batchSize rows of each per run.
 */
export async function runTaskMaintenance(
  deps: Pick<TaskMaintenanceDeps, 'db' | 'clock' | 'states' | 'bounds'>,
  signal?: AbortSignal,
): Promise<{
  timedOut: number;
  keysForgotten: number;
  payloadsPurged: number;
  tasksDeleted: number;
  windowsForgotten: number;
}> {
  const { batchSize } = TASK_MAINTENANCE;
  const now = deps.clock.now();
  const { payloadRetentionMs, rowRetentionMs, invokeRateWindowMs } = deps.bounds;
  return {
    timedOut: await batches(signal, () => deps.states.sweepExpired(batchSize)),
    keysForgotten: await batches(signal, () => forgetExpiredIdempotencyKeys(deps.db, now, batchSize)),
    payloadsPurged: await batches(signal, () =>
      purgeTaskPayloads(deps.db, now - payloadRetentionMs, now, batchSize),
    ),
    tasksDeleted: await batches(signal, () => deleteOldTasks(deps.db, now - rowRetentionMs, batchSize)),
    // The current window and the one before stay (a node's clock may lag another's).
    windowsForgotten:
      (await batches(signal, () =>
        forgetInvocationWindows(deps.db, now - 2 * invokeRateWindowMs, batchSize),
      )) +
      (await batches(signal, () =>
        forgetClientInputWindows(deps.db, now - 2 * invokeRateWindowMs, batchSize),
      )),
  };
}

/** Runs `step` (which handles up to batchSize rows) until it handles fewer or maxBatchesPerRun ran. */
async function batches(signal: AbortSignal | undefined, step: () => Promise<number>): Promise<number> {
  const { batchSize, maxBatchesPerRun } = TASK_MAINTENANCE;
  let total = 0;
  for (let batch = 0; batch < maxBatchesPerRun && signal?.aborted !== true; batch += 1) {
    const done = await step();
    total += done;
    if (done < batchSize) break;
  }
  return total;
}

/** The periodic run, owned by the context (started in createContext, stopped by close()). */
export function startTaskMaintenance(deps: TaskMaintenanceDeps): BackgroundJobs {
  return every(
    deps.intervalMs,
    (signal) => runTaskMaintenance(deps, signal),
    (error) => deps.onError('task-maintenance', error),
  );
}
