import { LogVerificationError } from '@agent-registry/protocol';
import { RemoteFetchError } from './remote-fetch.js';

/**
 * The origin a peer's log must carry, as a registry of this kind forms it: its public URL without the
 * scheme, then `/log` (C2SP tlog-checkpoint: a schema-less URL naming the log). A key or checkpoint
 * naming another log is another log's, and the peer is not followed.
 */
export function checkPeerOrigin(peer: string, origin: string, what: string): void {
  const expected = `${new URL(peer).host}/log`;
  if (origin !== expected)
    throw new LogVerificationError(
      `${what} ${JSON.stringify(origin.slice(0, 200))}, but the log of ${peer} is ${expected}`,
    );
}

/** A peer's JSON answer as an object, or a fetch error naming `what`. */
export function parseObject(body: Buffer, what: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new RemoteFetchError(`${what} is not a JSON object`);
}
