import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import { areLinked } from '../identity/identity-links-store.js';
import {
  addFinishedCall,
  agentsWithServiceSummary,
  dailyRollups,
  distinctCallers,
  finishedTask,
  pruneServiceRows,
  serviceTotals,
  writeServiceSummary,
} from './service-record-store.js';
import { SERVICE_RECORD_RULES, dayOf, latencyBucket, rate, summariseWindow } from './service-record-model.js';
import type { AllTimeSummary, ServiceRecord } from './schemas.js';

const REFRESH_BATCH = 200;

/**
 * The record of what each agent did for its callers through the broker. Written by `recordFinished`
 * inside the transaction of the task's terminal transition (so every node sees it and a task counts
 * once); read from the daily rollups, never from the tasks.
 */
export class ServiceRecordService {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  /**
   * Counts a task that just reached completed, failed or timeout. Calls of an agent by itself or by an
   * identity linked to it (docs/decisions/reputation.md, "Identity links") are left out.
   */
  async recordFinished(trx: Db, taskId: string): Promise<void> {
    const task = await finishedTask(trx, taskId);
    if (task === undefined || task.completed_at === null) return;
    if (task.status !== 'completed' && task.status !== 'failed' && task.status !== 'timeout') return;
    if (task.caller_did === task.target_did || (await areLinked(trx, task.caller_did, task.target_did)))
      return;
    const completedAt = Number(task.completed_at);
    await addFinishedCall(trx, {
      did: task.target_did,
      capability: task.capability,
      callerDid: task.caller_did,
      status: task.status,
      day: dayOf(completedAt),
      completedAt,
      latencyBucket:
        task.status === 'completed'
          ? latencyBucket(Math.max(0, completedAt - Number(task.created_at)))
          : null,
    });
    await this.refreshSummary(trx, task.target_did, completedAt);
  }

  /** The record of an agent never called through the broker (no totals), the same as `get` answers for it. */
  none(): ServiceRecord {
    return {
      measured_by: 'registry',
      last_7_days: summariseWindow([], 0, 7, 0),
      last_30_days: summariseWindow([], 0, 30, 0),
      all_time: {
        invocations: 0,
        completed: 0,
        failed: 0,
        timeouts: 0,
        success_rate: null,
        last_completed_at: null,
      },
      capabilities: [],
    };
  }

  /** The full record for a profile: two windows and all-time, overall and per capability. */
  async get(db: Db, did: string): Promise<ServiceRecord> {
    const today = dayOf(this.deps.clock.now());
    const longest = Math.max(...SERVICE_RECORD_RULES.windowsDays);
    // Totals are never pruned: an agent without any is never counted, and needs no other read.
    const totals = await serviceTotals(db, did);
    const none = totals.length === 0;
    const rollups = none ? [] : await dailyRollups(db, did, today - longest + 1);
    const callers7 = none ? new Map<string, number>() : await distinctCallers(db, did, today - 6);
    const callers30 = none ? new Map<string, number>() : await distinctCallers(db, did, today - 29);
    const capabilities = [
      ...new Set([...totals.map((t) => t.capability), ...rollups.map((r) => r.capability)]),
    ].sort();
    const allTime = (rows: typeof totals): AllTimeSummary => {
      const completed = rows.reduce((sum, row) => sum + row.completed, 0);
      const failed = rows.reduce((sum, row) => sum + row.failed, 0);
      const timeouts = rows.reduce((sum, row) => sum + row.timeout, 0);
      const invocations = completed + failed + timeouts;
      const lasts = rows.map((row) => row.lastCompletedAt).filter((at): at is number => at !== null);
      return {
        invocations,
        completed,
        failed,
        timeouts,
        success_rate: rate(completed, invocations),
        last_completed_at: lasts.length === 0 ? null : Math.max(...lasts),
      };
    };
    return {
      measured_by: 'registry',
      last_7_days: summariseWindow(rollups, today, 7, callers7.get('') ?? 0),
      last_30_days: summariseWindow(rollups, today, 30, callers30.get('') ?? 0),
      all_time: allTime(totals),
      capabilities: capabilities.map((capability) => {
        const own = rollups.filter((rollup) => rollup.capability === capability);
        return {
          capability,
          last_7_days: summariseWindow(own, today, 7, callers7.get(capability) ?? 0),
          last_30_days: summariseWindow(own, today, 30, callers30.get(capability) ?? 0),
          all_time: allTime(totals.filter((row) => row.capability === capability)),
        };
      }),
    };
  }

  /** Rewrites the 30-day columns search reads (success rate, median latency, calls, last completed). */
  async refreshSummary(trx: Db, did: string, now: number): Promise<void> {
    const today = dayOf(now);
    const days = SERVICE_RECORD_RULES.searchWindowDays;
    const window = summariseWindow(await dailyRollups(trx, did, today - days + 1), today, days, 0);
    const totals = await serviceTotals(trx, did);
    const lasts = totals.map((row) => row.lastCompletedAt).filter((at): at is number => at !== null);
    await writeServiceSummary(trx, did, {
      service_success_rate: window.success_rate,
      service_latency_p50_ms: window.latency_p50_ms,
      service_calls_30d: window.invocations,
      service_last_completed_at: lasts.length === 0 ? null : Math.max(...lasts),
    });
  }

  /** Slides the 30-day window forward for every agent that has one, and prunes expired rollups. */
  async refreshAll(signal?: AbortSignal): Promise<number> {
    const today = dayOf(this.deps.clock.now());
    await pruneServiceRows(
      this.deps.db,
      today - SERVICE_RECORD_RULES.dailyRetentionDays + 1,
      today - SERVICE_RECORD_RULES.callersRetentionDays + 1,
    );
    let after = '';
    let refreshed = 0;
    while (signal?.aborted !== true) {
      const dids = await agentsWithServiceSummary(this.deps.db, after, REFRESH_BATCH);
      if (dids.length === 0) break;
      const now = this.deps.clock.now();
      await this.deps.db.transaction().execute(async (trx) => {
        for (const did of dids) await this.refreshSummary(trx, did, now);
      });
      refreshed += dids.length;
      after = dids[dids.length - 1] as string;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return refreshed;
  }
}
