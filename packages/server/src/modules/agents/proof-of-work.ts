import { createHash } from 'node:crypto';
import { BadRequestError } from '../../kernel/errors.js';

/** Where the exact rule is written for client authors. */
const POW_DOC = 'docs/operations.md, section "Registration cost (proof of work)"';

/** What is hashed: bound to the key and the signed timestamp, so a proof serves one registration only. */
export const proofOfWorkInput = (publicKey: string, timestamp: number, nonce: string): string =>
  `agent-registry-pow:${publicKey}:${timestamp}:${nonce}`;

/** Leading zero bits of a digest. */
function leadingZeroBits(digest: Buffer): number {
  let bits = 0;
  for (const byte of digest) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    return bits + Math.clz32(byte) - 24;
  }
  return bits;
}

/**
 * REGISTRATION_POW_BITS > 0: a registration carries `proof_of_work`, a nonce whose SHA-256 (with the
 * key and timestamp, see proofOfWorkInput) starts with that many zero bits. About 2^bits hashes for
 * the client, one for the registry; 0 (the default) asks nothing, so existing clients work unchanged.
 */
export function assertProofOfWork(
  bits: number,
  command: { public_key: string; timestamp: number; proof_of_work?: string | null },
): void {
  if (bits === 0) return;
  const nonce = command.proof_of_work;
  const rule =
    `SHA-256 of "agent-registry-pow:<public_key>:<timestamp>:<proof_of_work>" (UTF-8, public_key and timestamp ` +
    `as in this body) must start with ${bits} zero bits (${POW_DOC})`;
  if (nonce == null) {
    throw new BadRequestError(
      'PROOF_OF_WORK_REQUIRED',
      `this registry asks for a proof of work: send "proof_of_work", a string of 1-64 characters such that ${rule}`,
    );
  }
  const digest = createHash('sha256')
    .update(proofOfWorkInput(command.public_key, command.timestamp, nonce))
    .digest();
  if (leadingZeroBits(digest) < bits) {
    throw new BadRequestError(
      'INVALID_PROOF_OF_WORK',
      `proof_of_work "${nonce}" does not meet the rule: ${rule}`,
    );
  }
}
