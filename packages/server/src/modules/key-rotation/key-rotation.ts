import { keyRotationMessage } from '@agent-registry/protocol';
import type { Clock } from '../../kernel/clock.js';
import type { TransactionRunner } from '../../db/group-commit.js';
import { BadRequestError } from '../../kernel/errors.js';
import type { RegistrationLimiter } from '../agents/registration-limits.js';
import { assertKeyNotRetired } from '../identity/retired-keys-store.js';
import type { TokenService } from '../identity/tokens.js';
import {
  assertAddressed,
  assertSigned,
  claimOnce,
  currentKeyOf,
  keyedAgent,
  parseRequestKey,
  type KeyProofDeps,
} from './key-proof.js';
import { applyKeyChange, keyInUse, keyIsAgentKey } from './key-store.js';
import type { KeyChangeResponse, RotateKeyRequest } from './schemas.js';

/** Counts a key change from a client address and for the agent, like a registration is counted. */
export interface KeyChangeLimit {
  limiter: RegistrationLimiter;
  /** KEY_CHANGE_RATE_LIMIT: changes per agent per window. */
  perAgent: number;
}

export interface KeyRotationDeps extends KeyProofDeps {
  writes: TransactionRunner;
  clock: Clock;
  tokens: TokenService;
  limit: KeyChangeLimit;
}

export interface KeyClient {
  address: string;
}

/** Admits one key change (429 KEY_CHANGE_RATE_LIMITED past a limit), inside the change's transaction. */
export async function admitKeyChange(
  limit: KeyChangeLimit,
  trx: Parameters<RegistrationLimiter['admit']>[0],
  client: KeyClient,
  did: string,
  now: number,
): Promise<void> {
  await limit.limiter.admit(trx, client.address, now, [
    { key: `agent:${did}`, limit: limit.perAgent, what: `agent (${did})` },
  ]);
}

/**
 * Rotation of a did:web agent's key (docs/identity.md): the current key and the new key sign the same
 * message; the DID and everything attached to it stay, the old key is retired and its tokens end.
 */
export class KeyRotationService {
  constructor(private readonly deps: KeyRotationDeps) {}

  async rotate(
    rawDid: string | undefined,
    request: RotateKeyRequest,
    client: KeyClient,
  ): Promise<KeyChangeResponse> {
    const now = this.deps.clock.now();
    const agent = await keyedAgent(this.deps, rawDid);
    assertAddressed(this.deps, request.audience, request.timestamp, now);
    const newKey = parseRequestKey(request.new_key_type, request.new_public_key, 'new_public_key');
    const current = currentKeyOf(agent);
    if (newKey.keyId === current.keyId) {
      throw new BadRequestError(
        'KEY_UNCHANGED',
        "new_public_key is the agent's current key; a rotation names a key of its own",
      );
    }
    const message = keyRotationMessage({
      did: agent.did,
      audience: this.deps.audience,
      timestamp: request.timestamp,
      new_key_type: request.new_key_type,
      new_public_key: request.new_public_key,
    });
    await assertSigned(current.parsed, message, request.signature, 'signature', 'the current key');
    await assertSigned(newKey, message, request.new_key_signature, 'new_key_signature', 'the new key');
    await assertKeyNotRetired(this.deps.db, newKey.keyId, 'new_public_key');
    if (await keyIsAgentKey(this.deps.db, newKey.keyId)) throw keyInUse('new_public_key');
    const generation = await this.deps.writes.run(async (trx) => {
      await admitKeyChange(this.deps.limit, trx, client, agent.did, now);
      await claimOnce(trx, message, request.timestamp, now);
      await assertKeyNotRetired(trx, newKey.keyId, 'new_public_key');
      return applyKeyChange(trx, { from: current, to: newKey, at: now, via: 'rotation' });
    });
    const issued = await this.deps.tokens.issue(agent.did, generation);
    return {
      did: agent.did,
      key_type: newKey.keyType,
      public_key: newKey.hex,
      key_generation: generation,
      token: issued.token,
      expires_at: issued.expiresAt,
    };
  }
}
