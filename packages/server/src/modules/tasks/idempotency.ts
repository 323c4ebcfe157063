import { canonicalJson } from '@agent-registry/protocol';
import { createHash } from 'node:crypto';
import { BadRequestError } from '../../kernel/errors.js';
import type { InvokeRequest } from './schemas.js';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export function requireIdempotencyKey(key: string): string {
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new BadRequestError(
      'INVALID_IDEMPOTENCY_KEY',
      'Idempotency-Key must be 1-255 visible ASCII characters (no spaces), e.g. a UUID',
    );
  }
  return key;
}

/** What makes two invocations "the same request" for a key; timeout_ms is not part of it. */
export function fingerprint(request: InvokeRequest): string {
  const identity = canonicalJson({
    target_did: request.target_did,
    capability: request.capability,
    input: request.input,
  });
  return createHash('sha256').update(identity).digest('hex');
}
