import { sql } from 'kysely';
import { compiledOnce } from '../../db/compiled.js';
import type { Db } from '../../db/connect.js';

/**
 * Adds one invocation of `bytes` input to the caller's count for the window starting at `windowStart`
 * and returns the new totals. One upsert: on PostgreSQL it also locks the caller's row until the
 * transaction ends, so one caller's invocations on every node are counted and checked one at a time.
 * Only inside a transaction: a compiled statement runs as a read on SQLite outside one.
 */
export async function countInvocation(
  db: Db,
  callerDid: string,
  windowStart: number,
  bytes: number,
): Promise<{ invocations: number; payloadBytes: number }> {
  const [row] = await countOne(db, callerDid, windowStart, bytes);
  if (row === undefined) throw new Error('the invocation count upsert returned no row');
  return { invocations: Number(row.invocations), payloadBytes: Number(row.payload_bytes) };
}

const countOne = compiledOnce(
  (db, callerDid: string, windowStart: number, bytes: number) =>
    db
      .insertInto('invocation_quota')
      .values({
        caller_did: callerDid,
        window_start: windowStart,
        invocations: sql.lit(1),
        payload_bytes: bytes,
      })
      .onConflict((conflict) =>
        conflict.columns(['caller_did', 'window_start']).doUpdateSet((eb) => ({
          invocations: eb('invocation_quota.invocations', '+', sql.lit(1)),
          payload_bytes: eb('invocation_quota.payload_bytes', '+', eb.ref('excluded.payload_bytes')),
        })),
      )
      .returning(['invocations', 'payload_bytes']),
  [
    '\u0000caller_did' as string,
    '\u0000window_start' as unknown as number,
    '\u0000bytes' as unknown as number,
  ] as const,
);

/**
 * Adds `bytes` of input to each client bucket's count for the window starting at `windowStart` (the
 * client's address and its networks) and returns the new totals by bucket. One multi-row upsert; on
 * PostgreSQL it locks the buckets' rows until the transaction ends, in the order given, which is the
 * same for every invocation (address first, then wider networks), so two never wait for each other.
 * Only inside a transaction.
 */
export async function countClientInput(
  db: Db,
  buckets: readonly string[],
  windowStart: number,
  bytes: number,
): Promise<Map<string, number>> {
  const parameters = buckets.flatMap((bucket) => [bucket, windowStart, bytes]);
  const rows = await clientCountStatement(buckets.length)(db, ...parameters);
  return new Map(rows.map((row) => [row.bucket, Number(row.payload_bytes)]));
}

const clientCountStatements = new Map<number, ReturnType<typeof buildClientCount>>();

const clientCountStatement = (count: number): ReturnType<typeof buildClientCount> => {
  let statement = clientCountStatements.get(count);
  if (statement === undefined) {
    statement = buildClientCount(count);
    clientCountStatements.set(count, statement);
  }
  return statement;
};

function buildClientCount(count: number) {
  const markers = Array.from({ length: count }, (_, index) => [
    `\u0000bucket${index}`,
    `\u0000window${index}` as unknown as number,
    `\u0000bytes${index}` as unknown as number,
  ]).flat() as (string | number)[];
  return compiledOnce(
    (db, ...values: (string | number)[]) =>
      db
        .insertInto('invocation_client_quota')
        .values(
          Array.from({ length: count }, (_, index) => ({
            bucket: values[3 * index] as string,
            window_start: values[3 * index + 1] as number,
            payload_bytes: values[3 * index + 2] as number,
          })),
        )
        .onConflict((conflict) =>
          conflict.columns(['bucket', 'window_start']).doUpdateSet((eb) => ({
            payload_bytes: eb('invocation_client_quota.payload_bytes', '+', eb.ref('excluded.payload_bytes')),
          })),
        )
        .returning(['bucket', 'payload_bytes']),
    markers,
  );
}

/** Forgets at most `limit` client windows that started before `before`; returns how many. */
export function forgetClientInputWindows(db: Db, before: number, limit: number): Promise<number> {
  return forgetWindows(db, 'invocation_client_quota', 'bucket', before, limit);
}

/** Forgets at most `limit` windows that started before `before`; returns how many. */
export function forgetInvocationWindows(db: Db, before: number, limit: number): Promise<number> {
  return forgetWindows(db, 'invocation_quota', 'caller_did', before, limit);
}

/** The oldest windows of a quota table, by their key and start, a batch at a time. */
async function forgetWindows(
  db: Db,
  table: 'invocation_quota' | 'invocation_client_quota',
  key: 'caller_did' | 'bucket',
  before: number,
  limit: number,
): Promise<number> {
  const due = await sql<{ key: string; window_start: number | string }>`
    select ${sql.ref(key)} as ${sql.id('key')}, window_start from ${sql.table(table)}
    where window_start < ${before} order by window_start limit ${limit}`.execute(db);
  if (due.rows.length === 0) return 0;
  const keys = sql.join(due.rows.map((row) => sql`(${row.key}, ${row.window_start})`));
  const result = await sql`
    delete from ${sql.table(table)} where (${sql.ref(key)}, window_start) in (${keys})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
