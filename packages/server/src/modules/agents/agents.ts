import type { Telemetry } from '../../telemetry/telemetry.js';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import type { TransactionRunner } from '../../db/group-commit.js';
import { updateAgentAndStamp } from './agent-writes-store.js';
import {
  findActiveAgent,
  findAgentProfile,
  findAgentVersion,
  type AgentPatch,
  type AgentRow,
} from './agents-store.js';
import {
  BadRequestError,
  ForbiddenError,
  NotFoundError,
  agentNotFound,
  type ApiError,
} from '../../kernel/errors.js';
import { ForbiddenWebhookTargetError, type WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import { toAgentProfile } from './agent-view.js';
import type {
  AgentProfile,
  DeactivateResponse,
  InvocationConfig,
  OwnerInvocationConfig,
  PaymentAddress,
  PendingKeyRecovery,
  ProfileModeration,
  UpdateInvocationConfigRequest,
  UpdateProfileRequest,
} from './schemas.js';
import type { ServiceRecordService } from '../service-record/service-record.js';
import type { AvailabilityService } from '../availability/availability.js';
import type { ProfileCache } from './profile-cache.js';
import { recordWebhookHost } from './identity-links.js';
import type { AuthenticatedAgent } from './authentication.js';
import { requireDid } from '../identity/did-param.js';
import { LIMITS } from '../../kernel/limits.js';
import type { CapabilitySchemas } from '../capabilities/capability-schemas.js';
import {
  assertHttpUrl,
  assertProfileRules,
  assertProfileSize,
  normaliseCapability,
} from './profile-rules.js';

export interface AgentServiceDeps {
  db: Db;
  /** Where profile, invocation-settings and status writes run: shared with registrations (context.ts). */
  writes: TransactionRunner;
  telemetry: Telemetry;
  clock: Clock;
  didWebDomain: string;
  publicUrl: string;
  webhookPolicy: WebhookNetworkPolicy;
  serviceRecord: ServiceRecordService;
  availability: AvailabilityService;
  schemas: CapabilitySchemas;
  profileCache: ProfileCache;
  /** PROFILE_MAX_KB: the most a stored profile may take after an update. */
  profileMaxBytes: number;
  /** Agents listed here that live at another registry (modules/federation/): read there, not here. */
  remote?: RemoteReferrals;
  /** Pending key recoveries (modules/key-rotation/), shown on the profile while they wait. */
  keyRecoveries?: PendingKeyRecoveries;
  /** Verified domains and handles (modules/domains/), shown on the profile of an agent that holds one. */
  identityClaims?: IdentityClaims;
  /** The operator's suspensions (modules/moderation/), shown on a suspended agent's profile. */
  suspensions?: Suspensions;
}

/** What the profile shows of an agent's verified domains and handle. */
export interface IdentityClaims {
  forProfile(did: string): Promise<{ domains: string[]; handle?: string }>;
}

/** Why an agent is suspended, read only for an agent whose status is `suspended`. */
export interface Suspensions {
  of(did: string): Promise<ProfileModeration | undefined>;
}

/** The pending key recovery of an agent, read only for an agent that has one. */
export interface PendingKeyRecoveries {
  pending(did: string): Promise<PendingKeyRecovery | undefined>;
}

/**
 * The referral for a DID with no agent here but a remote entry: a 404 `AGENT_IS_REMOTE` naming its home
 * registry. Reading its profile and invoking it answer the same, so a caller learns where it lives.
 */
export interface RemoteReferrals {
  referral(did: string): Promise<ApiError | undefined>;
}

export class AgentService {
  constructor(private readonly deps: AgentServiceDeps) {}

  /** Profiles of deactivated agents stay readable (soft delete keeps the data) with status "deactivated". */
  async getProfile(rawDid: string | undefined): Promise<AgentProfile> {
    const did = requireDid(rawDid, this.deps.didWebDomain).did;
    return (await this.readProfile(did)).profile;
  }

  /**
   * The profile serialised by `serialize`, from the profile cache when the agent's change number in the
   * database is the one it was cached at (one two-column read instead of the profile's row, its mapping
   * and its serialisation). Agents with a service record are read afresh: their record moves with every
   * call and with the clock, without a new change number.
   */
  async getProfileBody(
    rawDid: string | undefined,
    serialize: (profile: AgentProfile) => string,
  ): Promise<string> {
    const did = requireDid(rawDid, this.deps.didWebDomain).did;
    const cache = this.deps.profileCache;
    // Only an agent the cache holds is checked first: for any other, the check would be a read more.
    if (cache.holds(did)) {
      const version = await findAgentVersion(this.deps.db, did);
      if (version === undefined) throw await this.notHere(did);
      const live = version.has_service_record || version.has_presence;
      const cached = cache.get(did, live ? null : version.change_seq);
      if (cached !== undefined) return cached;
    } else {
      cache.recordMiss();
    }
    const { profile, changeSeq, live } = await this.readProfile(did);
    const body = serialize(profile);
    // Kept at the number read with the row itself, so the body and its number always agree; an agent
    // that now has a service record or observed workers leaves the cache (else each of its reads
    // would pay the check).
    cache.keep(did, live ? null : changeSeq, body);
    return body;
  }

  /** The error for a profile read of a DID with no agent here: a referral when a remote entry names it. */
  private async notHere(did: string): Promise<ApiError> {
    return (await this.deps.remote?.referral(did)) ?? agentNotFound(did);
  }

  private async readProfile(
    did: string,
  ): Promise<{ profile: AgentProfile; changeSeq: number | null; live: boolean }> {
    const row = await findAgentProfile(this.deps.db, did);
    if (row === undefined) throw await this.notHere(did);
    const record = row.has_service_record
      ? await this.deps.serviceRecord.get(this.deps.db, did)
      : this.deps.serviceRecord.none();
    const observed = {
      did,
      status: row.status,
      invocation_enabled: row.invocation_enabled === 1,
      delivery_mode: row.delivery_mode,
      webhook_probes: row.webhook_probes === 1,
    };
    const availability = row.has_presence
      ? await this.deps.availability.get(observed)
      : this.deps.availability.unobserved(observed);
    const profile = toAgentProfile(row, this.deps.publicUrl, record, availability);
    // A suspension and a restoration stamp the agent too, so a cached body never outlives either.
    if (row.status === 'suspended') {
      const moderation = await this.deps.suspensions?.of(did);
      if (moderation !== undefined) profile.moderation = moderation;
    }
    // Starting, cancelling and finishing a recovery each stamp the agent, so a cached body stays right.
    if (row.has_pending_recovery) {
      const pending = await this.deps.keyRecoveries?.pending(did);
      if (pending !== undefined) profile.key_recovery = pending;
    }
    // Claims, drops and handle changes each stamp the agent, so a cached body stays right.
    if (row.has_domains && this.deps.identityClaims !== undefined) {
      const claims = await this.deps.identityClaims.forProfile(did);
      if (claims.domains.length > 0) profile.domains = claims.domains;
      if (claims.handle !== undefined) profile.handle = claims.handle;
    }
    return {
      profile,
      changeSeq: row.change_seq === null ? null : Number(row.change_seq),
      live: row.has_service_record || row.has_presence,
    };
  }

  async updateProfile(
    caller: AuthenticatedAgent,
    rawDid: string | undefined,
    update: UpdateProfileRequest,
  ): Promise<AgentProfile> {
    const current = await this.requireOwnActiveAgent(caller, rawDid);
    const { did } = current;
    assertProfileRules(update, '');
    await this.deps.schemas.assertPublishable(update.capabilities);
    const patch: AgentPatch = { updated_at: this.deps.clock.now() };
    if (update.name != null) patch.name = update.name;
    if (update.description != null) patch.description = update.description === '' ? null : update.description;
    if (update.avatar != null) patch.avatar = update.avatar === '' ? null : update.avatar;
    if (update.website != null) patch.website = update.website === '' ? null : update.website;
    if (update.capabilities != null)
      patch.capabilities = JSON.stringify(update.capabilities.map(normaliseCapability));
    if (update.tags != null) patch.tags = JSON.stringify(update.tags);
    assertProfileSize({ ...current, ...patch }, this.deps.profileMaxBytes);
    if (!(await updateAgentAndStamp(this.deps.writes, did, patch))) throw agentNotFound(did);
    return this.getProfile(did);
  }

  async deactivate(caller: AuthenticatedAgent, rawDid: string | undefined): Promise<DeactivateResponse> {
    const { did } = await this.requireOwnActiveAgent(caller, rawDid);
    const now = this.deps.clock.now();
    const changed = await updateAgentAndStamp(this.deps.writes, did, {
      status: 'deactivated',
      deactivated_at: now,
      updated_at: now,
    });
    if (!changed) throw agentNotFound(did);
    this.deps.telemetry.agentDeactivated({ did });
    return { did, status: 'deactivated', deactivated_at: now };
  }

  async getInvocationConfig(rawDid: string | undefined): Promise<InvocationConfig> {
    const row = await this.requireActiveAgent(rawDid);
    const config: InvocationConfig = {
      enabled: row.invocation_enabled === 1,
      delivery_mode: row.delivery_mode,
    };
    if (row.delivery_mode === 'webhook') config.probes = row.webhook_probes === 1;
    return config;
  }

  async updateInvocationConfig(
    caller: AuthenticatedAgent,
    rawDid: string | undefined,
    update: UpdateInvocationConfigRequest,
  ): Promise<OwnerInvocationConfig> {
    const current = await this.requireOwnActiveAgent(caller, rawDid);
    const { did } = current;
    const webhookUrl = update.webhook_url === undefined ? current.webhook_url : update.webhook_url || null;
    let webhookSecret =
      update.webhook_secret === undefined ? current.webhook_secret : update.webhook_secret || null;
    if (webhookUrl !== null) {
      assertHttpUrl('webhook_url', webhookUrl);
      try {
        await this.deps.webhookPolicy.checkConfiguredUrl(new URL(webhookUrl));
      } catch (error) {
        if (error instanceof ForbiddenWebhookTargetError) {
          throw new BadRequestError('WEBHOOK_URL_FORBIDDEN', `webhook_url is not allowed: ${error.message}`);
        }
        throw error;
      }
    }
    if (update.webhook_secret) assertWebhookSecret(update.webhook_secret);
    let generatedSecret: string | undefined;
    if (update.delivery_mode === 'webhook') {
      if (webhookUrl === null) {
        throw new BadRequestError(
          'WEBHOOK_URL_REQUIRED',
          'delivery_mode "webhook" needs a webhook_url (http:// or https://)',
        );
      }
      if (webhookSecret === null) {
        generatedSecret = `whsec_${randomBytes(32).toString('base64')}`;
        webhookSecret = generatedSecret;
      }
    }
    const saved = await updateAgentAndStamp(this.deps.writes, did, {
      invocation_enabled: update.enabled ? 1 : 0,
      delivery_mode: update.delivery_mode,
      webhook_url: webhookUrl,
      webhook_secret: webhookSecret,
      ...(update.probes === undefined ? {} : { webhook_probes: update.probes ? 1 : 0 }),
      updated_at: this.deps.clock.now(),
    });
    if (!saved) throw agentNotFound(did);
    if (webhookUrl !== null) await recordWebhookHost(this.deps.db, did, webhookUrl, this.deps.clock.now());
    const config: OwnerInvocationConfig = {
      enabled: update.enabled,
      delivery_mode: update.delivery_mode,
      webhook_url: webhookUrl,
    };
    if (generatedSecret !== undefined) config.webhook_secret = generatedSecret;
    if (update.delivery_mode === 'webhook') config.probes = update.probes ?? current.webhook_probes === 1;
    return config;
  }

  async paymentAddress(rawDid: string | undefined): Promise<PaymentAddress> {
    const row = await this.requireActiveAgent(rawDid);
    const parsed = requireDid(row.did, this.deps.didWebDomain);
    if (parsed.method !== 'pkh') {
      throw new NotFoundError(
        'PAYMENT_ADDRESS_UNAVAILABLE',
        'Payment addresses are derived from did:pkh DIDs; this agent has a did:web DID',
        'Payment address unavailable',
      );
    }
    return { chain_id: parsed.chainId, address: parsed.address, source: 'did' };
  }

  private async requireActiveAgent(rawDid: string | undefined): Promise<AgentRow> {
    const did = requireDid(rawDid, this.deps.didWebDomain).did;
    const row = await findActiveAgent(this.deps.db, did);
    if (row === undefined) throw agentNotFound(did);
    return row;
  }

  /** 404 before 403: an unknown or deactivated agent is not found, whoever asks. */
  private async requireOwnActiveAgent(
    caller: AuthenticatedAgent,
    rawDid: string | undefined,
  ): Promise<AgentRow> {
    const row = await this.requireActiveAgent(rawDid);
    if (row.did !== caller.did) {
      throw new ForbiddenError('NOT_OWNER', `The token belongs to ${caller.did}, not to ${row.did}`);
    }
    return row;
  }
}

/** Standard Webhooks form `whsec_<base64 key of 24-64 bytes>`, or any other 16-256 printable ASCII characters. */
function assertWebhookSecret(secret: string): void {
  if (!/^[\x21-\x7e]+$/.test(secret)) {
    throw new BadRequestError(
      'INVALID_WEBHOOK_SECRET',
      'webhook_secret must be printable ASCII without spaces',
    );
  }
  if (secret.length < LIMITS.webhookSecretMinLength || secret.length > LIMITS.webhookSecretMaxLength) {
    throw new BadRequestError(
      'INVALID_WEBHOOK_SECRET',
      `webhook_secret must be ${LIMITS.webhookSecretMinLength}-${LIMITS.webhookSecretMaxLength} characters`,
    );
  }
  if (secret.startsWith('whsec_')) {
    const body = secret.slice('whsec_'.length);
    const key = Buffer.from(body, 'base64');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body) || key.length < 24 || key.length > 64) {
      throw new BadRequestError(
        'INVALID_WEBHOOK_SECRET',
        'a whsec_ webhook_secret must carry 24-64 bytes of standard base64',
      );
    }
  }
}
