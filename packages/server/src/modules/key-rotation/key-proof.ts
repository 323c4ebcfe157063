import { createHash } from 'node:crypto';
import {
  InvalidPublicKeyError,
  REGISTRATION_TIMESTAMP_SKEW_MS,
  parsePublicKey,
  type KeyType,
  type ParsedPublicKey,
} from '@agent-registry/protocol';
import type { Db } from '../../db/connect.js';
import { BadRequestError, NotFoundError, agentNotFound } from '../../kernel/errors.js';
import { findActiveAgent, type AgentRow } from '../agents/agents-store.js';
import { requireDid } from '../identity/did-param.js';
import { claimSignatureUse } from '../identity/used-signatures-store.js';
import { assertFreshTimestamp, invalidSignature, signatureCoversAny } from '../identity/signature-proof.js';
import type { CurrentKey } from './key-store.js';

/** Where the exact bytes of the key messages are documented, named in every INVALID_SIGNATURE. */
export const KEY_SIGNING_DOC = 'docs/signing.md, section "Key rotation and recovery"';

/** What every key request shares: the registry it is for and how DIDs are read. */
export interface KeyProofDeps {
  db: Db;
  didWebDomain: string;
  /** This registry's origin: the only audience accepted. */
  audience: string;
}

/** A key from a request, fully checked (on the curve, not small-order), or a 400 naming the field. */
export function parseRequestKey(keyType: KeyType, hex: string, field: string): ParsedPublicKey {
  try {
    return parsePublicKey(keyType, hex);
  } catch (error) {
    if (error instanceof InvalidPublicKeyError) {
      throw new BadRequestError('INVALID_PUBLIC_KEY', `${field}: ${error.message}`, 'Invalid public key');
    }
    throw error;
  }
}

/** The stored key of an agent row (it passed every check when it was given). */
export function currentKeyOf(agent: AgentRow): CurrentKey & { parsed: ParsedPublicKey } {
  return {
    did: agent.did,
    keyType: agent.key_type,
    publicKey: agent.public_key,
    keyId: agent.key_id,
    parsed: parsePublicKey(agent.key_type, agent.public_key),
  };
}

/**
 * The did:web agent of this registry a key request names: a did:pkh DID is its key (the address is
 * derived from it), so its key cannot change.
 */
export async function keyedAgent(deps: KeyProofDeps, rawDid: string | undefined): Promise<AgentRow> {
  const parsed = requireDid(rawDid, deps.didWebDomain);
  if (parsed.method === 'pkh') {
    throw new BadRequestError(
      'KEY_ROTATION_UNSUPPORTED',
      `${parsed.did} is a did:pkh DID: its address is derived from its key, so the key cannot change without changing the DID. Keys rotate and recover for did:web agents only (docs/identity.md)`,
      'Key change not supported',
    );
  }
  if (!parsed.isLocal) throw agentNotFound(parsed.did);
  const agent = await findActiveAgent(deps.db, parsed.did);
  if (agent === undefined) throw agentNotFound(parsed.did);
  return agent;
}

/** The audience and timestamp every key message carries. */
export function assertAddressed(deps: KeyProofDeps, audience: string, timestamp: number, now: number): void {
  if (audience !== deps.audience) {
    throw new BadRequestError(
      'AUDIENCE_MISMATCH',
      `audience "${audience.slice(0, 200)}" names another registry; this one is "${deps.audience}" (sign a new message for it)`,
    );
  }
  assertFreshTimestamp(timestamp, now);
}

/** Throws INVALID_SIGNATURE naming the signer when `signature` by `key` does not cover `message`. */
export async function assertSigned(
  key: ParsedPublicKey,
  message: string,
  signature: string,
  field: string,
  signer: string,
): Promise<void> {
  if (await signatureCoversAny(key, [message], signature)) return;
  throw invalidSignature(
    `${field} does not verify as ${signer}'s ${key.keyType === 'ed25519' ? 'Ed25519 signature over the canonical JSON' : 'EIP-191 personal_sign signature over the canonical JSON'} of the message; the exact bytes are in ${KEY_SIGNING_DOC}`,
  );
}

/** Each signed key message is accepted once (keyed by its text, as logins are). */
export async function claimOnce(db: Db, message: string, timestamp: number, now: number): Promise<void> {
  const digest = createHash('sha256').update(message).digest('hex');
  if (await claimSignatureUse(db, digest, timestamp + REGISTRATION_TIMESTAMP_SKEW_MS, now)) return;
  throw new BadRequestError(
    'SIGNATURE_REUSED',
    'this signed message was already used; sign a new one with a fresh timestamp',
    'Signature reused',
  );
}

export const recoveryKeyNotSet = (did: string): NotFoundError =>
  new NotFoundError(
    'RECOVERY_KEY_NOT_SET',
    `${did} has no recovery key; without one a lost key stays lost (docs/identity.md)`,
    'No recovery key',
  );
