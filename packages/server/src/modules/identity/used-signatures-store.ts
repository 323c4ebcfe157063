import type { Db } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/errors.js';

/**
 * Records one use of a signed message; false when it was used before (on any node). Rows past their
 * expiry are swept first, so the table holds at most one window of logins.
 */
export async function claimSignatureUse(
  db: Db,
  digest: string,
  expiresAt: number,
  now: number,
): Promise<boolean> {
  await db.deleteFrom('used_signatures').where('expires_at', '<', now).execute();
  try {
    await db.insertInto('used_signatures').values({ digest, expires_at: expiresAt }).execute();
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}
