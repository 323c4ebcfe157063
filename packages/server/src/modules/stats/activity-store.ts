import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';

export interface DayCount {
  /** Days since the Unix epoch (UTC). */
  day: number;
  count: number;
}

const DAY_MS = 86_400_000;

/** Rows per UTC day since `since` (epoch ms) in reviews or tasks; integer division in both dialects. */
export async function countPerDay(db: Db, table: 'reviews' | 'tasks', since: number): Promise<DayCount[]> {
  const day = sql<number>`created_at / ${sql.lit(DAY_MS)}`;
  const rows = await db
    .selectFrom(table)
    .select((eb) => [day.as('day'), eb.fn.countAll<number>().as('count')])
    .where('created_at', '>=', since)
    .groupBy(day)
    .execute();
  return rows.map((row) => ({ day: Number(row.day), count: Number(row.count) }));
}
