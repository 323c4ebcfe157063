import { randomFillSync } from 'node:crypto';

/** Bytes drawn from the CSPRNG at once: one call per 256 agent ids. */
const POOL_BYTES = 4096;
const ID_BYTES = 16;

const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

/**
 * A new did:web agent id: 128 random bits as 32 lower-case hex characters (docs/decisions/identity.md). The
 * bytes come from node:crypto's CSPRNG, drawn 4 KiB at a time, each used once: a call per id cost as much as
 * building the registration's row (docs/decisions/performance.md, "Agent ids").
 */
export function randomAgentId(): string {
  if (offset + ID_BYTES > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString('hex', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return id;
}
