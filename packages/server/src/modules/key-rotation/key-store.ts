import type { KeyType, ParsedPublicKey } from '@agent-registry/protocol';
import type { Db } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/errors.js';
import { ConflictError } from '../../kernel/errors.js';
import { stampAgentChange } from '../agents/change-feed-store.js';
import { appendLogEvent } from '../agents/log-event-store.js';
import { retireKey } from '../identity/retired-keys-store.js';
import type { KeyRecoveryTable } from '../../db/schema/index.js';

export type KeyRecoveryRow = KeyRecoveryTable;

/** The key an agent has now, as a change of key finds it. */
export interface CurrentKey {
  did: string;
  keyType: KeyType;
  publicKey: string;
  keyId: string;
}

export interface KeyChange {
  from: CurrentKey;
  to: ParsedPublicKey;
  at: number;
  via: 'rotation' | 'recovery';
}

const rotationLost = (): ConflictError =>
  new ConflictError(
    'KEY_ROTATION_CONFLICT',
    "The agent's key changed while this request was made (another rotation or a recovery finished first); read the profile's public_key and sign again with the current key",
    'Key changed meanwhile',
  );

/**
 * Gives the agent its new key inside the caller's transaction, or throws KEY_ROTATION_CONFLICT when its
 * key is no longer the one the request was checked against. The compare-and-set on the key is one
 * statement, so of two changes racing on any nodes exactly one wins. The old key is retired, a pending
 * recovery ends (the key holder has acted), the profile is stamped (it shows the new key) and the change
 * is logged; returns the new key generation.
 */
export async function applyKeyChange(trx: Db, change: KeyChange): Promise<number> {
  const { from, to, at } = change;
  let updated: { key_generation: number } | undefined;
  try {
    updated = await trx
      .updateTable('agents')
      .set((eb) => ({
        key_type: to.keyType,
        public_key: to.hex,
        key_id: to.keyId,
        chain_id: null,
        key_generation: eb('key_generation', '+', 1),
        updated_at: at,
      }))
      .where('did', '=', from.did)
      .where('key_id', '=', from.keyId)
      .where('status', '=', 'active')
      .returning('key_generation')
      .executeTakeFirst();
  } catch (error) {
    if (isUniqueViolation(error)) throw keyInUse('new_public_key');
    throw error;
  }
  if (updated === undefined) throw rotationLost();
  const generation = Number(updated.key_generation);
  await retireKey(trx, {
    keyId: from.keyId,
    did: from.did,
    keyType: from.keyType,
    publicKey: from.publicKey,
    at,
  });
  if (change.via === 'rotation') await endPendingRecovery(trx, from.did, at, 'rotated');
  await stampAgentChange(trx, from.did);
  await appendLogEvent(trx, {
    op: 'key.rotated',
    subject: from.did,
    time: at,
    fields: {
      old_key_type: from.keyType,
      old_public_key: from.publicKey,
      new_key_type: to.keyType,
      new_public_key: to.hex,
      key_generation: generation,
      via: change.via,
    },
  });
  return generation;
}

export const keyInUse = (role: string): ConflictError =>
  new ConflictError(
    'PUBLIC_KEY_EXISTS',
    `${role} is already the key of an agent of this registry; use a key of its own`,
    'Key in use',
  );

/** Whether any agent's key is this one. */
export async function keyIsAgentKey(db: Db, keyId: string): Promise<boolean> {
  const row = await db.selectFrom('agents').select('did').where('key_id', '=', keyId).executeTakeFirst();
  return row !== undefined;
}

export async function findRecovery(db: Db, did: string): Promise<KeyRecoveryRow | undefined> {
  return db.selectFrom('key_recovery').selectAll().where('did', '=', did).executeTakeFirst();
}

const NO_PENDING = {
  pending_key_type: null,
  pending_public_key: null,
  pending_key_id: null,
  pending_started_at: null,
  pending_due_at: null,
} as const;

/** Sets or replaces the recovery key; a recovery the old recovery key started ends with it. */
export async function upsertRecoveryKey(
  trx: Db,
  did: string,
  key: ParsedPublicKey,
  at: number,
): Promise<void> {
  await endPendingRecovery(trx, did, at, 'replaced');
  const values = {
    recovery_key_type: key.keyType,
    recovery_public_key: key.hex,
    recovery_key_id: key.keyId,
    set_at: at,
  };
  await trx
    .insertInto('key_recovery')
    .values({ did, ...values, ...NO_PENDING })
    .onConflict((conflict) => conflict.column('did').doUpdateSet(values))
    .execute();
}

/**
 * Starts a recovery when none is pending and the recovery key is still `recoveryKeyId`; false otherwise
 * (one statement: two starts racing leave one).
 */
export async function startPendingRecovery(
  trx: Db,
  did: string,
  recoveryKeyId: string,
  newKey: ParsedPublicKey,
  at: number,
  dueAt: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('key_recovery')
    .set({
      pending_key_type: newKey.keyType,
      pending_public_key: newKey.hex,
      pending_key_id: newKey.keyId,
      pending_started_at: at,
      pending_due_at: dueAt,
    })
    .where('did', '=', did)
    .where('recovery_key_id', '=', recoveryKeyId)
    .where('pending_due_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export type EndReason = 'cancelled' | 'rotated' | 'replaced' | 'key_unavailable';

/** Ends a pending recovery, logged with its reason; false when none was pending. */
export async function endPendingRecovery(
  trx: Db,
  did: string,
  at: number,
  reason: EndReason,
): Promise<boolean> {
  const result = await trx
    .updateTable('key_recovery')
    .set(NO_PENDING)
    .where('did', '=', did)
    .where('pending_due_at', 'is not', null)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) return false;
  await appendLogEvent(trx, { op: 'key.recovery_cancelled', subject: did, time: at, fields: { reason } });
  return true;
}

/**
 * Takes a due recovery for this node to finish: clears it only if it is still the one read (`keyId`)
 * and due, so of the nodes that found it, one takes it.
 */
export async function claimDueRecovery(trx: Db, did: string, keyId: string, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('key_recovery')
    .set(NO_PENDING)
    .where('did', '=', did)
    .where('pending_key_id', '=', keyId)
    .where('pending_due_at', '<=', now)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Recoveries whose timelock has passed, oldest first. */
export async function dueRecoveries(db: Db, now: number, limit: number): Promise<KeyRecoveryRow[]> {
  return db
    .selectFrom('key_recovery')
    .selectAll()
    .where('pending_due_at', '<=', now)
    .orderBy('pending_due_at')
    .limit(limit)
    .execute();
}
