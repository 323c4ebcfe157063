/**
 * A registry in this process, built through the same composition root as production on a real
 * database of its own: tests drive it with Fastify's `inject` (or `listen`) and move its clock.
 */
import { buildApp } from '@agent-registry/server/src/app.js';
import { createContext, type AppContext } from '@agent-registry/server/src/context.js';
import type { App } from '@agent-registry/server/src/http/types.js';
import type { Clock } from '@agent-registry/server/src/kernel/clock.js';
import { loadConfig, type Config } from '@agent-registry/server/src/kernel/config.js';
import type { HostResolver } from '@agent-registry/server/src/kernel/network-policy.js';
import {
  TEST_PUBLIC_URL,
  defaultProfile,
  ed25519Agent,
  registrationBody,
  type Profile,
  type TestAgent,
} from './agents.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { UNLIMITED_REGISTRATIONS } from './registry-process.js';

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

export interface StartOptions {
  /** DNS for webhook hosts (simulates rebinding). */
  resolveHost?: HostResolver;
  /** Reuse a database the test owns (it is not dropped on close), e.g. to reopen it with other settings. */
  database?: TestDatabase;
  /** Probe rounds only when the test calls them (ctx.probes.tick()), none in the background. */
  manualProbes?: boolean;
  /** Watch rounds only when the test calls them (ctx.watchJobs.runOnce()), none in the background. */
  manualWatches?: boolean;
  /** Domain re-checks only when the test runs them (ctx.domains.recheckDue()), none in the background. */
  manualDomainChecks?: boolean;
}

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
  const ctx = await createContext(config, {
    clock,
    ...(options.resolveHost ? { resolveHost: options.resolveHost } : {}),
    ...(options.manualProbes ? { manualProbes: true } : {}),
    ...(options.manualWatches ? { manualWatches: true } : {}),
    ...(options.manualDomainChecks ? { manualDomainChecks: true } : {}),
  });
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
