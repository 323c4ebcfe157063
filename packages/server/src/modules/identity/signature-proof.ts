import { AUTHENTICATION_MAX_AGE_MS, AUTHENTICATION_MAX_FUTURE_MS } from '@agent-registry/protocol';
import { BadRequestError } from '../../kernel/errors.js';
import { recoverEip191Signer, verifyEd25519 } from './signatures.js';
import type { ParsedPublicKey } from '@agent-registry/protocol';
import { LIMITS } from '../../kernel/limits.js';

/** The timestamp of a signed message must be within +/-5 minutes of server time (epoch milliseconds). */
export function assertFreshTimestamp(timestamp: number, now: number): void {
  if (Math.abs(now - timestamp) > LIMITS.timestampSkewMs) {
    const hint = timestamp < 1e12 ? ' (it looks like seconds; send epoch milliseconds)' : '';
    throw new BadRequestError(
      'TIMESTAMP_OUT_OF_RANGE',
      `timestamp must be within 5 minutes of server time ${now} (epoch milliseconds)${hint}`,
      'Invalid timestamp',
    );
  }
}

/**
 * An authentication timestamp may be up to 5 minutes old but only 60 seconds ahead: a signature
 * dated far in the future would otherwise stay usable long after it was made.
 */
export function assertAuthenticationTimestamp(timestamp: number, now: number): void {
  if (now - timestamp > AUTHENTICATION_MAX_AGE_MS || timestamp - now > AUTHENTICATION_MAX_FUTURE_MS) {
    const hint = timestamp < 1e12 ? ' (it looks like seconds; send epoch milliseconds)' : '';
    throw new BadRequestError(
      'TIMESTAMP_OUT_OF_RANGE',
      `timestamp must be at most 5 minutes before and 60 seconds after server time ${now} (epoch milliseconds)${hint}`,
      'Invalid timestamp',
    );
  }
}

/** Where a client finds the exact bytes to sign, named in every INVALID_SIGNATURE error. */
export const SIGNING_DOC = {
  ed25519Registration: 'docs/signing.md, section "Registration with an Ed25519 key"',
  secp256k1Registration: 'docs/signing.md, section "Registration with a secp256k1 key"',
  authentication: 'docs/signing.md, section "Authentication (POST /api/auth/token)"',
} as const;

/** True when the signature by this key covers one of the candidate messages (tried in order, lazily). */
export async function signatureCoversAny(
  key: ParsedPublicKey,
  messages: Iterable<string>,
  signature: string,
): Promise<boolean> {
  const expected = key.keyType === 'ed25519' ? undefined : key.keyId.slice('secp256k1:'.length);
  for (const message of messages) {
    if (
      expected === undefined
        ? await verifyEd25519(message, signature, key.hex)
        : recoverEip191Signer(message, signature) === expected
    )
      return true;
  }
  return false;
}

export function invalidSignature(details: string): BadRequestError {
  return new BadRequestError('INVALID_SIGNATURE', details, 'Invalid signature');
}
