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

/** Forgets at most `limit` windows that started before `before`; returns how many. */
export async function forgetInvocationWindows(db: Db, before: number, limit: number): Promise<number> {
  const due = await db
    .selectFrom('invocation_quota')
    .select(['caller_did', 'window_start'])
    .where('window_start', '<', before)
    .orderBy('window_start')
    .limit(limit)
    .execute();
  if (due.length === 0) return 0;
  const result = await db
    .deleteFrom('invocation_quota')
    .where((eb) =>
      eb(
        eb.refTuple('caller_did', 'window_start'),
        'in',
        due.map((row) => eb.tuple(row.caller_did, row.window_start)),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
