import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';

/**
 * Counts one registration in each bucket's current window and answers the new counts, in bucket
 * order. One statement per bucket (an upsert that returns the count), so concurrent registrations on
 * any node are all counted.
 */
export async function countRegistration(
  db: Db,
  buckets: readonly string[],
  windowStart: number,
): Promise<number[]> {
  const counts: number[] = [];
  for (const bucket of buckets) {
    const row = await db
      .insertInto('registration_counts')
      .values({ bucket, window_start: windowStart, count: 1 })
      .onConflict((conflict) =>
        conflict
          .columns(['bucket', 'window_start'])
          .doUpdateSet({ count: sql<number>`registration_counts.count + 1` }),
      )
      .returning('count')
      .executeTakeFirstOrThrow();
    counts.push(Number(row.count));
  }
  return counts;
}

/** The counts of `buckets` in the window starting at `windowStart` (absent: none counted). */
export async function registrationCountsIn(
  db: Db,
  buckets: readonly string[],
  windowStart: number,
): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('registration_counts')
    .select(['bucket', 'count'])
    .where('window_start', '=', windowStart)
    .where('bucket', 'in', buckets)
    .execute();
  return new Map(rows.map((row) => [row.bucket, Number(row.count)]));
}

/** Forgets windows that started before `windowStart`. */
export async function forgetRegistrationWindowsBefore(db: Db, windowStart: number): Promise<void> {
  await db.deleteFrom('registration_counts').where('window_start', '<', windowStart).execute();
}
