import { canonicalJson } from './canonical-json.js';
import { signEd25519, signEip191 } from './signatures.js';
import type { KeyType } from './types.js';

/**
 * The messages that change an agent's key (docs/signing.md, "Key rotation and recovery"). Each is one
 * canonical JSON (RFC 8785) text whatever the key types: an Ed25519 key signs its UTF-8 bytes, a
 * secp256k1 key signs it under EIP-191 personal_sign. `audience` (the registry's origin) is always part
 * of it, so no other registry accepts the same signature.
 */
export const KEY_ROTATION_PURPOSE = 'key-rotation';
export const KEY_RECOVERY_SET_PURPOSE = 'key-recovery-set';
export const KEY_RECOVERY_START_PURPOSE = 'key-recovery-start';
export const KEY_RECOVERY_CANCEL_PURPOSE = 'key-recovery-cancel';

interface Addressed {
  /** The agent's DID. */
  did: string;
  /** The registry's origin, e.g. `https://registry.example`. */
  audience: string;
  /** Epoch milliseconds. */
  timestamp: number;
}

export interface KeyRotationInput extends Addressed {
  new_key_type: KeyType;
  /** Hex without 0x, as the new key would register. */
  new_public_key: string;
}

export interface RecoverySetInput extends Addressed {
  recovery_key_type: KeyType;
  recovery_public_key: string;
}

/** Signed by the current key and by the new key: the same text. */
export function keyRotationMessage(input: KeyRotationInput): string {
  return canonicalJson({
    audience: input.audience,
    did: input.did,
    new_key_type: input.new_key_type,
    new_public_key: input.new_public_key,
    purpose: KEY_ROTATION_PURPOSE,
    timestamp: input.timestamp,
  });
}

/** Signed by the current key: names the key that may later start a recovery. */
export function recoverySetMessage(input: RecoverySetInput): string {
  return canonicalJson({
    audience: input.audience,
    did: input.did,
    purpose: KEY_RECOVERY_SET_PURPOSE,
    recovery_key_type: input.recovery_key_type,
    recovery_public_key: input.recovery_public_key,
    timestamp: input.timestamp,
  });
}

/** Signed by the recovery key: names the key the agent gets once the timelock has passed. */
export function recoveryStartMessage(input: KeyRotationInput): string {
  return canonicalJson({
    audience: input.audience,
    did: input.did,
    new_key_type: input.new_key_type,
    new_public_key: input.new_public_key,
    purpose: KEY_RECOVERY_START_PURPOSE,
    timestamp: input.timestamp,
  });
}

/** Signed by the current key: ends a pending recovery. */
export function recoveryCancelMessage(input: Addressed): string {
  return canonicalJson({
    audience: input.audience,
    did: input.did,
    purpose: KEY_RECOVERY_CANCEL_PURPOSE,
    timestamp: input.timestamp,
  });
}

/** Signs one of the messages above by the key-type rule (hex signature, `0x` for secp256k1). */
export function signKeyMessage(keyType: KeyType, message: string, privateKeyHex: string): string {
  return keyType === 'ed25519' ? signEd25519(message, privateKeyHex) : signEip191(message, privateKeyHex);
}
