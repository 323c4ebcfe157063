import type { NewAgentRow } from '../src/modules/agents/agents-store.js';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import { Wallet } from 'ethers';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import type { Clock } from '../src/kernel/clock.js';
import { loadConfig, type Config } from '../src/kernel/config.js';
import { createContext, type AppContext } from '../src/context.js';
import type { App } from '../src/http/types.js';
import type { HostResolver } from '../src/kernel/network-policy.js';
import { UNLIMITED_REGISTRATIONS } from './node-process.js';
import { DEFAULT_TEST_POSTGRES_URL } from './private-postgres.js';

/** A clock tests can move: starts at the real time so signed timestamps look current. */
export class TestClock implements Clock {
  constructor(private current = Date.now()) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

export interface TestRegistry {
  app: App;
  ctx: AppContext;
  clock: TestClock;
  config: Config;
  database: TestDatabase;
  close(): Promise<void>;
}

/** Which database the suite runs on: `TEST_DATABASE=postgres` runs it on the local PostgreSQL. */
export const testDatabase: 'sqlite' | 'postgres' =
  process.env.TEST_DATABASE === 'postgres' ? 'postgres' : 'sqlite';
const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? DEFAULT_TEST_POSTGRES_URL;

export interface TestDatabase {
  url: string;
  /** The SQLite file, when on SQLite. */
  file?: string;
  drop(): Promise<void>;
}

/** A fresh, empty database of the kind under test; `drop` removes it. */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (testDatabase === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-test-'));
    const file = path.join(dir, 'registry.db');
    return {
      url: `sqlite:${file}`,
      file,
      drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `registry_test_${crypto.randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    // The query's rejection reports a failure; without a listener the client's own 'error' event (the
    // server restarting under another test file, e.g. multi-node's restart test) would crash this file.
    client.on('error', () => undefined);
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export interface StartOptions {
  /** DNS for webhook hosts (simulates rebinding). */
  resolveHost?: HostResolver;
  /** Reuse a database the test owns (it is not dropped on close), e.g. to reopen it with other settings. */
  database?: TestDatabase;
}

/** PUBLIC_URL of test registries: the audience their signed messages name. */
export const TEST_PUBLIC_URL = 'http://localhost:8080';

/** A registry on its own real database, built through the same composition root as production. */
export async function startRegistry(
  env: Record<string, string> = {},
  options: StartOptions = {},
): Promise<TestRegistry> {
  const database = options.database ?? (await createTestDatabase());
  const ownsDatabase = options.database === undefined;
  const config = loadConfig({
    DATABASE_URL: database.url,
    PUBLIC_URL: TEST_PUBLIC_URL,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...UNLIMITED_REGISTRATIONS,
    ...env,
  });
  const clock = new TestClock();
  const ctx = await createContext(
    config,
    options.resolveHost ? { clock, resolveHost: options.resolveHost } : { clock },
  );
  const app = await buildApp(ctx, { logger: false });
  await app.ready();
  return {
    app,
    ctx,
    clock,
    config,
    database,
    close: async () => {
      await app.close();
      await ctx.close();
      if (ownsDatabase) await database.drop();
    },
  };
}

export interface Capability {
  type: string;
  description?: string | null;
  tags?: string[] | null;
  input_schema?: Record<string, unknown> | null;
  output_schema?: Record<string, unknown> | null;
}

export interface Profile {
  name: string;
  description?: string | null;
  capabilities: Capability[];
  tags?: string[] | null;
  avatar?: string | null;
  website?: string | null;
}

export const defaultProfile = (): Profile => ({
  name: 'Translator',
  description: 'Translates text between languages',
  capabilities: [{ type: 'translation', description: 'English to French', tags: ['en', 'fr'] }],
  tags: ['language'],
});

/** Canonical JSON written out independently of the library the service uses: the rule of section 5.1. */
export function referenceCanonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(referenceCanonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${referenceCanonicalJson(member)}`).join(',')}}`;
}

export interface TestAgent {
  keyType: 'ed25519' | 'secp256k1';
  publicKey: string;
  chainId: string | null;
  sign(message: string): Promise<string>;
  /** `audience`, when given, is added as the extension member docs/signing.md describes. */
  registrationMessage(profile: Profile, timestamp: number, audience?: string): string;
  /** Bound to `audience`, by default the test registry's PUBLIC_URL. */
  authenticationMessage(did: string, timestamp: number, audience?: string): string;
}

/** Ed25519 keys and signatures from node:crypto. */
export function ed25519Agent(): TestAgent & { seed: Uint8Array } {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' });
  const publicKeyHex = Buffer.from(jwk.x as string, 'base64url').toString('hex');
  return {
    /** The 32-byte private seed, for signing with other libraries (did-jwt). */
    seed: new Uint8Array(Buffer.from(privateKey.export({ format: 'jwk' }).d as string, 'base64url')),
    keyType: 'ed25519',
    publicKey: publicKeyHex,
    chainId: null,
    sign: async (message) => crypto.sign(null, Buffer.from(message, 'utf8'), privateKey).toString('hex'),
    registrationMessage: (profile, timestamp, audience) =>
      referenceCanonicalJson({
        audience,
        key_type: 'ed25519',
        profile: {
          avatar: profile.avatar ?? null,
          capabilities: profile.capabilities,
          description: profile.description ?? null,
          name: profile.name,
          tags: profile.tags ?? [],
          website: profile.website ?? null,
        },
        public_key: publicKeyHex,
        purpose: 'registration',
        timestamp,
      }),
    authenticationMessage: (did, timestamp, audience = TEST_PUBLIC_URL) =>
      referenceCanonicalJson({ audience, did, purpose: 'authenticate', timestamp }),
  };
}

/** secp256k1 keys and EIP-191 personal_sign signatures from ethers. */
export function secp256k1Agent(
  options: { chainId?: string; compressed?: boolean; wallet?: Wallet } = {},
): TestAgent & { wallet: Wallet } {
  const wallet = options.wallet ?? (Wallet.createRandom() as unknown as Wallet);
  const publicKey = (
    options.compressed ? wallet.signingKey.compressedPublicKey : wallet.signingKey.publicKey
  ).slice(2);
  const chainId = options.chainId ?? 'eip155:1';
  return {
    wallet,
    keyType: 'secp256k1',
    publicKey,
    chainId,
    sign: (message) => wallet.signMessage(message),
    registrationMessage: (profile, timestamp, audience) =>
      JSON.stringify({
        purpose: 'registration',
        public_key: publicKey,
        key_type: 'secp256k1',
        chain_id: chainId,
        profile: {
          name: profile.name,
          description: profile.description,
          avatar: profile.avatar ?? null,
          website: profile.website ?? null,
          capabilities: profile.capabilities.map((capability) => ({
            type: capability.type,
            description: capability.description,
            tags: capability.tags ?? [],
          })),
          tags: profile.tags,
        },
        timestamp,
        audience,
      }),
    authenticationMessage: (did, timestamp, audience = TEST_PUBLIC_URL) =>
      JSON.stringify({ purpose: 'authenticate', did, audience, timestamp }),
  };
}

export async function registrationBody(
  agent: TestAgent,
  profile: Profile,
  timestamp: number,
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {
    public_key: agent.publicKey,
    key_type: agent.keyType,
    profile,
    timestamp,
    signature: await agent.sign(
      agent.registrationMessage(profile, timestamp, extra.audience as string | undefined),
    ),
    ...extra,
  };
  if (agent.chainId !== null) body.chain_id = agent.chainId;
  return body;
}

export interface Registered {
  did: string;
  token: string;
  agent: TestAgent;
}

export async function register(
  registry: TestRegistry,
  agent: TestAgent = ed25519Agent(),
  profile: Profile = defaultProfile(),
  extra: Record<string, unknown> = {},
): Promise<Registered> {
  const response = await registry.app.inject({
    method: 'POST',
    url: '/api/agents/register',
    payload: await registrationBody(agent, profile, registry.clock.now(), extra),
  });
  if (response.statusCode !== 201)
    throw new Error(`registration failed: ${response.statusCode} ${response.body}`);
  const { did, token } = response.json<{ did: string; token: string }>();
  return { did, token, agent };
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
export const agentPath = (did: string, suffix = ''): string =>
  `/api/agents/${encodeURIComponent(did)}${suffix}`;

/** A row of the agents table for tests that write the database directly (every required column). */
export const agentTableRow = (did: string, overrides: Partial<NewAgentRow> = {}): NewAgentRow => ({
  did,
  name: did.slice(-4),
  public_key: did,
  key_id: `ed25519:${did}`,
  key_type: 'ed25519',
  capabilities: '[]',
  status: 'active',
  invocation_enabled: 0,
  delivery_mode: 'none',
  average_rating: 0,
  reputation_score: 0,
  total_reviews: 0,
  tags: '[]',
  created_at: 1,
  updated_at: 1,
  ...overrides,
});

const releaseFixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'upgrade');

/**
 * Puts the first complete release's schema and data (test/fixtures/upgrade/) into an empty database
 * of the kind under test: its SQLite file, or its PostgreSQL database.
 */
export async function loadRelease(database: Pick<TestDatabase, 'url' | 'file'>): Promise<void> {
  if (database.file !== undefined) {
    fs.mkdirSync(path.dirname(database.file), { recursive: true });
    fs.copyFileSync(path.join(releaseFixtures, 'release-1.sqlite'), database.file);
    return;
  }
  // pg_dump's `\restrict` lines are commands of psql, not SQL.
  const dump = fs
    .readFileSync(path.join(releaseFixtures, 'release-1.sql'), 'utf8')
    .split('\n')
    .filter((line) => !line.startsWith('\\'))
    .join('\n');
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(dump);
  } finally {
    await client.end();
  }
}

export interface DatabaseState {
  applied: string[];
  /** Tables, columns and indexes, and each table's row count. */
  schema: string[];
}

/** What a migration may change: the history, the schema and the rows. */
export async function stateOf(database: Pick<TestDatabase, 'url' | 'file'>): Promise<DatabaseState> {
  if (database.file !== undefined) {
    const sqlite = new SqliteDatabase(database.file);
    try {
      const objects = sqlite
        .prepare(
          "select type, name, sql from sqlite_master where name not like 'sqlite_%' order by type, name",
        )
        .all() as { type: string; name: string; sql: string | null }[];
      const schema = objects.map(({ type, name, sql }) => {
        const counted = type === 'table' && sql?.startsWith('CREATE VIRTUAL') !== true;
        const rows = counted
          ? (sqlite.prepare(`select count(*) as n from "${name}"`).get() as { n: number }).n
          : '';
        return `${type} ${name} ${sql ?? ''} ${rows}`;
      });
      const hasHistory = objects.some(({ name }) => name === 'kysely_migration');
      const applied = hasHistory
        ? (sqlite.prepare('select name from kysely_migration order by name').all() as { name: string }[]).map(
            ({ name }) => name,
          )
        : [];
      return { applied, schema };
    } finally {
      sqlite.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const columns = await client.query<{ line: string }>(
      `select table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' ||
         coalesce(column_default, '') as line
       from information_schema.columns where table_schema = 'public' order by 1`,
    );
    const indexes = await client.query<{ line: string }>(
      `select indexdef as line from pg_indexes where schemaname = 'public' order by 1`,
    );
    const tables = await client.query<{ name: string }>(
      `select tablename as name from pg_tables where schemaname = 'public' order by 1`,
    );
    const counts: string[] = [];
    for (const { name } of tables.rows) {
      const { rows } = await client.query<{ n: string }>(`select count(*) as n from "${name}"`);
      counts.push(`${name} ${rows[0]?.n}`);
    }
    const applied = tables.rows.some(({ name }) => name === 'kysely_migration')
      ? (await client.query<{ name: string }>('select name from kysely_migration order by name')).rows.map(
          ({ name }) => name,
        )
      : [];
    return {
      applied,
      schema: [...columns.rows.map(({ line }) => line), ...indexes.rows.map(({ line }) => line), ...counts],
    };
  } finally {
    await client.end();
  }
}
