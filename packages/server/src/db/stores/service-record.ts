import { sql } from 'kysely';
import type { Db } from '../connect.js';
import type { ServiceDailyTable, TaskStatus } from '../schema/index.js';
import { LATENCY_BUCKET_COUNT, type DailyRollup } from '../../services/service-record-model.js';

type LatencyColumn = `lat_${number}` & keyof ServiceDailyTable;
const latencyColumns = Array.from({ length: LATENCY_BUCKET_COUNT }, (_, i) => `lat_${i}` as LatencyColumn);

export interface FinishedCall {
  did: string;
  capability: string;
  callerDid: string;
  status: Extract<TaskStatus, 'completed' | 'failed' | 'timeout'>;
  day: number;
  completedAt: number;
  /** Histogram bucket of the latency, for a completed call. */
  latencyBucket: number | null;
}

/** Adds one finished call to the daily rollup, the distinct callers, the totals and the call pairs. */
export async function addFinishedCall(db: Db, call: FinishedCall): Promise<void> {
  const completed = call.status === 'completed' ? 1 : 0;
  const failed = call.status === 'failed' ? 1 : 0;
  const timeout = call.status === 'timeout' ? 1 : 0;
  const last = completed === 1 ? call.completedAt : null;
  const latency = Object.fromEntries(
    latencyColumns.map((column, index) => [column, index === call.latencyBucket ? 1 : 0]),
  ) as Record<LatencyColumn, number>;
  const latestOf = (table: string) =>
    sql<
      number | null
    >`case when ${sql.ref(`${table}.last_completed_at`)} is null or ${sql.ref(`${table}.last_completed_at`)} < excluded.last_completed_at then excluded.last_completed_at else ${sql.ref(`${table}.last_completed_at`)} end`;
  const add = (table: string, column: string) =>
    sql<number>`${sql.ref(`${table}.${column}`)} + ${sql.ref(`excluded.${column}`)}`;

  await db
    .insertInto('service_daily')
    .values({
      did: call.did,
      capability: call.capability,
      day: call.day,
      completed,
      failed,
      timeout,
      last_completed_at: last,
      ...latency,
    })
    .onConflict((oc) =>
      oc.columns(['did', 'day', 'capability']).doUpdateSet({
        completed: add('service_daily', 'completed'),
        failed: add('service_daily', 'failed'),
        timeout: add('service_daily', 'timeout'),
        last_completed_at: latestOf('service_daily'),
        ...(Object.fromEntries(
          latencyColumns.map((column) => [column, add('service_daily', column)]),
        ) as Record<LatencyColumn, ReturnType<typeof add>>),
      }),
    )
    .execute();
  await db
    .insertInto('service_totals')
    .values({
      did: call.did,
      capability: call.capability,
      completed,
      failed,
      timeout,
      last_completed_at: last,
    })
    .onConflict((oc) =>
      oc.columns(['did', 'capability']).doUpdateSet({
        completed: add('service_totals', 'completed'),
        failed: add('service_totals', 'failed'),
        timeout: add('service_totals', 'timeout'),
        last_completed_at: latestOf('service_totals'),
      }),
    )
    .execute();
  await db
    .insertInto('service_callers')
    .values({ did: call.did, day: call.day, capability: call.capability, caller_did: call.callerDid })
    .onConflict((oc) => oc.doNothing())
    .execute();
  if (completed === 1) {
    await db
      .insertInto('call_partners')
      .values({
        caller_did: call.callerDid,
        target_did: call.did,
        completed: 1,
        first_completed_at: call.completedAt,
      })
      .onConflict((oc) =>
        oc
          .columns(['caller_did', 'target_did'])
          .doUpdateSet({ completed: add('call_partners', 'completed') }),
      )
      .execute();
  }
}

/** The agent's daily rollups from `fromDay` on, every capability. */
export async function dailyRollups(
  db: Db,
  did: string,
  fromDay: number,
): Promise<(DailyRollup & { capability: string })[]> {
  const rows = await db
    .selectFrom('service_daily')
    .selectAll()
    .where('did', '=', did)
    .where('day', '>=', fromDay)
    .execute();
  return rows.map((row) => ({
    capability: row.capability,
    day: Number(row.day),
    completed: Number(row.completed),
    failed: Number(row.failed),
    timeout: Number(row.timeout),
    lastCompletedAt: row.last_completed_at === null ? null : Number(row.last_completed_at),
    latency: latencyColumns.map((column) => Number(row[column])),
  }));
}

/** Distinct callers since `fromDay`, over all capabilities (key '') and per capability. */
export async function distinctCallers(db: Db, did: string, fromDay: number): Promise<Map<string, number>> {
  const perCapability = await db
    .selectFrom('service_callers')
    .select((eb) => ['capability', eb.fn.count<number>('caller_did').distinct().as('callers')])
    .where('did', '=', did)
    .where('day', '>=', fromDay)
    .groupBy('capability')
    .execute();
  const overall = await db
    .selectFrom('service_callers')
    .select((eb) => eb.fn.count<number>('caller_did').distinct().as('callers'))
    .where('did', '=', did)
    .where('day', '>=', fromDay)
    .executeTakeFirstOrThrow();
  const counts = new Map(perCapability.map((row) => [row.capability, Number(row.callers)]));
  counts.set('', Number(overall.callers));
  return counts;
}

export async function serviceTotals(db: Db, did: string) {
  const rows = await db.selectFrom('service_totals').selectAll().where('did', '=', did).execute();
  return rows.map((row) => ({
    capability: row.capability,
    completed: Number(row.completed),
    failed: Number(row.failed),
    timeout: Number(row.timeout),
    lastCompletedAt: row.last_completed_at === null ? null : Number(row.last_completed_at),
  }));
}

export interface ServiceSummaryColumns {
  service_success_rate: number | null;
  service_latency_p50_ms: number | null;
  service_calls_30d: number;
  service_last_completed_at: number | null;
}

export async function writeServiceSummary(
  db: Db,
  did: string,
  summary: ServiceSummaryColumns,
): Promise<void> {
  await db.updateTable('agents').set(summary).where('did', '=', did).execute();
}

/** Agents with a 30-day summary, in DID order after `afterDid`, for the periodic refresh. */
export async function agentsWithServiceSummary(db: Db, afterDid: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('agents')
    .select('did')
    .where('service_calls_30d', '>', 0)
    .where('did', '>', afterDid)
    .orderBy('did')
    .limit(limit)
    .execute();
  return rows.map((row) => row.did);
}

export async function pruneServiceRows(
  db: Db,
  dailyBeforeDay: number,
  callersBeforeDay: number,
): Promise<void> {
  await db.deleteFrom('service_daily').where('day', '<', dailyBeforeDay).execute();
  await db.deleteFrom('service_callers').where('day', '<', callersBeforeDay).execute();
}

/** The columns of a task the record needs (not its input or output, which may be large). */
export async function finishedTask(db: Db, id: string) {
  return db
    .selectFrom('tasks')
    .select(['caller_did', 'target_did', 'capability', 'status', 'created_at', 'completed_at'])
    .where('id', '=', id)
    .executeTakeFirst();
}
