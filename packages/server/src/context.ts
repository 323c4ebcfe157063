import { loadSigningKey } from './auth/signing-key.js';
import { TokenService } from './auth/tokens.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle } from './db/connect.js';
import { migrateToLatest } from './db/migrations/index.js';
import { sweepInactiveFromIndex } from './db/stores/agent-index.js';
import { AgentService } from './services/agents.js';
import { AuthenticationService } from './services/authentication.js';
import { DidResolutionService } from './services/did-resolution.js';
import { RegistrationService } from './services/registration.js';
import { AgentTaskService } from './services/agent-tasks.js';
import { InvocationService } from './services/invocation.js';
import { InProcessTaskEvents, type TaskEvents } from './invocation/events.js';
import { QueueDeliverer, WebhookDeliverer } from './invocation/deliverers.js';
import { WebhookNetworkPolicy, systemResolver, type HostResolver } from './invocation/network-policy.js';
import { SchemaCache } from './invocation/schema-cache.js';
import { TaskStateMachine } from './invocation/task-state.js';
import { LIMITS } from './services/limits.js';
import pino from 'pino';
import { sql } from 'kysely';
import { NOTIFY_CHANNEL, PostgresTaskEvents } from './invocation/pg-events.js';
import { startDiscoveryJobs } from './services/background-jobs.js';
import { registryGovernance } from './services/governance.js';
import { ReputationService } from './services/reputation.js';
import { ReviewService } from './services/reviews.js';
import { SearchService } from './services/search.js';
import { ServiceRecordService } from './services/service-record.js';
import { StatsService } from './services/stats.js';

/** Everything a request may need, built once here: the composition root. */
export interface AppContext {
  config: Config;
  clock: Clock;
  database: DatabaseHandle;
  tokens: TokenService;
  registration: RegistrationService;
  authentication: AuthenticationService;
  agents: AgentService;
  didResolution: DidResolutionService;
  events: TaskEvents;
  invocation: InvocationService;
  agentTasks: AgentTaskService;
  /** Ends blocked invocations and long polls, so shutdown does not wait minutes for them. */
  stopWaiters(): Promise<void>;
  reviews: ReviewService;
  reputation: ReputationService;
  serviceRecord: ServiceRecordService;
  search: SearchService;
  stats: StatsService;
  close(): Promise<void>;
}

export interface ContextOverrides {
  clock?: Clock;
  /** DNS for webhook hosts; tests simulate rebinding with it. */
  resolveHost?: HostResolver;
}

export async function createContext(config: Config, overrides: ContextOverrides = {}): Promise<AppContext> {
  const clock = overrides.clock ?? systemClock;
  const log = pino({ level: config.logLevel });
  const database = openDatabase(config.database, (error) =>
    log.warn({ err: error }, 'database background error (idle connection lost or WAL checkpoint failed)'),
  );
  try {
    await migrateToLatest(database.db);
    const swept = await sweepInactiveFromIndex(database.db);
    if (swept > 0) log.warn({ agents: swept }, 'took deactivated agents out of the search index');
    const privateKey = await loadSigningKey(database.db, clock, config.tokenSigningKey);
    const tokens = await TokenService.create({
      privateKey,
      issuer: config.publicUrl,
      audience: config.publicUrl,
      ttlSeconds: config.tokenTtlSeconds,
      clock,
    });
    const { db } = database;
    const { didWebDomain, publicUrl } = config;
    const events: TaskEvents =
      database.postgresUrl === undefined
        ? new InProcessTaskEvents()
        : await PostgresTaskEvents.start(
            database.postgresUrl,
            async (payload) => {
              await sql`select pg_notify(${NOTIFY_CHANNEL}, ${payload})`.execute(db);
            },
            log,
          );
    const serviceRecord = new ServiceRecordService({ db, clock });
    const states = new TaskStateMachine(db, clock, events, (trx, id) =>
      serviceRecord.recordFinished(trx, id),
    );
    const webhookPolicy = new WebhookNetworkPolicy(
      config.webhookAllowPrivateNetworks,
      overrides.resolveHost ?? systemResolver,
    );
    const invocation = new InvocationService({
      db,
      clock,
      events,
      states,
      schemas: new SchemaCache(),
      didWebDomain,
      deliverers: {
        queue: new QueueDeliverer(events),
        webhook: new WebhookDeliverer({
          clock,
          states,
          policy: webhookPolicy,
          maxResponseBytes: LIMITS.invocationBodyLimitBytes,
          log,
        }),
      },
    });
    const agentTasks = new AgentTaskService({ db, clock, events, states });
    const reputation = new ReputationService({ db, clock, didWebDomain });
    const stats = new StatsService({ db, clock, governance: registryGovernance(config) });
    const rateLimit = { maxReviews: config.reviewRateLimit, windowMs: config.reviewRateWindowSeconds * 1000 };
    // Timers belong to the context: reputation refresh and search-count flush, stopped by close().
    const discoveryJobs = startDiscoveryJobs({
      config,
      reputation,
      serviceRecord,
      stats,
      onError: (job, error) => log.error({ err: error, job }, 'background job failed'),
    });
    return {
      config,
      clock,
      database,
      tokens,
      registration: new RegistrationService({
        db,
        clock,
        tokens,
        didWebDomain,
        audience: publicUrl,
        requireAudience: config.requireRegistrationAudience,
      }),
      authentication: new AuthenticationService({ db, clock, tokens, didWebDomain, audience: publicUrl }),
      agents: new AgentService({ db, clock, didWebDomain, publicUrl, webhookPolicy, serviceRecord }),
      didResolution: new DidResolutionService({ db, didWebDomain, publicUrl }),
      reviews: new ReviewService({ db, clock, didWebDomain, reputation, rateLimit }),
      reputation,
      serviceRecord,
      search: new SearchService({ db, clock, searches: stats }),
      stats,
      events,
      invocation,
      agentTasks,
      stopWaiters: async () => {
        agentTasks.shutdown();
        await invocation.shutdown();
      },
      close: async () => {
        agentTasks.shutdown();
        await invocation.shutdown();
        await discoveryJobs.stop();
        await events.close();
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}
