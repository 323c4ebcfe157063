import type { KeyObject } from 'node:crypto';
import path from 'node:path';

import { parseFederationSources, type FederationConfig } from './federation-config.js';
import { parseEd25519PrivateKey } from './private-keys.js';

export type { FederationConfig };

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export type DatabaseConfig =
  | {
      kind: 'sqlite';
      path: string;
      busyTimeoutMs?: number;
      /** Bytes of the database file SQLite reads through a memory map instead of read() calls; 0 turns it off. */
      mmapBytes?: number;
    }
  | {
      kind: 'postgres';
      url: string;
      poolSize: number;
      statementTimeoutMs: number;
      connectTimeoutMs: number;
      /** How long start-up keeps retrying a PostgreSQL that does not accept connections yet. */
      startupWaitSeconds?: number;
    };

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

export interface Config {
  port: number;
  host: string;
  database: DatabaseConfig;
  /** Base URL the registry is reached at; its host (and port) is the did:web domain. */
  publicUrl: string;
  /** did:web domain segment: host, with a port written `%3A<port>` as the did:web method requires. */
  didWebDomain: string;
  webhookAllowPrivateNetworks: boolean;
  /** Remote entries: what to import and follow, and the limits of each fetch (docs/federation.md). */
  federation: FederationConfig;
  /** Webhook deliveries in flight per target agent; more wait in that agent's queue (within their deadline). */
  webhookMaxConcurrencyPerAgent: number;
  /** Availability probes of webhook agents (docs/availability.md, "Probes of webhook agents"). */
  probes: ProbeConfig;
  logLevel: LogLevel;
  /** Ed25519 private key for tokens (given as JWK JSON or PKCS#8 PEM); when absent one is generated and persisted. */
  tokenSigningKey: KeyObject | undefined;
  /** Ed25519 private key for the transparency log's checkpoints (likewise); when absent one is generated and persisted. */
  logSigningKey: KeyObject | undefined;
  tokenTtlSeconds: number;
  /** Largest accepted request body in bytes, for every route except invoke. */
  bodyLimitBytes: number;
  trustProxy: boolean;
  /** Most reviews one reviewer may submit per window (counted in the database, so across nodes). */
  reviewRateLimit: number;
  reviewRateWindowSeconds: number;
  /** How often stored reputation scores are recomputed, so time decay shows without new reviews. */
  reputationRefreshSeconds: number;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`; when unset it is public. */
  metricsToken: string | undefined;
  /** The operator's secret for federation writes (resuming a stopped peer); unset: no such writes. */
  federationAdminToken: string | undefined;
  /** Refuse registrations whose signed message does not name this registry (`audience`). */
  requireRegistrationAudience: boolean;
  /** How often each node times out expired open tasks and forgets expired idempotency keys. */
  taskSweepSeconds: number;
  /** Memory for serialised profiles, checked against the database on every read; 0 turns the cache off. */
  profileCacheBytes: number;
  /** Epoch ms: until then tokens without `aud` and the login message without `audience` are accepted. */
  legacyAuthUntil: number;
  /** Registrations per client address, per /24 (IPv4) or /64 (IPv6) network, and per IPv6 /48, per window. */
  registrationRateLimit: number;
  registrationPrefixRateLimit: number;
  registrationIpv6SiteRateLimit: number;
  registrationRateWindowSeconds: number;
  /** Zero bits a registration's proof of work must reach (docs/operations.md); 0, the default, asks for none. */
  registrationPowBits: number;
  /** Largest stored profile (every field as stored, capabilities with their schemas), in bytes. */
  profileMaxBytes: number;
  /** How long a client has to send a whole request (headers and body); waiting for the answer is not counted. */
  requestTimeoutMs: number;
  /** Open connections one peer address may hold; 0 turns the bound off (it is off behind TRUST_PROXY). */
  maxConnectionsPerAddress: number;
  /** Browser origins besides PUBLIC_URL whose pages may call the MCP endpoints (serialised origins). */
  mcpAllowedOrigins: string[];
  /** What invocations may hold and send (docs/decisions.md, "Task bounds"). */
  taskBounds: TaskBoundsConfig;
  /** Other ARD registries' API bases, named to ARD clients as referrals (docs/ard.md, "Federation"). */
  ardReferrals: string[];
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

type Env = Record<string, string | undefined>;

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

const MIB = 1024 * 1024;

/** The largest map the bundled SQLite allows (SQLITE_MAX_MMAP_SIZE 0x7fff0000): the whole file up to 2 GB. */
const SQLITE_MMAP_MAX_MB = 2047;

/** SQLite's settings when not given: loadConfig's defaults, and the connection's for a config built by hand. */
export const SQLITE_DEFAULTS = {
  busyTimeoutMs: 5_000,
  mmapBytes: SQLITE_MMAP_MAX_MB * 2 ** 20,
} as const;

/**
 * End of the deprecation window for authentication without audience (CHANGELOG.md): about three
 * months after the release that added it, longer than any token issued before it lives (30 days).
 */
export const LEGACY_AUTH_UNTIL_DEFAULT = '2027-03-01';

/** The only reader of environment variables: every setting is parsed and checked here, at boot. */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };

  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return value;
  };

  const boolean = (name: string, fallback: boolean): boolean => {
    const raw = read(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (['true', '1', 'yes'].includes(raw)) return true;
    if (['false', '0', 'no'].includes(raw)) return false;
    problems.push(`${name} must be true or false, got "${raw}"`);
    return fallback;
  };

  /** A UTC date (`2027-03-01`, meaning its midnight) or date-time (`2027-03-01T12:00:00Z`), as epoch ms. */
  const instant = (name: string, fallback: string): number => {
    const raw = read(name) ?? fallback;
    const value = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?Z)?$/.test(raw)
      ? Date.parse(raw)
      : NaN;
    // Date.parse rolls 2027-02-30 over to March; a date that does not read back the same is refused.
    if (Number.isNaN(value) || new Date(value).toISOString().slice(0, 10) !== raw.slice(0, 10)) {
      problems.push(`${name} must be a UTC date like 2027-03-01 or 2027-03-01T12:00:00Z, got "${raw}"`);
      return Date.parse(fallback);
    }
    return value;
  };

  /** Parsed here, so a key that cannot sign fails as configuration, before the database is touched. */
  const signingKey = (name: string): KeyObject | undefined => {
    const raw = read(name);
    if (raw === undefined) return undefined;
    try {
      return parseEd25519PrivateKey(raw, name);
    } catch (error) {
      problems.push((error as Error).message);
      return undefined;
    }
  };

  const port = integer('PORT', 8080, 0, 65535);
  const host = read('HOST') ?? '0.0.0.0';

  const database = parseDatabaseUrl(read('DATABASE_URL') ?? 'sqlite:./data/registry.db', cwd, problems, {
    poolSize: integer('DATABASE_POOL_SIZE', 10, 1, 1000),
    statementTimeoutMs: integer('DATABASE_STATEMENT_TIMEOUT_MS', 10_000, 100, 600_000),
    connectTimeoutMs: integer('DATABASE_CONNECT_TIMEOUT_MS', 3_000, 100, 60_000),
    startupWaitSeconds: integer('DATABASE_STARTUP_WAIT_SECONDS', 30, 0, 600),
    busyTimeoutMs: integer('SQLITE_BUSY_TIMEOUT_MS', SQLITE_DEFAULTS.busyTimeoutMs, 0, 60_000),
    mmapBytes:
      integer('SQLITE_MMAP_MB', SQLITE_DEFAULTS.mmapBytes / 2 ** 20, 0, SQLITE_MMAP_MAX_MB) * 2 ** 20,
  });

  const publicUrlRaw = read('PUBLIC_URL') ?? `http://localhost:${port}`;
  let publicUrl = publicUrlRaw;
  let didWebDomain = 'localhost';
  try {
    const url = new URL(publicUrlRaw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      problems.push(`PUBLIC_URL must be an http(s) URL, got "${publicUrlRaw}"`);
    } else if (url.pathname !== '/' || url.search !== '' || url.hash !== '') {
      problems.push(`PUBLIC_URL must be an origin without path, query or fragment, got "${publicUrlRaw}"`);
    }
    publicUrl = url.origin;
    didWebDomain = url.port === '' ? url.hostname : `${url.hostname}%3A${url.port}`;
  } catch {
    problems.push(`PUBLIC_URL must be a URL, got "${publicUrlRaw}"`);
  }

  const mcpAllowedOrigins: string[] = [];
  for (const entry of (read('MCP_ALLOWED_ORIGINS') ?? '').split(',')) {
    const given = entry.trim();
    if (given === '') continue;
    try {
      const url = new URL(given);
      // An origin in any spelling (capitals, default port, trailing slash), but nothing beyond it.
      const originOnly =
        url.pathname === '/' &&
        url.search === '' &&
        url.hash === '' &&
        url.username === '' &&
        url.password === '';
      if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !originOnly || /[?#]/.test(given))
        throw new Error('not an origin');
      mcpAllowedOrigins.push(url.origin);
    } catch {
      problems.push(
        `MCP_ALLOWED_ORIGINS must be comma-separated http(s) origins such as https://app.example, got "${given}"`,
      );
    }
  }

  const ardReferrals = parseArdReferrals(read('ARD_REFERRALS'), publicUrl, problems);
  const federationSources = parseFederationSources(read, problems);

  const logLevelRaw = (read('LOG_LEVEL') ?? 'info').toLowerCase();
  const logLevel = LOG_LEVELS.find((level) => level === logLevelRaw);
  if (logLevel === undefined) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const refreshSeconds = integer('FEDERATION_REFRESH_SECONDS', 15 * 60, 10, 7 * 24 * 60 * 60);

  const config: Config = {
    port,
    host,
    database,
    publicUrl,
    didWebDomain,
    webhookAllowPrivateNetworks: boolean('WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    federation: {
      ...federationSources,
      refreshMs: refreshSeconds * 1000,
      fetchTimeoutMs: integer('FEDERATION_FETCH_TIMEOUT_SECONDS', 10, 1, 300) * 1000,
      maxResponseBytes: integer('FEDERATION_MAX_RESPONSE_KB', 1024, 16, 64 * 1024) * 1024,
      // A source never runs into the next round: its deadline is at most the interval.
      sourceDeadlineMs:
        Math.min(integer('FEDERATION_SOURCE_DEADLINE_SECONDS', 120, 1, 7 * 24 * 60 * 60), refreshSeconds) *
        1000,
      peerCatchUpEntries: integer('FEDERATION_PEER_CATCHUP_ENTRIES', 65_536, 256, 100_000_000),
      peerCatchUpBytes: integer('FEDERATION_PEER_CATCHUP_MB', 64, 1, 64 * 1024) * 1024 * 1024,
      a2aAllowHttpTrustRoots: boolean('FEDERATION_A2A_ALLOW_HTTP_TRUST_ROOTS', false),
      maxEntriesPerPeer: integer('FEDERATION_MAX_ENTRIES_PER_PEER', 100_000, 1, 10_000_000),
      maxEntriesPerMcpRegistry: integer('FEDERATION_MAX_ENTRIES_PER_MCP_REGISTRY', 10_000, 1, 1_000_000),
      expireAfterRounds: integer('FEDERATION_EXPIRE_AFTER_ROUNDS', 24, 1, 10_000),
    },
    webhookMaxConcurrencyPerAgent: integer('WEBHOOK_MAX_CONCURRENCY_PER_AGENT', 32, 1, 1000),
    probes: {
      intervalMs: integer('PROBE_INTERVAL_SECONDS', 300, 0, 24 * 60 * 60) * 1000,
      maxPerTick: integer('PROBE_MAX_PER_TICK', 2000, 1, 1_000_000),
      maxConcurrent: integer('PROBE_MAX_CONCURRENT', 64, 1, 10_000),
      timeoutMs: integer('PROBE_TIMEOUT_SECONDS', 10, 1, 120) * 1000,
    },
    logLevel: logLevel ?? 'info',
    tokenSigningKey: signingKey('TOKEN_SIGNING_KEY'),
    logSigningKey: signingKey('LOG_SIGNING_KEY'),
    tokenTtlSeconds: integer('TOKEN_TTL_SECONDS', 24 * 60 * 60, 60, 30 * 24 * 60 * 60),
    bodyLimitBytes: integer('BODY_LIMIT_BYTES', 256 * 1024, 1024, 16 * 1024 * 1024),
    trustProxy: boolean('TRUST_PROXY', false),
    reviewRateLimit: integer('REVIEW_RATE_LIMIT', 10, 1, 100_000),
    reviewRateWindowSeconds: integer('REVIEW_RATE_WINDOW_SECONDS', 60 * 60, 1, 30 * 24 * 60 * 60),
    reputationRefreshSeconds: integer('REPUTATION_REFRESH_SECONDS', 60 * 60, 60, 7 * 24 * 60 * 60),
    metricsToken: read('METRICS_TOKEN'),
    federationAdminToken: read('FEDERATION_ADMIN_TOKEN'),
    requireRegistrationAudience: boolean('REQUIRE_REGISTRATION_AUDIENCE', false),
    taskSweepSeconds: integer('TASK_SWEEP_SECONDS', 30, 1, 3600),
    profileCacheBytes: integer('PROFILE_CACHE_MB', 64, 0, 16_384) * 1024 * 1024,
    legacyAuthUntil: instant('LEGACY_AUTH_UNTIL', LEGACY_AUTH_UNTIL_DEFAULT),
    registrationRateLimit: integer('REGISTRATION_RATE_LIMIT', 60, 1, 1_000_000),
    registrationPrefixRateLimit: integer('REGISTRATION_PREFIX_RATE_LIMIT', 600, 1, 1_000_000),
    registrationIpv6SiteRateLimit: integer('REGISTRATION_IPV6_48_RATE_LIMIT', 1200, 1, 1_000_000),
    registrationRateWindowSeconds: integer('REGISTRATION_RATE_WINDOW_SECONDS', 60 * 60, 1, 30 * 24 * 60 * 60),
    registrationPowBits: integer('REGISTRATION_POW_BITS', 0, 0, 32),
    profileMaxBytes: integer('PROFILE_MAX_KB', 128, 16, 1024) * 1024,
    requestTimeoutMs: integer('REQUEST_TIMEOUT_SECONDS', 30, 1, 3600) * 1000,
    maxConnectionsPerAddress: integer('MAX_CONNECTIONS_PER_ADDRESS', 256, 0, 1_000_000),
    mcpAllowedOrigins,
    ardReferrals,
    taskBounds: {
      maxOpenPerCaller: integer('TASK_MAX_OPEN_PER_CALLER', 64, 1, 100_000),
      maxOpenBytesPerCaller: integer('TASK_MAX_OPEN_MB_PER_CALLER', 32, 1, 1_000_000) * MIB,
      maxOpenPerTarget: integer('TASK_MAX_OPEN_PER_TARGET', 1024, 1, 1_000_000),
      maxOpenBytesPerTarget: integer('TASK_MAX_OPEN_MB_PER_TARGET', 128, 1, 1_000_000) * MIB,
      maxOpenBytesTotal: integer('TASK_MAX_OPEN_MB_TOTAL', 4096, 1, 100_000_000) * MIB,
      invokeRateLimit: integer('INVOKE_RATE_LIMIT', 10_000, 1, 10_000_000),
      invokeRateBytes: integer('INVOKE_RATE_MB', 256, 1, 10_000_000) * MIB,
      invokeRateBytesPerAddress: integer('INVOKE_RATE_MB_PER_ADDRESS', 256, 1, 10_000_000) * MIB,
      invokeRateBytesPerNetwork: integer('INVOKE_RATE_MB_PER_NETWORK', 1024, 1, 10_000_000) * MIB,
      invokeRateWindowMs: integer('INVOKE_RATE_WINDOW_SECONDS', 60 * 60, 1, 24 * 60 * 60) * 1000,
      maxPollsPerAgent: integer('TASK_MAX_POLLS_PER_AGENT', 8, 1, 1000),
      payloadRetentionMs:
        integer('TASK_PAYLOAD_RETENTION_SECONDS', 24 * 60 * 60, 60, 30 * 24 * 60 * 60) * 1000,
      rowRetentionMs: integer('TASK_RETENTION_DAYS', 35, 1, 3650) * 24 * 60 * 60 * 1000,
    },
  };
  if (config.taskBounds.rowRetentionMs < config.taskBounds.payloadRetentionMs)
    problems.push(
      'TASK_RETENTION_DAYS must be at least TASK_PAYLOAD_RETENTION_SECONDS (rows outlive payloads)',
    );
  if (config.metricsToken !== undefined && config.metricsToken.length < 16)
    problems.push('METRICS_TOKEN must be at least 16 characters (or unset, to make GET /metrics public)');
  if (config.federationAdminToken !== undefined) {
    if (config.federationAdminToken.length < 16)
      problems.push('FEDERATION_ADMIN_TOKEN must be at least 16 characters (or unset: no operator writes)');
    else if (config.federationAdminToken === config.metricsToken)
      problems.push('FEDERATION_ADMIN_TOKEN must differ from METRICS_TOKEN (that one only reads)');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

interface DatabaseTuning {
  poolSize: number;
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  startupWaitSeconds: number;
  busyTimeoutMs: number;
  mmapBytes: number;
}

function parseDatabaseUrl(
  raw: string,
  cwd: string,
  problems: string[],
  tuning: DatabaseTuning,
): DatabaseConfig {
  const { busyTimeoutMs, mmapBytes, ...postgres } = tuning;
  if (raw.startsWith('sqlite:')) {
    const file = raw.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (file === '') {
      problems.push('DATABASE_URL "sqlite:" needs a file path, e.g. sqlite:./data/registry.db');
      return { kind: 'sqlite', path: '', busyTimeoutMs, mmapBytes };
    }
    const resolved = file === ':memory:' ? file : path.resolve(cwd, file);
    return { kind: 'sqlite', path: resolved, busyTimeoutMs, mmapBytes };
  }
  if (raw.startsWith('postgres://') || raw.startsWith('postgresql://'))
    return { kind: 'postgres', url: raw, ...postgres };
  problems.push(`DATABASE_URL must start with sqlite: or postgres://, got "${raw}"`);
  return { kind: 'sqlite', path: '', busyTimeoutMs, mmapBytes };
}

/** At most this many referrals: every referrals answer carries them all. */
export const ARD_REFERRALS_MAX = 20;

/**
 * ARD_REFERRALS: comma-separated ARD API bases of other registries (the `url` of the
 * `application/ai-registry+json` entry each publishes), as `https://host[:port]/path` without a trailing
 * slash. Each must be a URL a client may follow: http(s), no credentials, query or fragment, a host name
 * that can be an ARD publisher segment, and not this registry's own.
 */
function parseArdReferrals(raw: string | undefined, publicUrl: string, problems: string[]): string[] {
  const bases: string[] = [];
  for (const entry of (raw ?? '').split(',')) {
    const given = entry.trim();
    if (given === '') continue;
    let url: URL;
    try {
      url = new URL(given);
    } catch {
      problems.push(
        `ARD_REFERRALS must be comma-separated http(s) URLs of ARD registry APIs, got "${given}"`,
      );
      continue;
    }
    const base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      problems.push(`ARD_REFERRALS must list http(s) URLs, got "${given}"`);
    } else if (url.username !== '' || url.password !== '' || url.search !== '' || /[?#]/.test(given)) {
      problems.push(`ARD_REFERRALS URLs may not carry credentials, a query or a fragment, got "${given}"`);
    } else if (!/^[a-z0-9.-]+$/.test(url.hostname)) {
      problems.push(
        `ARD_REFERRALS URLs need a host name (an ARD publisher is a domain name, not an IP v6 address), got "${given}"`,
      );
    } else if (base === `${publicUrl}/ard`) {
      problems.push(`ARD_REFERRALS may not name this registry's own ARD API (${base})`);
    } else if (bases.includes(base)) {
      problems.push(`ARD_REFERRALS names ${base} twice`);
    } else bases.push(base);
  }
  if (bases.length > ARD_REFERRALS_MAX) {
    problems.push(`ARD_REFERRALS lists ${bases.length} registries; at most ${ARD_REFERRALS_MAX}`);
  }
  return bases.slice(0, ARD_REFERRALS_MAX);
}
