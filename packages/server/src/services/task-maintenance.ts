import type { Clock } from '../clock.js';
import type { Db } from '../db/connect.js';
import { forgetExpiredIdempotencyKeys } from '../db/stores/idempotency.js';
import type { TaskStateMachine } from '../invocation/task-state.js';
import { every, type BackgroundJobs } from './background-jobs.js';

/** Rows one batch touches, and batches one run does at most: bounded work per run on every node. */
export const TASK_MAINTENANCE = { batchSize: 500, maxBatchesPerRun: 10 } as const;

export interface TaskMaintenanceDeps {
  db: Db;
  clock: Clock;
  states: TaskStateMachine;
  intervalMs: number;
  onError: (job: string, error: unknown) => void;
}

/**
 * One run: open tasks past their deadline become `timeout` (their invoker may have vanished with its
 * node), and expired idempotency keys are forgotten. Every step is a conditional statement, so every
 * node may run it at the same time; at most maxBatchesPerRun x batchSize rows of each per run.
 */
export async function runTaskMaintenance(
  deps: Pick<TaskMaintenanceDeps, 'db' | 'clock' | 'states'>,
  signal?: AbortSignal,
): Promise<{ timedOut: number; keysForgotten: number }> {
  const { batchSize, maxBatchesPerRun } = TASK_MAINTENANCE;
  let timedOut = 0;
  let keysForgotten = 0;
  for (let batch = 0; batch < maxBatchesPerRun && signal?.aborted !== true; batch += 1) {
    const moved = await deps.states.sweepExpired(batchSize);
    timedOut += moved;
    if (moved < batchSize) break;
  }
  for (let batch = 0; batch < maxBatchesPerRun && signal?.aborted !== true; batch += 1) {
    const forgotten = await forgetExpiredIdempotencyKeys(deps.db, deps.clock.now(), batchSize);
    keysForgotten += forgotten;
    if (forgotten < batchSize) break;
  }
  return { timedOut, keysForgotten };
}

/** The periodic run, owned by the context (started in createContext, stopped by close()). */
export function startTaskMaintenance(deps: TaskMaintenanceDeps): BackgroundJobs {
  return every(
    deps.intervalMs,
    (signal) => runTaskMaintenance(deps, signal),
    (error) => deps.onError('task-maintenance', error),
  );
}
