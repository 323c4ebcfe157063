import type { Db } from '../../db/connect.js';

/** Adds to a registry-wide counter; nodes add their own increments, so nothing is lost or doubled. */
export async function addToCounter(db: Db, name: string, amount: number): Promise<void> {
  await db
    .insertInto('registry_counters')
    .values({ name, value: amount })
    .onConflict((conflict) =>
      conflict
        .column('name')
        .doUpdateSet((eb) => ({ value: eb('registry_counters.value', '+', eb.ref('excluded.value')) })),
    )
    .execute();
}

export async function readCounter(db: Db, name: string): Promise<number> {
  const row = await db
    .selectFrom('registry_counters')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirst();
  return row === undefined ? 0 : Number(row.value);
}
