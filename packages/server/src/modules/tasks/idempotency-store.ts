import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { InvocationIdempotencyTable } from '../../db/schema/index.js';

export type IdempotencyRow = Selectable<InvocationIdempotencyTable>;

/** The key as still remembered at `now` (expired rows are as good as gone). */
export async function findIdempotencyKey(
  db: Db,
  callerDid: string,
  key: string,
  now: number,
): Promise<IdempotencyRow | undefined> {
  return db
    .selectFrom('invocation_idempotency')
    .selectAll()
    .where('caller_did', '=', callerDid)
    .where('idempotency_key', '=', key)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/** Inserts the key; an expired row for the same key is replaced. A live one raises a unique violation. */
export async function rememberIdempotencyKey(
  db: Db,
  row: Insertable<InvocationIdempotencyTable>,
): Promise<void> {
  await db
    .deleteFrom('invocation_idempotency')
    .where('caller_did', '=', row.caller_did)
    .where('idempotency_key', '=', row.idempotency_key)
    .where('expires_at', '<=', row.created_at)
    .execute();
  await db.insertInto('invocation_idempotency').values(row).execute();
}

/** Forgets at most `limit` expired keys; returns how many. */
export async function forgetExpiredIdempotencyKeys(db: Db, now: number, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('invocation_idempotency')
    .where(
      'task_id',
      'in',
      db.selectFrom('invocation_idempotency').select('task_id').where('expires_at', '<=', now).limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
