import type { KeyType } from '@agent-registry/protocol';
import { compiledOnce } from '../../db/compiled.js';
import type { Db } from '../../db/connect.js';
import { ConflictError } from '../../kernel/errors.js';

const retiredKey = compiledOnce(
  (db, keyId: string) => db.selectFrom('retired_keys').select('did').where('key_id', '=', keyId),
  ['\u0000keyId'] as const,
);

/** The DID that gave up this key, when one did: such a key never registers or becomes an agent's key again. */
export async function findRetiredKey(db: Db, keyId: string): Promise<string | undefined> {
  return (await retiredKey(db, keyId))[0]?.did;
}

/** Refuses a key some agent rotated away from (a leaked key must not come back as anyone's key). */
export async function assertKeyNotRetired(db: Db, keyId: string, role = 'public_key'): Promise<void> {
  if ((await findRetiredKey(db, keyId)) === undefined) return;
  throw new ConflictError(
    'KEY_RETIRED',
    `${role} is a key an agent of this registry has rotated away from; a retired key is never used again: generate a new key`,
    'Key retired',
  );
}

export async function retireKey(
  db: Db,
  key: { keyId: string; did: string; keyType: KeyType; publicKey: string; at: number },
): Promise<void> {
  await db
    .insertInto('retired_keys')
    .values({
      key_id: key.keyId,
      did: key.did,
      key_type: key.keyType,
      public_key: key.publicKey,
      retired_at: key.at,
    })
    .execute();
}
