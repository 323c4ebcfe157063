import { readBackupSchedule, type BackupSchedule } from './backup-config.js';
import { parseFederationSources, type FederationConfig } from './federation-config.js';
import { readSettings, type Env } from './read-settings.js';
import {
  parseArdReferrals,
  parseDatabaseUrl,
  parseOrigins,
  parsePublicUrl,
  type DatabaseConfig,
} from './config-parsers.js';

export { ARD_REFERRALS_MAX, type DatabaseConfig } from './config-parsers.js';
import type { LOG_LEVELS } from './settings.js';
import { SETTINGS, SQLITE_MMAP_MAX_MB, type SettingValues } from './settings.js';

export type { BackupSchedule, FederationConfig };
export { LEGACY_AUTH_UNTIL_DEFAULT } from './settings.js';

export type LogLevel = (typeof LOG_LEVELS)[number];

export interface ProbeConfig {
  /** Each probed webhook agent is probed about once per interval; 0 turns probing off. */
  intervalMs: number;
  /** Probes a node claims per tick (every few seconds): the bound on work per interval. */
  maxPerTick: number;
  /** Probes in flight at once on one node. */
  maxConcurrent: number;
  /** A probe not answered within this is a failure. */
  timeoutMs: number;
}

/** The configuration, grouped by the sections of the settings (kernel/settings.ts), with units applied. */
export interface Config {
  network: {
    port: SettingValues['PORT'];
    host: SettingValues['HOST'];
    trustProxy: SettingValues['TRUST_PROXY'];
    /** Largest accepted request body in bytes, for every route except invoke. */
    bodyLimitBytes: SettingValues['BODY_LIMIT_BYTES'];
    /** How long a client has to send a whole request (headers and body); waiting for the answer is not counted. */
    requestTimeoutMs: number;
    /** Open connections one peer address may hold; 0 turns the bound off (it is off behind TRUST_PROXY). */
    maxConnectionsPerAddress: SettingValues['MAX_CONNECTIONS_PER_ADDRESS'];
    /** Browser origins besides PUBLIC_URL whose pages may call the MCP endpoints (serialised origins). */
    mcpAllowedOrigins: SettingValues['MCP_ALLOWED_ORIGINS'];
    /** Other ARD registries' API bases, named to ARD clients as referrals (docs/ard.md, "Federation"). */
    ardReferrals: SettingValues['ARD_REFERRALS'];
  };
  database: DatabaseConfig;
  identity: {
    /** Base URL the registry is reached at; its host (and port) is the did:web domain. */
    publicUrl: string;
    /** did:web domain segment: host, with a port written `%3A<port>` as the did:web method requires. */
    didWebDomain: string;
    /** Ed25519 private key for tokens; when absent one is generated and persisted. */
    tokenSigningKey: SettingValues['TOKEN_SIGNING_KEY'];
    /** Ed25519 private key for the transparency log's checkpoints; when absent one is generated and persisted. */
    logSigningKey: SettingValues['LOG_SIGNING_KEY'];
    tokenTtlSeconds: SettingValues['TOKEN_TTL_SECONDS'];
    /** Epoch ms: until then tokens without `aud` and the login message without `audience` are accepted. */
    legacyAuthUntil: SettingValues['LEGACY_AUTH_UNTIL'];
    /** KEY_RECOVERY_HOURS in milliseconds: how long a started recovery waits, public, before it finishes. */
    keyRecoveryMs: number;
    /** Key rotations and recovery requests one agent may make per registration window. */
    keyChangeRateLimit: SettingValues['KEY_CHANGE_RATE_LIMIT'];
    /** Domain claims and handles (docs/identity.md, "Domains and handles"). */
    domains: {
      recheckMs: number;
      /** DOMAIN_DNS_SERVERS; empty: the system's resolvers. */
      dnsServers: string[];
      /** DOMAIN_PROOF_ALLOW_HTTP: http:// proofs and ports in domains, for development and tests. */
      allowHttp: boolean;
    };
  };
  registration: {
    /** Refuse registrations whose signed message does not name this registry (`audience`). */
    requireAudience: SettingValues['REQUIRE_REGISTRATION_AUDIENCE'];
    /** Registrations per client address, per /24 (IPv4) or /64 (IPv6) network, and per IPv6 /48, per window. */
    rateLimit: SettingValues['REGISTRATION_RATE_LIMIT'];
    prefixRateLimit: SettingValues['REGISTRATION_PREFIX_RATE_LIMIT'];
    ipv6SiteRateLimit: SettingValues['REGISTRATION_IPV6_48_RATE_LIMIT'];
    rateWindowSeconds: SettingValues['REGISTRATION_RATE_WINDOW_SECONDS'];
    /** Zero bits a registration's proof of work must reach (docs/operations.md); 0, the default, asks for none. */
    powBits: SettingValues['REGISTRATION_POW_BITS'];
    /** Largest stored profile (every field as stored, capabilities with their schemas), in bytes. */
    profileMaxBytes: number;
  };
  /** What invocations may hold and send (docs/decisions/invocation.md, "Open tasks and open bytes per caller and per target"), and how tasks are delivered and swept. */
  tasks: TaskBoundsConfig & {
    /** How often each node times out expired open tasks and forgets expired idempotency keys. */
    sweepSeconds: SettingValues['TASK_SWEEP_SECONDS'];
    /** Webhook deliveries in flight per target agent; more wait in that agent's queue (within their deadline). */
    webhookMaxConcurrencyPerAgent: SettingValues['WEBHOOK_MAX_CONCURRENCY_PER_AGENT'];
    /** ALLOW_PRIVATE_NETWORKS, or its earlier name WEBHOOK_ALLOW_PRIVATE_NETWORKS. */
    webhookAllowPrivateNetworks: boolean;
  };
  reviews: {
    /** Most reviews one reviewer may submit per window (counted in the database, so across nodes). */
    rateLimit: SettingValues['REVIEW_RATE_LIMIT'];
    rateWindowSeconds: SettingValues['REVIEW_RATE_WINDOW_SECONDS'];
    /** How often stored reputation scores are recomputed, so time decay shows without new reviews. */
    reputationRefreshSeconds: SettingValues['REPUTATION_REFRESH_SECONDS'];
  };
  /** Abuse reports (docs/moderation.md): counted in the database, so across nodes. */
  reports: {
    perReporter: SettingValues['REPORT_RATE_LIMIT'];
    perAddress: SettingValues['REPORT_RATE_LIMIT_PER_ADDRESS'];
    windowMs: number;
  };
  search: {
    /** Memory for serialised profiles, checked against the database on every read; 0 turns the cache off. */
    profileCacheBytes: number;
  };
  /** Availability probes of webhook agents (docs/availability.md, "Probes of webhook agents"). */
  probes: ProbeConfig;
  /** Probes of imported MCP servers and A2A card endpoints (docs/federation.md, "Observed"). */
  entryProbes: ProbeConfig;
  /** Remote entries: what to import and follow, and the limits of each fetch (docs/federation.md). */
  federation: FederationConfig & {
    /** The operator's secret for federation writes (resuming a stopped peer); unset: no such writes. */
    adminToken: SettingValues['FEDERATION_ADMIN_TOKEN'];
  };
  /** Watches: their bounds, and how their deliveries are sent and retried (docs/watches.md). */
  watches: {
    maxPerAgent: number;
    maxPerTarget: number;
    rateLimit: number;
    rateWindowMs: number;
    deliveryAttempts: number;
    retryBaseMs: number;
    deliveryTimeoutMs: number;
    maxPerTick: number;
    tickMs: number;
    availabilityMs: number;
  };
  operations: {
    logLevel: LogLevel;
    /** When set, GET /metrics needs `Authorization: Bearer <token>`; when unset it is public. */
    metricsToken: SettingValues['METRICS_TOKEN'];
    /** Backups taken by the nodes themselves (docs/operations.md, "Scheduled backups"); undefined: off. */
    backups: BackupSchedule | undefined;
  };
}

export interface TaskBoundsConfig {
  /** Open (pending or processing) tasks one caller may have, and the input bytes they hold. */
  maxOpenPerCaller: number;
  maxOpenBytesPerCaller: number;
  /** Open tasks waiting for one target agent, and their input bytes. */
  maxOpenPerTarget: number;
  maxOpenBytesPerTarget: number;
  /** Input bytes all open tasks of the registry may hold; past it, invocations wait (503). */
  maxOpenBytesTotal: number;
  /** Invocations and input bytes one caller may send per window, counted in the database. */
  invokeRateLimit: number;
  invokeRateBytes: number;
  /**
   * Input bytes the callers at one client address, and at one network (/24 IPv4; /64 and /48 IPv6),
   * may send per window together, counted in the database: new agents do not bring new quota.
   */
  invokeRateBytesPerAddress: number;
  invokeRateBytesPerNetwork: number;
  invokeRateWindowMs: number;
  /** GET /api/agent/tasks requests in progress at once per agent on one node. */
  maxPollsPerAgent: number;
  /** How long input, output and error stay after a task ends; then the row stays without them. */
  payloadRetentionMs: number;
  /** How long after it ended a task row is deleted. */
  rowRetentionMs: number;
}

export class ConfigError extends Error {
  constructor(messages: string[]) {
    super(`Invalid configuration:\n  - ${messages.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const MIB = 1024 * 1024;

/** SQLite's settings when not given: loadConfig's defaults, and the connection's for a config built by hand. */
export const SQLITE_DEFAULTS = {
  busyTimeoutMs: SETTINGS.SQLITE_BUSY_TIMEOUT_MS.default,
  mmapBytes: SQLITE_MMAP_MAX_MB * 2 ** 20,
} as const;

/** The only reader of environment variables: every declared setting is parsed and checked here, at boot. */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const problems: string[] = [];
  const v = readSettings(env, problems);
  const database = parseDatabaseUrl(v.DATABASE_URL, cwd, problems, {
    poolSize: v.DATABASE_POOL_SIZE,
    statementTimeoutMs: v.DATABASE_STATEMENT_TIMEOUT_MS,
    connectTimeoutMs: v.DATABASE_CONNECT_TIMEOUT_MS,
    startupWaitSeconds: v.DATABASE_STARTUP_WAIT_SECONDS,
    busyTimeoutMs: v.SQLITE_BUSY_TIMEOUT_MS,
    mmapBytes: v.SQLITE_MMAP_MB * 2 ** 20,
  });
  const { publicUrl, didWebDomain } = parsePublicUrl(v.PUBLIC_URL ?? `http://localhost:${v.PORT}`, problems);
  const config: Config = {
    network: {
      port: v.PORT,
      host: v.HOST,
      trustProxy: v.TRUST_PROXY,
      bodyLimitBytes: v.BODY_LIMIT_BYTES,
      requestTimeoutMs: v.REQUEST_TIMEOUT_SECONDS * 1000,
      maxConnectionsPerAddress: v.MAX_CONNECTIONS_PER_ADDRESS,
      mcpAllowedOrigins: parseOrigins(v.MCP_ALLOWED_ORIGINS, problems),
      ardReferrals: parseArdReferrals(v.ARD_REFERRALS, publicUrl, problems),
    },
    database,
    identity: {
      publicUrl,
      didWebDomain,
      tokenSigningKey: v.TOKEN_SIGNING_KEY,
      logSigningKey: v.LOG_SIGNING_KEY,
      tokenTtlSeconds: v.TOKEN_TTL_SECONDS,
      legacyAuthUntil: v.LEGACY_AUTH_UNTIL,
      keyRecoveryMs: v.KEY_RECOVERY_HOURS * 60 * 60 * 1000,
      keyChangeRateLimit: v.KEY_CHANGE_RATE_LIMIT,
      domains: {
        recheckMs: v.DOMAIN_RECHECK_SECONDS * 1000,
        dnsServers: v.DOMAIN_DNS_SERVERS,
        allowHttp: v.DOMAIN_PROOF_ALLOW_HTTP,
      },
    },
    registration: {
      requireAudience: v.REQUIRE_REGISTRATION_AUDIENCE,
      rateLimit: v.REGISTRATION_RATE_LIMIT,
      prefixRateLimit: v.REGISTRATION_PREFIX_RATE_LIMIT,
      ipv6SiteRateLimit: v.REGISTRATION_IPV6_48_RATE_LIMIT,
      rateWindowSeconds: v.REGISTRATION_RATE_WINDOW_SECONDS,
      powBits: v.REGISTRATION_POW_BITS,
      profileMaxBytes: v.PROFILE_MAX_KB * 1024,
    },
    tasks: {
      maxOpenPerCaller: v.TASK_MAX_OPEN_PER_CALLER,
      maxOpenBytesPerCaller: v.TASK_MAX_OPEN_MB_PER_CALLER * MIB,
      maxOpenPerTarget: v.TASK_MAX_OPEN_PER_TARGET,
      maxOpenBytesPerTarget: v.TASK_MAX_OPEN_MB_PER_TARGET * MIB,
      maxOpenBytesTotal: v.TASK_MAX_OPEN_MB_TOTAL * MIB,
      invokeRateLimit: v.INVOKE_RATE_LIMIT,
      invokeRateBytes: v.INVOKE_RATE_MB * MIB,
      invokeRateBytesPerAddress: v.INVOKE_RATE_MB_PER_ADDRESS * MIB,
      invokeRateBytesPerNetwork: v.INVOKE_RATE_MB_PER_NETWORK * MIB,
      invokeRateWindowMs: v.INVOKE_RATE_WINDOW_SECONDS * 1000,
      maxPollsPerAgent: v.TASK_MAX_POLLS_PER_AGENT,
      payloadRetentionMs: v.TASK_PAYLOAD_RETENTION_SECONDS * 1000,
      rowRetentionMs: v.TASK_RETENTION_DAYS * 24 * 60 * 60 * 1000,
      sweepSeconds: v.TASK_SWEEP_SECONDS,
      webhookMaxConcurrencyPerAgent: v.WEBHOOK_MAX_CONCURRENCY_PER_AGENT,
      webhookAllowPrivateNetworks: v.ALLOW_PRIVATE_NETWORKS || v.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    },
    reviews: {
      rateLimit: v.REVIEW_RATE_LIMIT,
      rateWindowSeconds: v.REVIEW_RATE_WINDOW_SECONDS,
      reputationRefreshSeconds: v.REPUTATION_REFRESH_SECONDS,
    },
    reports: {
      perReporter: v.REPORT_RATE_LIMIT,
      perAddress: v.REPORT_RATE_LIMIT_PER_ADDRESS,
      windowMs: v.REPORT_RATE_WINDOW_SECONDS * 1000,
    },
    search: { profileCacheBytes: v.PROFILE_CACHE_MB * MIB },
    probes: {
      intervalMs: v.PROBE_INTERVAL_SECONDS * 1000,
      maxPerTick: v.PROBE_MAX_PER_TICK,
      maxConcurrent: v.PROBE_MAX_CONCURRENT,
      timeoutMs: v.PROBE_TIMEOUT_SECONDS * 1000,
    },
    entryProbes: {
      intervalMs: v.FEDERATION_PROBE_INTERVAL_SECONDS * 1000,
      maxPerTick: v.FEDERATION_PROBE_MAX_PER_TICK,
      maxConcurrent: v.FEDERATION_PROBE_MAX_CONCURRENT,
      timeoutMs: v.FEDERATION_PROBE_TIMEOUT_SECONDS * 1000,
    },
    federation: {
      ...parseFederationSources(v, problems),
      refreshMs: v.FEDERATION_REFRESH_SECONDS * 1000,
      fetchTimeoutMs: v.FEDERATION_FETCH_TIMEOUT_SECONDS * 1000,
      maxResponseBytes: v.FEDERATION_MAX_RESPONSE_KB * 1024,
      // A source never runs into the next round: its deadline is at most the interval.
      sourceDeadlineMs: Math.min(v.FEDERATION_SOURCE_DEADLINE_SECONDS, v.FEDERATION_REFRESH_SECONDS) * 1000,
      peerCatchUpEntries: v.FEDERATION_PEER_CATCHUP_ENTRIES,
      peerCatchUpBytes: v.FEDERATION_PEER_CATCHUP_MB * MIB,
      a2aAllowHttpTrustRoots: v.FEDERATION_A2A_ALLOW_HTTP_TRUST_ROOTS,
      maxEntriesPerPeer: v.FEDERATION_MAX_ENTRIES_PER_PEER,
      maxEntriesPerMcpRegistry: v.FEDERATION_MAX_ENTRIES_PER_MCP_REGISTRY,
      expireAfterRounds: v.FEDERATION_EXPIRE_AFTER_ROUNDS,
      adminToken: v.FEDERATION_ADMIN_TOKEN,
    },
    watches: {
      maxPerAgent: v.WATCH_MAX_PER_AGENT,
      maxPerTarget: v.WATCH_MAX_PER_TARGET,
      rateLimit: v.WATCH_RATE_LIMIT,
      rateWindowMs: v.WATCH_RATE_WINDOW_SECONDS * 1000,
      deliveryAttempts: v.WATCH_DELIVERY_ATTEMPTS,
      retryBaseMs: v.WATCH_RETRY_BASE_MS,
      deliveryTimeoutMs: v.WATCH_DELIVERY_TIMEOUT_SECONDS * 1000,
      maxPerTick: v.WATCH_MAX_PER_TICK,
      tickMs: v.WATCH_TICK_MS,
      availabilityMs: v.WATCH_AVAILABILITY_SECONDS * 1000,
    },
    operations: {
      logLevel: v.LOG_LEVEL,
      metricsToken: v.METRICS_TOKEN,
      backups: readBackupSchedule(v, problems),
    },
  };
  if (config.tasks.rowRetentionMs < config.tasks.payloadRetentionMs)
    problems.push(
      'TASK_RETENTION_DAYS must be at least TASK_PAYLOAD_RETENTION_SECONDS (rows outlive payloads)',
    );
  const { metricsToken } = config.operations;
  const { adminToken } = config.federation;
  if (metricsToken !== undefined && metricsToken.length < 16)
    problems.push('METRICS_TOKEN must be at least 16 characters (or unset, to make GET /metrics public)');
  if (adminToken !== undefined) {
    if (adminToken.length < 16)
      problems.push('FEDERATION_ADMIN_TOKEN must be at least 16 characters (or unset: no operator writes)');
    else if (adminToken === metricsToken)
      problems.push('FEDERATION_ADMIN_TOKEN must differ from METRICS_TOKEN (that one only reads)');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
