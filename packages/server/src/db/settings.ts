import type { Db } from './connect.js';

export async function readSetting(db: Db, key: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('registry_settings')
    .select('value')
    .where('key', '=', key)
    .executeTakeFirst();
  return row?.value;
}

/** Stores the value unless another node stored one first; returns whichever value won. */
export async function writeSettingOnce(db: Db, key: string, value: string, now: number): Promise<string> {
  await db
    .insertInto('registry_settings')
    .values({ key, value, created_at: now })
    .onConflict((conflict) => conflict.column('key').doNothing())
    .execute();
  const stored = await readSetting(db, key);
  if (stored === undefined) throw new Error(`setting ${key} vanished after insert`);
  return stored;
}
