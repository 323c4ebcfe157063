import type { KeyObject } from 'node:crypto';

/**
 * Every environment variable the registry reads, declared once: its section, type, default, range and
 * meaning. loadConfig reads them from here, the typo detector knows them from here, and the settings
 * tables of README.md and docs/operations.md are written from here (`npm run docs:settings`).
 */

/** The sections settings are grouped in: `Config`'s groups, and the headings of docs/operations.md. */
export const SETTING_SECTIONS = {
  network: 'Network and HTTP',
  database: 'Database (SQLite, PostgreSQL)',
  identity: 'Identity and tokens',
  registration: 'Registration',
  tasks: 'Invocation and tasks',
  reviews: 'Reviews and reputation',
  search: 'Search and caches',
  probes: 'Availability probes',
  federation: 'Federation',
  watches: 'Watches',
  operations: 'Operations and logs',
} as const;

export type SettingSection = keyof typeof SETTING_SECTIONS;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The largest map the bundled SQLite allows (SQLITE_MAX_MMAP_SIZE 0x7fff0000): the whole file up to 2 GB. */
export const SQLITE_MMAP_MAX_MB = 2047;

/**
 * End of the deprecation window for authentication without audience (CHANGELOG.md): about three
 * months after the release that added it, longer than any token issued before it lives (30 days).
 */
export const LEGACY_AUTH_UNTIL_DEFAULT = '2027-03-01';

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

interface Common {
  section: SettingSection;
  /** One line for the settings tables. */
  meaning: string;
  /** One of the dozen a deployer sets: in README's short table. */
  deployer?: true;
  /** Lowers a defence for local development: each one that is on gets a warning line at start. */
  developmentOnly?: true;
}

export type SettingDeclaration = Common &
  (
    | { type: 'integer'; default: number; min: number; max: number }
    | { type: 'boolean'; default: boolean }
    /** Free text; `shown` is the default as the documents say it, when it is computed from others. */
    | { type: 'text'; default?: string; shown?: string }
    /** A secret (a bearer token): unset by default. */
    | { type: 'secret' }
    /** An Ed25519 private key as PKCS#8 PEM or private JWK; unset: generated and kept in the database. */
    | { type: 'ed25519-key' }
    /** Comma-separated entries (URLs, most of them), each checked by the reader of the list. */
    | { type: 'list' }
    /** A UTC date or date-time, read as epoch milliseconds. */
    | { type: 'instant'; default: string }
    | { type: 'choice'; default: string; choices: readonly string[] }
  );

const integer = (
  section: SettingSection,
  fallback: number,
  min: number,
  max: number,
  meaning: string,
  deployer?: true,
) =>
  ({
    section,
    type: 'integer',
    default: fallback,
    min,
    max,
    meaning,
    ...(deployer ? { deployer } : {}),
  }) as const;
const boolean = (section: SettingSection, meaning: string, deployer?: true) =>
  ({ section, type: 'boolean', default: false, meaning, ...(deployer ? { deployer } : {}) }) as const;
const list = (section: SettingSection, meaning: string) => ({ section, type: 'list', meaning }) as const;
const secret = (section: SettingSection, meaning: string, deployer?: true) =>
  ({ section, type: 'secret', meaning, ...(deployer ? { deployer } : {}) }) as const;

/** In the order the documents list them, section by section. */
export const SETTINGS = {
  PORT: integer('network', 8080, 0, 65535, 'TCP port to listen on', true),
  HOST: {
    section: 'network',
    type: 'text',
    default: '0.0.0.0',
    meaning: 'Interface to bind',
    deployer: true,
  },
  TRUST_PROXY: boolean('network', 'Trust `X-Forwarded-*` (behind a load balancer)', true),
  BODY_LIMIT_BYTES: integer(
    'network',
    256 * 1024,
    1024,
    16 * 1024 * 1024,
    'Largest request body (except invocation)',
  ),
  REQUEST_TIMEOUT_SECONDS: integer('network', 30, 1, 3600, 'Time to send a whole request, then 408'),
  MAX_CONNECTIONS_PER_ADDRESS: integer(
    'network',
    256,
    0,
    1_000_000,
    'Open connections per client address (0 = off)',
  ),
  MCP_ALLOWED_ORIGINS: list('network', 'More browser origins that may call `/mcp`'),
  ARD_REFERRALS: list('network', "Other ARD registries' API bases, as referrals"),

  DATABASE_URL: {
    section: 'database',
    type: 'text',
    default: 'sqlite:./data/registry.db',
    meaning: '`sqlite:<path>` or `postgres://...`',
    deployer: true,
  },
  DATABASE_POOL_SIZE: integer('database', 10, 1, 1000, 'PostgreSQL connections per node', true),
  DATABASE_CONNECT_TIMEOUT_MS: integer(
    'database',
    3_000,
    100,
    60_000,
    'Wait for a PostgreSQL connection, then 503',
  ),
  DATABASE_STATEMENT_TIMEOUT_MS: integer(
    'database',
    10_000,
    100,
    600_000,
    'PostgreSQL `statement_timeout` for every query',
  ),
  DATABASE_STARTUP_WAIT_SECONDS: integer('database', 30, 0, 600, 'Retry a PostgreSQL not yet up at start'),
  SQLITE_BUSY_TIMEOUT_MS: integer(
    'database',
    5_000,
    0,
    60_000,
    "Wait for another process's write lock, then 503",
  ),
  SQLITE_MMAP_MB: integer(
    'database',
    SQLITE_MMAP_MAX_MB,
    0,
    SQLITE_MMAP_MAX_MB,
    'SQLite file read through a memory map (0 = off)',
  ),

  PUBLIC_URL: {
    section: 'identity',
    type: 'text',
    shown: 'http://localhost:<PORT>',
    meaning: 'Origin clients reach; sets every did:web DID',
    deployer: true,
  },
  TOKEN_SIGNING_KEY: {
    section: 'identity',
    type: 'ed25519-key',
    meaning: 'Ed25519 key for tokens (PEM or JWK)',
    deployer: true,
  },
  LOG_SIGNING_KEY: {
    section: 'identity',
    type: 'ed25519-key',
    meaning: 'Ed25519 key for log checkpoints (PEM or JWK)',
    deployer: true,
  },
  TOKEN_TTL_SECONDS: integer('identity', DAY, 60, 30 * DAY, 'Token lifetime'),
  KEY_RECOVERY_HOURS: integer(
    'identity',
    24,
    1,
    90 * 24,
    'Public timelock before a started key recovery finishes',
  ),
  KEY_CHANGE_RATE_LIMIT: integer(
    'identity',
    10,
    1,
    10_000,
    'Key rotations and recovery requests per agent per registration window',
  ),
  DOMAIN_RECHECK_SECONDS: integer(
    'identity',
    6 * HOUR,
    60,
    30 * DAY,
    "Re-check each verified domain's proof this often; two failed checks in a row drop the claim",
  ),
  DOMAIN_DNS_SERVERS: list(
    'identity',
    'DNS servers (`ip` or `ip:port`) for `_agent-registry` TXT proofs; system DNS if unset',
  ),
  DOMAIN_PROOF_ALLOW_HTTP: boolean(
    'identity',
    'Development and tests only: fetch domain proofs over http:// and accept a port in a claimed domain',
  ),
  LEGACY_AUTH_UNTIL: {
    section: 'identity',
    type: 'instant',
    default: LEGACY_AUTH_UNTIL_DEFAULT,
    meaning: 'Until then, tokens and logins without audience',
  },

  REQUIRE_REGISTRATION_AUDIENCE: boolean('registration', 'Refuse registrations without `audience`'),
  REGISTRATION_RATE_LIMIT: integer(
    'registration',
    60,
    1,
    1_000_000,
    'Registrations per client address per window',
  ),
  REGISTRATION_PREFIX_RATE_LIMIT: integer(
    'registration',
    600,
    1,
    1_000_000,
    'The same per /24 (IPv4) or /64 (IPv6)',
  ),
  REGISTRATION_IPV6_48_RATE_LIMIT: integer('registration', 1200, 1, 1_000_000, 'The same per IPv6 /48'),
  REGISTRATION_RATE_WINDOW_SECONDS: integer('registration', HOUR, 1, 30 * DAY, 'That sliding window'),
  REGISTRATION_POW_BITS: integer(
    'registration',
    0,
    0,
    32,
    'Proof of work per registration, in bits (0 = off)',
  ),
  PROFILE_MAX_KB: integer('registration', 128, 16, 1024, 'Largest stored profile'),

  TASK_MAX_OPEN_PER_CALLER: integer('tasks', 64, 1, 100_000, 'Open tasks per caller'),
  TASK_MAX_OPEN_MB_PER_CALLER: integer('tasks', 32, 1, 1_000_000, "MiB of input in one caller's open tasks"),
  TASK_MAX_OPEN_PER_TARGET: integer('tasks', 1024, 1, 1_000_000, 'Open tasks waiting for one agent'),
  TASK_MAX_OPEN_MB_PER_TARGET: integer('tasks', 128, 1, 1_000_000, "MiB of input in one agent's open tasks"),
  TASK_MAX_OPEN_MB_TOTAL: integer('tasks', 4096, 1, 100_000_000, 'MiB of input in all open tasks (then 503)'),
  INVOKE_RATE_LIMIT: integer('tasks', 10_000, 1, 10_000_000, 'Invocations per caller per window'),
  INVOKE_RATE_MB: integer('tasks', 256, 1, 10_000_000, 'MiB of input per caller per window'),
  INVOKE_RATE_MB_PER_ADDRESS: integer(
    'tasks',
    256,
    1,
    10_000_000,
    'MiB of input per client address per window',
  ),
  INVOKE_RATE_MB_PER_NETWORK: integer(
    'tasks',
    1024,
    1,
    10_000_000,
    'The same per /24 (IPv4), /64 and /48 (IPv6)',
  ),
  INVOKE_RATE_WINDOW_SECONDS: integer('tasks', HOUR, 1, DAY, 'That window'),
  TASK_MAX_POLLS_PER_AGENT: integer('tasks', 8, 1, 1000, 'Task polls at once per agent on one node'),
  TASK_PAYLOAD_RETENTION_SECONDS: integer(
    'tasks',
    DAY,
    60,
    30 * DAY,
    "Keep an ended task's input and output this long",
  ),
  TASK_RETENTION_DAYS: integer('tasks', 35, 1, 3650, "Then delete the ended task's row"),
  TASK_SWEEP_SECONDS: integer('tasks', 30, 1, 3600, 'How often open tasks past deadline time out'),
  WEBHOOK_MAX_CONCURRENCY_PER_AGENT: integer('tasks', 32, 1, 1000, 'Webhook deliveries in flight per agent'),
  ALLOW_PRIVATE_NETWORKS: {
    ...boolean('tasks', 'Webhooks, probes, watches and federation to private addresses (dev only)'),
    developmentOnly: true,
  },
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: {
    ...boolean('tasks', 'The earlier name of `ALLOW_PRIVATE_NETWORKS`, still read (dev only)'),
    developmentOnly: true,
  },

  REVIEW_RATE_LIMIT: integer('reviews', 10, 1, 100_000, 'Reviews per reviewer per window'),
  REVIEW_RATE_WINDOW_SECONDS: integer('reviews', HOUR, 1, 30 * DAY, 'That window'),
  REPORT_RATE_LIMIT: integer('reviews', 20, 1, 100_000, 'Abuse reports per reporting agent per window'),
  REPORT_RATE_LIMIT_PER_ADDRESS: integer(
    'reviews',
    60,
    1,
    1_000_000,
    'Abuse reports per client address per window (10 times as many per network prefix)',
  ),
  REPORT_RATE_WINDOW_SECONDS: integer('reviews', HOUR, 1, 30 * DAY, 'That window'),
  REPUTATION_REFRESH_SECONDS: integer(
    'reviews',
    HOUR,
    60,
    7 * DAY,
    'How often reputation scores are recomputed',
  ),

  PROFILE_CACHE_MB: integer('search', 64, 0, 16_384, 'Memory for serialised profiles (0 = off)'),

  PROBE_INTERVAL_SECONDS: integer('probes', 300, 0, DAY, 'Probe each webhook agent this often (0 = off)'),
  PROBE_MAX_PER_TICK: integer('probes', 2000, 1, 1_000_000, 'Probes one node starts per 5-second tick'),
  PROBE_MAX_CONCURRENT: integer('probes', 64, 1, 10_000, 'Probes in flight at once on one node'),
  PROBE_TIMEOUT_SECONDS: integer('probes', 10, 1, 120, 'A probe unanswered this long has failed'),

  FEDERATION_A2A_CARDS: list('federation', 'A2A card URLs or domains to import, comma-separated'),
  FEDERATION_A2A_JWKS: list(
    'federation',
    'Card origins whose trust root is a pinned JWKS: `origin=URL or /file`, comma-separated',
  ),
  FEDERATION_PEERS: {
    ...list('federation', 'Peer registries to follow, comma-separated origins (`=key` pins the log key)'),
    deployer: true,
  },
  FEDERATION_MCP_REGISTRIES: list('federation', 'MCP Registry API bases to import, comma-separated'),
  FEDERATION_ADMIN_TOKEN: secret(
    'federation',
    'Operator secret for federation writes (resuming a peer) and moderation (reports, suspensions); also shows federation errors (16+ chars)',
    true,
  ),
  FEDERATION_REFRESH_SECONDS: integer(
    'federation',
    15 * MINUTE,
    10,
    7 * DAY,
    'How often each import is fetched again',
  ),
  FEDERATION_FETCH_TIMEOUT_SECONDS: integer(
    'federation',
    10,
    1,
    300,
    'Deadline of one fetch, whole answer included',
  ),
  FEDERATION_MAX_RESPONSE_KB: integer('federation', 1024, 16, 64 * 1024, 'Largest answer a fetch accepts'),
  FEDERATION_SOURCE_DEADLINE_SECONDS: integer(
    'federation',
    120,
    1,
    7 * DAY,
    "Most time one source's refresh takes of a round (at most the interval)",
  ),
  FEDERATION_PEER_CATCHUP_ENTRIES: integer(
    'federation',
    65_536,
    256,
    100_000_000,
    'New log entries of one peer verified a round; the rest in the next rounds',
  ),
  FEDERATION_PEER_CATCHUP_MB: integer(
    'federation',
    64,
    1,
    64 * 1024,
    'Entry bundle MiB read of one peer a round',
  ),
  FEDERATION_A2A_ALLOW_HTTP_TRUST_ROOTS: {
    ...boolean('federation', 'Development only: verify http cards against their did.json read over http'),
    developmentOnly: true,
  },
  FEDERATION_MAX_ENTRIES_PER_PEER: integer(
    'federation',
    100_000,
    1,
    10_000_000,
    'Most entries one peer may hold; new agents beyond it are refused',
  ),
  FEDERATION_MAX_ENTRIES_PER_MCP_REGISTRY: integer(
    'federation',
    10_000,
    1,
    1_000_000,
    'Most entries one MCP Registry may hold; new servers beyond it are refused',
  ),
  FEDERATION_EXPIRE_AFTER_ROUNDS: integer(
    'federation',
    24,
    1,
    10_000,
    'Rounds after which an entry its source stopped listing goes',
  ),
  FEDERATION_PROBE_INTERVAL_SECONDS: integer(
    'federation',
    15 * MINUTE,
    0,
    DAY,
    'Probe each imported MCP server and A2A card endpoint, and read each mirrored agent at its home, this often (0 = off)',
  ),
  FEDERATION_PROBE_MAX_PER_TICK: integer(
    'federation',
    500,
    1,
    1_000_000,
    'Imported entries one node starts probing per 5-second tick',
  ),
  FEDERATION_PROBE_MAX_CONCURRENT: integer(
    'federation',
    32,
    1,
    10_000,
    'Probes of imported entries in flight at once on one node',
  ),
  FEDERATION_PROBE_TIMEOUT_SECONDS: integer(
    'federation',
    10,
    1,
    120,
    'A probe of an imported entry unfinished this long found it unreachable',
  ),

  WATCH_MAX_PER_AGENT: integer('watches', 100, 1, 100_000, 'Live watches one agent may hold'),
  WATCH_MAX_PER_TARGET: integer('watches', 10_000, 1, 1_000_000, 'Live watches on one agent or remote entry'),
  WATCH_RATE_LIMIT: integer('watches', 100, 1, 1_000_000, 'Watches one agent may create per window'),
  WATCH_RATE_WINDOW_SECONDS: integer('watches', HOUR, 1, 30 * DAY, 'That window'),
  WATCH_DELIVERY_ATTEMPTS: integer(
    'watches',
    8,
    1,
    50,
    'Attempts of one watch delivery before it is dropped',
  ),
  WATCH_RETRY_BASE_MS: integer(
    'watches',
    5000,
    10,
    HOUR * 1000,
    'Wait before the first retry of a delivery (each later one waits 4 times longer)',
  ),
  WATCH_DELIVERY_TIMEOUT_SECONDS: integer(
    'watches',
    15,
    1,
    120,
    'A watch delivery unanswered this long failed',
  ),
  WATCH_MAX_PER_TICK: integer('watches', 500, 1, 100_000, 'Watch deliveries one node starts per tick'),
  WATCH_TICK_MS: integer(
    'watches',
    1000,
    20,
    60_000,
    'How often each node reads changes and sends deliveries',
  ),
  WATCH_AVAILABILITY_SECONDS: integer(
    'watches',
    30,
    1,
    HOUR,
    'How often watched agents are checked for a change of availability',
  ),

  LOG_LEVEL: {
    section: 'operations',
    type: 'choice',
    default: 'info',
    choices: LOG_LEVELS,
    meaning: 'Level of the JSON log lines',
    deployer: true,
  },
  METRICS_TOKEN: secret(
    'operations',
    'Bearer token `GET /metrics` requires (16+ chars); unset: public',
    true,
  ),
  BACKUP_INTERVAL_SECONDS: integer(
    'operations',
    0,
    0,
    30 * DAY,
    'Scheduled backups: one every this many seconds, 60 or more, across all nodes (0 = off)',
  ),
  BACKUP_RETENTION: integer('operations', 28, 1, 10_000, 'Scheduled backups kept; older ones removed'),
  BACKUP_DIRECTORY: {
    section: 'operations',
    type: 'text',
    meaning: 'Absolute directory for scheduled backups, outside the checkout',
  },
} as const satisfies Record<string, SettingDeclaration>;

export type SettingName = keyof typeof SETTINGS;

/** What reading a declared setting gives, by its type. */
export type SettingValue<N extends SettingName> = (typeof SETTINGS)[N] extends { type: 'integer' | 'instant' }
  ? number
  : (typeof SETTINGS)[N] extends { type: 'boolean' }
    ? boolean
    : (typeof SETTINGS)[N] extends { type: 'list' }
      ? string[]
      : (typeof SETTINGS)[N] extends { type: 'ed25519-key' }
        ? KeyObject | undefined
        : (typeof SETTINGS)[N] extends { type: 'choice'; choices: readonly (infer C)[] }
          ? C
          : (typeof SETTINGS)[N] extends { type: 'text'; default: string }
            ? string
            : string | undefined;

export type SettingValues = { [N in SettingName]: SettingValue<N> };

/**
 * The development-only settings `env` turns on, each with the warning line a start logs for it: a
 * registry reachable by others should have none.
 */
export function developmentSettingsOn(values: SettingValues): { name: SettingName; warning: string }[] {
  return (Object.entries(SETTINGS) as [SettingName, SettingDeclaration][])
    .filter(([name, declared]) => declared.developmentOnly === true && values[name] === true)
    .map(([name, declared]) => ({
      name,
      warning: `${name}=true is for local development only (${declared.meaning}); unset it on a registry others use`,
    }));
}
