import { sql } from 'kysely';
import { compiledOnce, compiledWrite, placeholdersFor } from '../../db/compiled.js';
import type { Db } from '../../db/connect.js';
import type { ServiceDailyTable, TaskStatus } from '../../db/schema/index.js';
import { LATENCY_BUCKET_COUNT, type DailyRollup } from './service-record-model.js';

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

const latestOf = (table: string) =>
  sql<
    number | null
  >`case when ${sql.ref(`${table}.last_completed_at`)} is null or ${sql.ref(`${table}.last_completed_at`)} < excluded.last_completed_at then excluded.last_completed_at else ${sql.ref(`${table}.last_completed_at`)} end`;
const add = (table: string, column: string) =>
  sql<number>`${sql.ref(`${table}.${column}`)} + ${sql.ref(`excluded.${column}`)}`;

// The statements of a finished call, each built and compiled once per database handle: every
// invocation runs them (docs/decisions/performance.md, "Invocation statements").
const DAILY_COLUMNS = [
  'did',
  'capability',
  'day',
  'completed',
  'failed',
  'timeout',
  'last_completed_at',
  ...latencyColumns,
] as const;
const upsertDaily = compiledWrite(
  (db, ...values: unknown[]) =>
    db
      .insertInto('service_daily')
      .values(Object.fromEntries(DAILY_COLUMNS.map((column, index) => [column, values[index]])) as never)
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
      ),
  placeholdersFor(DAILY_COLUMNS),
);

const TOTALS_COLUMNS = ['did', 'capability', 'completed', 'failed', 'timeout', 'last_completed_at'] as const;
const upsertTotals = compiledWrite(
  (db, ...values: unknown[]) =>
    db
      .insertInto('service_totals')
      .values(Object.fromEntries(TOTALS_COLUMNS.map((column, index) => [column, values[index]])) as never)
      .onConflict((oc) =>
        oc.columns(['did', 'capability']).doUpdateSet({
          completed: add('service_totals', 'completed'),
          failed: add('service_totals', 'failed'),
          timeout: add('service_totals', 'timeout'),
          last_completed_at: latestOf('service_totals'),
        }),
      ),
  placeholdersFor(TOTALS_COLUMNS),
);

const insertCaller = compiledWrite(
  (db, did: string, day: number, capability: string, callerDid: string) =>
    db
      .insertInto('service_callers')
      .values({ did, day, capability, caller_did: callerDid })
      .onConflict((oc) => oc.doNothing()),
  ['\u0000did', '\u0000day' as unknown as number, '\u0000capability', '\u0000caller_did'] as const,
);

const upsertPartners = compiledWrite(
  (db, callerDid: string, targetDid: string, firstCompletedAt: number) =>
    db
      .insertInto('call_partners')
      .values({
        caller_did: callerDid,
        target_did: targetDid,
        completed: sql.lit(1),
        first_completed_at: firstCompletedAt,
      })
      .onConflict((oc) =>
        oc
          .columns(['caller_did', 'target_did'])
          .doUpdateSet({ completed: add('call_partners', 'completed') }),
      ),
  ['\u0000caller_did', '\u0000target_did', '\u0000first_completed_at' as unknown as number] as const,
);

/** Adds one finished call to the daily rollup, the distinct callers, the totals and the call pairs. */
export async function addFinishedCall(db: Db, call: FinishedCall): Promise<void> {
  const completed = call.status === 'completed' ? 1 : 0;
  const failed = call.status === 'failed' ? 1 : 0;
  const timeout = call.status === 'timeout' ? 1 : 0;
  const last = completed === 1 ? call.completedAt : null;
  const latency = latencyColumns.map((_, index) => (index === call.latencyBucket ? 1 : 0));
  await upsertDaily(db, call.did, call.capability, call.day, completed, failed, timeout, last, ...latency);
  await upsertTotals(db, call.did, call.capability, completed, failed, timeout, last);
  await insertCaller(db, call.did, call.day, call.capability, call.callerDid);
  if (completed === 1) await upsertPartners(db, call.callerDid, call.did, call.completedAt);
}

const rollupsSince = compiledOnce(
  (db, did: string, fromDay: number) =>
    db.selectFrom('service_daily').selectAll().where('did', '=', did).where('day', '>=', fromDay),
  ['\u0000did', '\u0000from_day' as unknown as number] as const,
);

/** The agent's daily rollups from `fromDay` on, every capability. */
export async function dailyRollups(
  db: Db,
  did: string,
  fromDay: number,
): Promise<(DailyRollup & { capability: string })[]> {
  const rows = await rollupsSince(db, did, fromDay);
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

const totalsOf = compiledOnce(
  (db, did: string) => db.selectFrom('service_totals').selectAll().where('did', '=', did),
  ['\u0000did'] as const,
);

export async function serviceTotals(db: Db, did: string) {
  const rows = await totalsOf(db, did);
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

const updateSummary = compiledWrite(
  (db, ...values: unknown[]) =>
    db
      .updateTable('agents')
      .set({
        service_success_rate: values[0] as number | null,
        service_latency_p50_ms: values[1] as number | null,
        service_calls_30d: values[2] as number,
        service_last_completed_at: values[3] as number | null,
      })
      .where('did', '=', values[4] as string),
  placeholdersFor([
    'service_success_rate',
    'service_latency_p50_ms',
    'service_calls_30d',
    'service_last_completed_at',
    'did',
  ]),
);

export async function writeServiceSummary(
  db: Db,
  did: string,
  summary: ServiceSummaryColumns,
): Promise<void> {
  await updateSummary(
    db,
    summary.service_success_rate,
    summary.service_latency_p50_ms,
    summary.service_calls_30d,
    summary.service_last_completed_at,
    did,
  );
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
const finishedTaskById = compiledOnce(
  (db, id: string) =>
    db
      .selectFrom('tasks')
      .select(['caller_did', 'target_did', 'capability', 'status', 'created_at', 'completed_at'])
      .where('id', '=', id),
  ['\u0000id'] as const,
);

export async function finishedTask(db: Db, id: string) {
  return (await finishedTaskById(db, id))[0];
}
