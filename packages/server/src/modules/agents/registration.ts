import type { Telemetry } from '../../telemetry/telemetry.js';
import type { TokenService } from '../identity/tokens.js';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/errors.js';
import { insertAgentIn } from './agent-writes-store.js';
import type { RegisteredAgentRow } from './agents-store.js';
import type { TransactionRunner } from '../../db/group-commit.js';
import { recordReferral } from './identity-links.js';
import { BadRequestError, ConflictError } from '../../kernel/errors.js';
import { CHAIN_ID_PATTERN, findChain, pkhDid, webDid } from '@agent-registry/protocol';
import { randomAgentId } from '../identity/agent-id.js';
import { assertKeyNotRetired } from '../identity/retired-keys-store.js';
import { InvalidPublicKeyError, parsePublicKey, type ParsedPublicKey } from '@agent-registry/protocol';
import { confirmOnCurve, parseEd25519KeyQuickly } from '../identity/ed25519-key.js';
import { registrationMessageCandidates } from '@agent-registry/protocol';
import type { KeyType } from '@agent-registry/protocol';
import type { RegisterCommand, TokenResponse } from './schemas.js';
import type { CapabilitySchemas } from '../capabilities/capability-schemas.js';
import { assertProfileRules, assertProfileSize, normaliseCapability } from './profile-rules.js';
import type { RegistrationLimiter } from './registration-limits.js';
import { assertProofOfWork } from './proof-of-work.js';
import { assertNoBidiControls } from '../../kernel/text-rules.js';
import {
  SIGNING_DOC,
  assertFreshTimestamp,
  invalidSignature,
  signatureCoversAny,
} from '../identity/signature-proof.js';

export interface RegistrationDeps {
  db: Db;
  /** Where the new agent's rows are written: on SQLite, a transaction shared by concurrent registrations. */
  writes: TransactionRunner;
  telemetry: Telemetry;
  clock: Clock;
  tokens: TokenService;
  didWebDomain: string;
  schemas: CapabilitySchemas;
  /** This registry's origin (PUBLIC_URL): the only audience accepted. */
  audience: string;
  /** REQUIRE_REGISTRATION_AUDIENCE: refuse registrations that name no audience. */
  requireAudience: boolean;
  /** Registrations per client address and network, counted with the agent's row. */
  limiter: RegistrationLimiter;
  /** PROFILE_MAX_KB: the most a stored profile may take. */
  profileMaxBytes: number;
  /** REGISTRATION_POW_BITS: zero bits a registration's proof of work must reach; 0 asks for none. */
  proofOfWorkBits: number;
}

/** Who sent a registration, as the HTTP layer saw it (X-Forwarded-For behind TRUST_PROXY). */
export interface RegistrationClient {
  address: string;
}

export class RegistrationService {
  constructor(private readonly deps: RegistrationDeps) {}

  async register(command: RegisterCommand, client: RegistrationClient): Promise<TokenResponse> {
    // Cheap checks first (shape, key, timestamp, signature): an unsigned body never costs more than
    // one signature verification. Schemas are measured after that and compiled last.
    const keyType = command.key_type ?? 'ed25519';
    const chainId = this.checkChain(keyType, command.chain_id ?? null);
    const key = this.parseKey(keyType, command.public_key);
    const now = this.deps.clock.now();
    try {
      assertFreshTimestamp(command.timestamp, now);
      // One hash, before the signature: a flood without the work costs the registry little.
      assertProofOfWork(this.deps.proofOfWorkBits, command);
      this.checkAudience(command.audience ?? null);
      const messages = registrationMessageCandidates(keyType, { ...command, chain_id: chainId });
      if (!(await signatureCoversAny(key, messages, command.signature))) {
        throw invalidSignature(
          keyType === 'ed25519'
            ? `signature is not a valid Ed25519 signature by public_key over the canonical registration message; the exact bytes are in ${SIGNING_DOC.ed25519Registration}`
            : `signature does not recover to public_key under EIP-191 personal_sign over the registration message; the exact text is in ${SIGNING_DOC.secp256k1Registration}`,
        );
      }
    } catch (error) {
      // A key off the curve was let through unchecked (it cannot carry a valid signature): it is the
      // reason to report, as when it was checked first.
      this.keyError(() => confirmOnCurve(key));
      throw error;
    }
    // Everything is validated before the signed profile is stored, so what is stored is what was signed.
    assertProfileRules(command.profile);
    if (command.referrer != null) assertNoBidiControls('referrer', command.referrer);
    await this.deps.schemas.assertPublishable(command.profile.capabilities);

    const did =
      key.address !== null && chainId !== null
        ? pkhDid(chainId, key.address)
        : webDid(this.deps.didWebDomain, randomAgentId());
    const { profile } = command;
    const row: RegisteredAgentRow = {
      did,
      key_type: keyType,
      public_key: key.hex,
      key_id: key.keyId,
      chain_id: chainId,
      name: profile.name,
      description: profile.description || null,
      avatar: profile.avatar || null,
      website: profile.website || null,
      capabilities: JSON.stringify(profile.capabilities.map(normaliseCapability)),
      tags: JSON.stringify(profile.tags ?? []),
      status: 'active',
      invocation_enabled: 0,
      delivery_mode: 'none',
      webhook_url: null,
      webhook_secret: null,
      referrer: command.referrer ?? null,
      average_rating: 0,
      reputation_score: 0,
      total_reviews: 0,
      created_at: now,
      updated_at: now,
      deactivated_at: null,
    };
    assertProfileSize(row, this.deps.profileMaxBytes);
    try {
      await this.deps.writes.run(async (trx) => {
        await this.deps.limiter.admit(trx, client.address, now);
        await assertKeyNotRetired(trx, key.keyId);
        await insertAgentIn(trx, row);
      });
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ConflictError(
          'PUBLIC_KEY_EXISTS',
          'An agent with this public key is already registered; use POST /api/auth/token to get a token for it',
          'Agent already exists',
        );
      }
      throw error;
    }
    await recordReferral(this.deps.db, did, command.referrer, this.deps.didWebDomain, now);
    const issued = await this.deps.tokens.issue(did);
    this.deps.telemetry.agentRegistered({ did, keyType });
    return { did, token: issued.token, expires_at: issued.expiresAt };
  }

  /**
   * A registration that names an audience is meant for that registry only; one that names none can be
   * replayed to any registry within its five minutes, which an operator may refuse (docs/signing.md).
   */
  private checkAudience(audience: string | null): void {
    if (audience === null) {
      if (this.deps.requireAudience) {
        throw new BadRequestError(
          'AUDIENCE_REQUIRED',
          `this registry requires "audience": "${this.deps.audience}" in the registration body and its signed message (docs/signing.md, section "Audience")`,
        );
      }
      return;
    }
    if (audience !== this.deps.audience) {
      throw new BadRequestError(
        'AUDIENCE_MISMATCH',
        `audience "${audience.slice(0, 200)}" names another registry; this one is "${this.deps.audience}" (sign a new message for it)`,
      );
    }
  }

  private checkChain(keyType: KeyType, chainId: string | null): string | null {
    if (keyType === 'ed25519') {
      if (chainId !== null) {
        throw new BadRequestError(
          'INVALID_CHAIN_ID',
          'chain_id applies to secp256k1 keys only; omit it for ed25519',
        );
      }
      return null;
    }
    if (chainId === null) {
      throw new BadRequestError(
        'CHAIN_ID_REQUIRED',
        'chain_id is required for secp256k1 keys, e.g. "eip155:1"',
      );
    }
    if (!CHAIN_ID_PATTERN.test(chainId)) {
      throw new BadRequestError(
        'INVALID_CHAIN_ID',
        `chain_id "${chainId}" is not a CAIP-2 eip155 chain id such as "eip155:1"`,
      );
    }
    if (findChain(chainId) === undefined) {
      throw new BadRequestError(
        'UNSUPPORTED_CHAIN',
        `chain_id "${chainId}" is not supported; see GET /api/chains`,
      );
    }
    return chainId;
  }

  private parseKey(keyType: KeyType, publicKey: string): ParsedPublicKey {
    return this.keyError(() =>
      keyType === 'ed25519' ? parseEd25519KeyQuickly(publicKey) : parsePublicKey(keyType, publicKey),
    );
  }

  private keyError<T>(parse: () => T): T {
    try {
      return parse();
    } catch (error) {
      if (error instanceof InvalidPublicKeyError) {
        throw new BadRequestError('INVALID_PUBLIC_KEY', error.message, 'Invalid public key');
      }
      throw error;
    }
  }
}
