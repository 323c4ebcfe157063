import { Type, type Static } from '@sinclair/typebox';
import { KEY_TYPES } from '@agent-registry/protocol';
import { Nullable } from '../../http/common-schemas.js';

const KeyType = Type.Unsafe<'ed25519' | 'secp256k1'>({ type: 'string', enum: [...KEY_TYPES] });
// The service parses keys and says what is wrong with one; the schema only bounds the input.
const PublicKey = (what: string) =>
  Type.String({
    maxLength: 200,
    description: `${what}: hex without 0x, 64 characters (ed25519), 66 or 130 (secp256k1)`,
  });
const Signature = (by: string) =>
  Type.String({ maxLength: 200, description: `${by}: Ed25519 hex, or 0x-prefixed EIP-191 signature` });
const Audience = Type.String({
  maxLength: 2048,
  description:
    "This registry's origin (its PUBLIC_URL, e.g. https://registry.example); part of the signed message",
});
const Timestamp = Type.Integer({ description: 'Epoch milliseconds; within 5 minutes of server time' });

export const RotateKeyRequest = Type.Object(
  {
    new_key_type: KeyType,
    new_public_key: PublicKey('The key that replaces the current one'),
    audience: Audience,
    timestamp: Timestamp,
    signature: Signature('By the current key over the key-rotation message'),
    new_key_signature: Signature('By the new key over the same message'),
  },
  {
    additionalProperties: false,
    description:
      'Extension (docs/identity.md): both keys sign the canonical JSON of {purpose:"key-rotation", did, audience, ' +
      'timestamp, new_key_type, new_public_key}; docs/signing.md, section "Key rotation", gives the exact bytes.',
  },
);
export type RotateKeyRequest = Static<typeof RotateKeyRequest>;

export const KeyChangeResponse = Type.Object(
  {
    did: Type.String(),
    key_type: KeyType,
    public_key: Type.String(),
    key_generation: Type.Integer({ description: 'How many times the key was replaced' }),
    token: Type.String({ description: 'A bearer token of the new key' }),
    expires_at: Type.Integer(),
  },
  { description: 'Extension: docs/identity.md' },
);
export type KeyChangeResponse = Static<typeof KeyChangeResponse>;

export const SetRecoveryKeyRequest = Type.Object(
  {
    recovery_key_type: KeyType,
    recovery_public_key: PublicKey('The key that may start a recovery'),
    audience: Audience,
    timestamp: Timestamp,
    signature: Signature('By the current key over the key-recovery-set message'),
  },
  { additionalProperties: false },
);
export type SetRecoveryKeyRequest = Static<typeof SetRecoveryKeyRequest>;

export const StartRecoveryRequest = Type.Object(
  {
    new_key_type: KeyType,
    new_public_key: PublicKey('The key the agent gets when the timelock has passed'),
    audience: Audience,
    timestamp: Timestamp,
    signature: Signature('By the recovery key over the key-recovery-start message'),
  },
  { additionalProperties: false },
);
export type StartRecoveryRequest = Static<typeof StartRecoveryRequest>;

export const CancelRecoveryRequest = Type.Object(
  {
    audience: Audience,
    timestamp: Timestamp,
    signature: Signature('By the current key over the key-recovery-cancel message'),
  },
  { additionalProperties: false },
);
export type CancelRecoveryRequest = Static<typeof CancelRecoveryRequest>;

export const PendingRecovery = Type.Object(
  {
    new_key_type: KeyType,
    new_public_key: Type.String(),
    started_at: Type.Integer(),
    completes_at: Type.Integer({ description: 'When the new key becomes the agent key, unless cancelled' }),
  },
  { description: 'Extension: docs/identity.md' },
);
export type PendingRecovery = Static<typeof PendingRecovery>;

export const KeyRecoveryStatus = Type.Object(
  {
    did: Type.String(),
    recovery_key_set: Type.Boolean(),
    recovery_key_type: Nullable(KeyType),
    recovery_public_key: Nullable(Type.String()),
    timelock_hours: Type.Number({ description: 'KEY_RECOVERY_HOURS of this registry' }),
    pending: Nullable(PendingRecovery),
  },
  { description: 'Extension: docs/identity.md' },
);
export type KeyRecoveryStatus = Static<typeof KeyRecoveryStatus>;
