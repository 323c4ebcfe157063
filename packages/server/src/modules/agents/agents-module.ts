import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../kernel/config.js';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import type { DatabaseHandle } from '../../db/connect.js';
import { transactionRunner, type TransactionRunner } from '../../db/group-commit.js';
import type { RegistryMetrics } from '../../telemetry/prometheus.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import type { TokenService } from '../identity/tokens.js';
import { AgentLabelService } from './agent-labels.js';
import { AgentService, type AgentServiceDeps } from './agents.js';
import { AuthenticationService } from './authentication.js';
import { ChangeFeedService } from './change-feed.js';
import { DidResolutionService } from './did-resolution.js';
import { ProfileCache } from './profile-cache.js';
import { RegistrationService } from './registration.js';
import { RegistrationLimiter } from './registration-limits.js';

export interface AgentsModuleDeps extends Pick<
  AgentServiceDeps,
  'serviceRecord' | 'availability' | 'schemas' | 'remote' | 'keyRecoveries' | 'identityClaims' | 'suspensions'
> {
  database: DatabaseHandle;
  clock: Clock;
  telemetry: Telemetry;
  metrics: RegistryMetrics;
  config: Config;
  tokens: TokenService;
  webhookPolicy: WebhookNetworkPolicy;
}

export interface AgentsModule {
  registration: RegistrationService;
  /** How registrations write (group commit on SQLite). */
  agentWrites: TransactionRunner;
  authentication: AuthenticationService;
  agents: AgentService;
  didResolution: DidResolutionService;
  /** The change feed mirrors follow (GET /api/agents/changes). */
  changeFeed: ChangeFeedService;
  agentLabels: AgentLabelService;
  /** Serialised profiles; emptied when the database turns out restored (discovery's index follower). */
  profileCache: ProfileCache;
}

export function createAgentsModule(deps: AgentsModuleDeps): AgentsModule {
  const { database, clock, telemetry, config, tokens, schemas } = deps;
  const { db } = database;
  const { didWebDomain, publicUrl } = config.identity;
  const profileCache = new ProfileCache(config.search.profileCacheBytes);
  deps.metrics.watchProfileCache(profileCache);
  const agentWrites = transactionRunner(db, database.dialect);
  return {
    agentWrites,
    profileCache,
    registration: new RegistrationService({
      db,
      writes: agentWrites,
      telemetry,
      clock,
      tokens,
      didWebDomain,
      audience: publicUrl,
      requireAudience: config.registration.requireAudience,
      schemas,
      limiter: new RegistrationLimiter({
        perAddress: config.registration.rateLimit,
        perPrefix: config.registration.prefixRateLimit,
        perIpv6Site: config.registration.ipv6SiteRateLimit,
        windowMs: config.registration.rateWindowSeconds * 1000,
      }),
      profileMaxBytes: config.registration.profileMaxBytes,
      proofOfWorkBits: config.registration.powBits,
    }),
    authentication: new AuthenticationService({
      db,
      clock,
      tokens,
      didWebDomain,
      audience: publicUrl,
      telemetry,
      legacyAuthUntil: config.identity.legacyAuthUntil,
    }),
    agents: new AgentService({
      db,
      writes: agentWrites,
      telemetry,
      clock,
      didWebDomain,
      publicUrl,
      webhookPolicy: deps.webhookPolicy,
      schemas,
      serviceRecord: deps.serviceRecord,
      availability: deps.availability,
      profileCache,
      profileMaxBytes: config.registration.profileMaxBytes,
      remote: deps.remote,
      ...(deps.keyRecoveries === undefined ? {} : { keyRecoveries: deps.keyRecoveries }),
      ...(deps.identityClaims === undefined ? {} : { identityClaims: deps.identityClaims }),
      ...(deps.suspensions === undefined ? {} : { suspensions: deps.suspensions }),
    }),
    didResolution: new DidResolutionService({ db, didWebDomain, publicUrl }),
    changeFeed: new ChangeFeedService({ db, publicUrl }),
    agentLabels: new AgentLabelService({ db }),
  };
}
