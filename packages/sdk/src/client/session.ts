import { authenticationMessage, registrationMessage } from '@agent-registry/protocol';
import { RegistryError } from '../errors.js';
import type { AgentKey } from '../keys.js';
import type { Profile } from '../types.js';

/** Token errors a new signature cures; AGENT_DEACTIVATED is not one of them. */
const RENEWABLE = new Set(['TOKEN_EXPIRED', 'TOKEN_INVALID', 'TOKEN_MISSING', 'TOKEN_KEY_ROTATED']);

/** Whether the registry refused the token in a way that logging in again by signature cures. */
export function curedBySignature(error: unknown): boolean {
  return error instanceof RegistryError && error.status === 401 && RENEWABLE.has(error.code);
}

/** Reads `sub` from a JWT without verifying it (the registry verifies; we only need our own DID). */
export function subjectOf(token: string): string | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const bytes = Uint8Array.from(json, (char) => char.charCodeAt(0));
    const claims = JSON.parse(new TextDecoder().decode(bytes)) as { sub?: unknown };
    return typeof claims.sub === 'string' ? claims.sub : undefined;
  } catch {
    return undefined;
  }
}

/** Timestamps for signed messages, strictly increasing: two messages signed in the same millisecond would be the same message. */
export class MessageClock {
  private last = 0;

  next(): number {
    this.last = Math.max(Date.now(), this.last + 1);
    return this.last;
  }
}

/** The body of `POST /api/agents/register`: the registration message signed by `key`, bound to `audience`. */
export async function signedRegistration(
  key: AgentKey,
  profile: Profile,
  audience: string,
  clock: MessageClock,
  referrer: string | undefined,
): Promise<Record<string, unknown>> {
  // What is signed must be what is sent: one JSON round trip drops undefined members from both.
  const sent = JSON.parse(JSON.stringify(profile)) as Profile;
  const publicKey = await key.publicKey();
  const timestamp = clock.next();
  const message = registrationMessage(key.keyType, {
    public_key: publicKey,
    chain_id: key.chainId,
    timestamp,
    profile: sent,
    audience,
  });
  return {
    public_key: publicKey,
    key_type: key.keyType,
    ...(key.chainId === null ? {} : { chain_id: key.chainId }),
    profile: sent,
    timestamp,
    signature: await key.sign(message),
    audience,
    ...(referrer === undefined ? {} : { referrer }),
  };
}

/** The body of `POST /api/auth/token`: the authentication message for `did` signed by `key`. */
export async function signedLogin(
  key: AgentKey,
  did: string,
  audience: string,
  clock: MessageClock,
): Promise<Record<string, unknown>> {
  const timestamp = clock.next();
  const message = authenticationMessage(key.keyType, { did, audience, timestamp });
  return { did, timestamp, signature: await key.sign(message), audience };
}
