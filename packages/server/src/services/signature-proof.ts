import { BadRequestError } from '../errors.js';
import { recoverEip191Signer, verifyEd25519 } from '../identity/signatures.js';
import type { ParsedPublicKey } from '../identity/keys.js';
import { LIMITS } from './limits.js';

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

/** True when the signature by this key covers one of the candidate messages. */
export function signatureCoversAny(key: ParsedPublicKey, messages: string[], signature: string): boolean {
  if (key.keyType === 'ed25519')
    return messages.some((message) => verifyEd25519(message, signature, key.hex));
  const expected = key.keyId.slice('secp256k1:'.length);
  return messages.some((message) => recoverEip191Signer(message, signature) === expected);
}

export function invalidSignature(details: string): BadRequestError {
  return new BadRequestError('INVALID_SIGNATURE', details, 'Invalid signature');
}
