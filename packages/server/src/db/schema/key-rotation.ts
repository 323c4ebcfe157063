import type { KeyType } from '@agent-registry/protocol';

/** A key an agent rotated away from or recovered from: it never registers or rotates again (migration 023). */
export interface RetiredKeysTable {
  /** `<key_type>:<compressed key hex>`, as agents.key_id. */
  key_id: string;
  did: string;
  key_type: KeyType;
  public_key: string;
  retired_at: number;
}

/** An agent's recovery key and the recovery it started, if any (migration 023). */
export interface KeyRecoveryTable {
  did: string;
  recovery_key_type: KeyType;
  recovery_public_key: string;
  recovery_key_id: string;
  set_at: number;
  pending_key_type: KeyType | null;
  pending_public_key: string | null;
  pending_key_id: string | null;
  pending_started_at: number | null;
  /** When the pending recovery may finish; null when none is pending. */
  pending_due_at: number | null;
}

export type KeyRotationPartial = { retired_keys: RetiredKeysTable; key_recovery: KeyRecoveryTable };
