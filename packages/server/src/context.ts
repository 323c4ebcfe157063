import { loadLogSigningKey, loadSigningKey } from './modules/identity/signing-key.js';
import { NoteSigner } from './modules/transparency-log/note.js';
import { TransparencyLogService } from './modules/transparency-log/transparency-log.js';
import { TokenService } from './modules/identity/tokens.js';
import { systemClock, type Clock } from './kernel/clock.js';
import type { Config } from './kernel/config.js';
import { openDatabase, openPostgresForMigrations, type DatabaseHandle } from './db/connect.js';
import { migrateToLatest } from './db/migrations/index.js';
import { AgentService } from './modules/agents/agents.js';
import { CapabilitySchemas } from './modules/capabilities/capability-schemas.js';
import { AuthenticationService } from './modules/agents/authentication.js';
import { DidResolutionService } from './modules/agents/did-resolution.js';
import { RegistrationService } from './modules/agents/registration.js';
import { RegistrationLimiter } from './modules/agents/registration-limits.js';
import { transactionRunner, type TransactionRunner } from './db/group-commit.js';
import { AgentTaskService } from './modules/tasks/agent-tasks.js';
import { InvocationService } from './modules/tasks/invocation.js';
import { InProcessTaskEvents, type TaskEvents } from './modules/tasks/events.js';
import { QueueDeliverer, WebhookDeliverer } from './modules/tasks/deliverers.js';
import { WebhookNetworkPolicy, systemResolver, type HostResolver } from './kernel/network-policy.js';
import { TaskStateMachine } from './modules/tasks/task-state.js';
import { COMPILED_SCHEMA_CACHE_MAX_BYTES } from './modules/capabilities/compiled-schemas.js';
import { ValidatorPool } from './modules/capabilities/validator-pool.js';
import { InlineValidator } from './modules/capabilities/inline-validator.js';
import { TASK_LIMITS } from './modules/tasks/task-limits.js';
import { VALIDATION_LIMITS } from './modules/capabilities/validation-limits.js';
import pino from 'pino';
import { sql } from 'kysely';
import { NOTIFY_CHANNEL, PostgresTaskEvents } from './modules/tasks/pg-events.js';
import { startDiscoveryJobs } from './background-jobs.js';
import { startTaskMaintenance } from './modules/tasks/task-maintenance.js';
import { registryGovernance } from './modules/stats/governance.js';
import { ReputationService } from './modules/reviews/reputation.js';
import { ReviewService } from './modules/reviews/reviews.js';
import { SearchService } from './modules/search/search.js';
import { ChangeFeedService } from './modules/agents/change-feed.js';
import { SearchIndex } from '@agent-registry/search-index';
import { SearchIndexFollower } from './modules/search/search-follower.js';
import { FederatedIndex } from './modules/federation/federated-index.js';
import { FederationService } from './modules/federation/federation.js';
import { A2aCardImporter } from './modules/federation/a2a-import.js';
import { startFederatedIndexLoad, startFederationJobs } from './modules/federation/federation-jobs.js';
import { McpRegistryImporter } from './modules/federation/mcp-registry-import.js';
import { anyRemoteEntry } from './modules/federation/remote-entries-store.js';
import { readSources } from './modules/federation/remote-sources-store.js';
import { reportingSourceErrors } from './modules/federation/source-error-log.js';
import { PeerFollower } from './modules/federation/peer-follower.js';
import { ServiceRecordService } from './modules/service-record/service-record.js';
import { AvailabilityService } from './modules/availability/availability.js';
import { webhookOnlineWindow } from './modules/availability/availability-model.js';
import { WebhookProber } from './modules/availability/webhook-probes.js';
import { ProfileCache } from './modules/agents/profile-cache.js';
import { StatsService } from './modules/stats/stats.js';
import { ActivityService } from './modules/stats/activity.js';
import { AgentLabelService } from './modules/agents/agent-labels.js';
import { waitForDatabase } from './startup.js';
import { createRegistryMetrics, type RegistryMetrics } from './telemetry/prometheus.js';
import type { Telemetry } from './telemetry/telemetry.js';
import { readBuildInfo, type RunningBuild } from './kernel/version.js';

/** Everything a request may need, built once here: the composition root. */
export interface AppContext {
  config: Config;
  clock: Clock;
  database: DatabaseHandle;
  tokens: TokenService;
  registration: RegistrationService;
  /** How registrations write (group commit on SQLite). */
  agentWrites: TransactionRunner;
  authentication: AuthenticationService;
  agents: AgentService;
  /** Agents' capability JSON Schemas: publish checks and compiled validators (counts compilations). */
  capabilitySchemas: CapabilitySchemas;
  didResolution: DidResolutionService;
  events: TaskEvents;
  invocation: InvocationService;
  agentTasks: AgentTaskService;
  /** Ends blocked invocations and long polls, so shutdown does not wait minutes for them. */
  stopWaiters(): Promise<void>;
  reviews: ReviewService;
  reputation: ReputationService;
  serviceRecord: ServiceRecordService;
  availability: AvailabilityService;
  /** Probes of webhook agents (docs/availability.md); its ticks run in the background. */
  probes: WebhookProber;
  search: SearchService;
  /** The change feed mirrors follow (GET /api/agents/changes). */
  changeFeed: ChangeFeedService;
  transparencyLog: TransparencyLogService;
  /** Remote entries, referrals and the federation sources' status (modules/federation/). */
  federation: FederationService;
  stats: StatsService;
  /** Invocations and reviews per day, for the statistics page. */
  activity: ActivityService;
  /** Names and success rates of the agents a page mentions, in one query per page. */
  agentLabels: AgentLabelService;
  /** Which build runs: GET /version, /healthz and the start-up line. */
  build: RunningBuild;
  /** Prometheus registry of this context (GET /metrics) and the per-request observer. */
  metrics: RegistryMetrics;
  telemetry: Telemetry;
  close(): Promise<void>;
}

export interface ContextOverrides {
  clock?: Clock;
  /** DNS for webhook hosts; tests simulate rebinding with it. */
  resolveHost?: HostResolver;
  /** Where domain-event and background log lines go (tests read them); stdout by default. */
  logStream?: pino.DestinationStream;
  /** No background probe rounds: tests run them with probes.tick(). */
  manualProbes?: boolean;
}

export async function createContext(config: Config, overrides: ContextOverrides = {}): Promise<AppContext> {
  const clock = overrides.clock ?? systemClock;
  const log =
    overrides.logStream === undefined
      ? pino({ level: config.logLevel })
      : pino({ level: config.logLevel }, overrides.logStream);
  const build = readBuildInfo();
  const metrics = createRegistryMetrics({ version: build.version });
  const telemetry = metrics.telemetry(log);
  const database = openDatabase(config.database, (error) => {
    telemetry.databaseError({ error });
    log.warn({ err: error }, 'database background error (idle connection lost or WAL checkpoint failed)');
  });
  if (database.pool !== undefined) metrics.watchPool(database.pool);
  const profileCache = new ProfileCache(config.profileCacheBytes);
  metrics.watchProfileCache(profileCache);
  try {
    await waitForDatabase(database, config, log);
    if (config.database.kind === 'postgres') {
      const migrating = openPostgresForMigrations(config.database, (error) =>
        log.warn({ err: error }, 'database background error during migrations'),
      );
      try {
        await migrateToLatest(migrating.db, { log });
      } finally {
        await migrating.close();
      }
    } else await migrateToLatest(database.db, { log });
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
    const validators = new ValidatorPool({
      size: VALIDATION_LIMITS.workers,
      timeoutMs: VALIDATION_LIMITS.timeoutMs,
      prepareTimeoutMs: VALIDATION_LIMITS.prepareTimeoutMs,
      maxQueued: VALIDATION_LIMITS.maxQueued,
      cacheBytes: COMPILED_SCHEMA_CACHE_MAX_BYTES,
      maxHeapMb: VALIDATION_LIMITS.workerHeapMb,
    });
    const capabilitySchemas = new CapabilitySchemas(
      validators,
      VALIDATION_LIMITS.timeoutMs,
      new InlineValidator(),
    );
    const events: TaskEvents =
      database.postgresUrl === undefined
        ? new InProcessTaskEvents()
        : await PostgresTaskEvents.start(
            database.postgresUrl,
            async (payload, within) => {
              await sql`select pg_notify(${NOTIFY_CHANNEL}, ${payload})`.execute(within ?? db);
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
    const availability = new AvailabilityService({
      db,
      clock,
      onError: (error) => log.error({ err: error, job: 'availability' }, 'recording presence failed'),
      webhookWindowMs: webhookOnlineWindow(config.probes.intervalMs),
    });
    const webhookDeliverer = new WebhookDeliverer({
      clock,
      telemetry,
      states,
      policy: webhookPolicy,
      maxResponseBytes: TASK_LIMITS.invocationBodyLimitBytes,
      maxConcurrentPerAgent: config.webhookMaxConcurrencyPerAgent,
      log,
      outcomes: {
        deliverySucceeded: (did) => probes.deliverySucceeded(did),
        deliveryFailed: (did) => probes.deliveryFailed(did),
      },
    });
    const probes = new WebhookProber({
      db,
      clock,
      settings: config.probes,
      ping: (target, signal) => webhookDeliverer.ping(target, signal),
      onError: (error) => log.error({ err: error, job: 'probes' }, 'webhook probes failed'),
      onProbe: (ok) => metrics.probed(ok),
    });
    // The registry's agents and remote entries in one index, for scope=federated (loaded below).
    const federatedIndex = new FederatedIndex(db, clock);
    const a2aImports = new A2aCardImporter({ db, clock, policy: webhookPolicy, config: config.federation });
    const mcpImports = new McpRegistryImporter({
      db,
      clock,
      policy: webhookPolicy,
      config: config.federation,
    });
    const peers = new PeerFollower({
      db,
      clock,
      policy: webhookPolicy,
      config: config.federation,
      didWebDomain: config.didWebDomain,
      onPeerStopped: (peer, reason) => {
        metrics.federationPeerStopped(peer);
        log.error(
          { peer, reason },
          'federation: peer registry no longer followed; its entries are marked unverified',
        );
      },
    });
    const sources = [
      ...(config.federation.peers.length > 0 ? [peers] : []),
      ...(config.federation.a2aCards.length > 0 ? [a2aImports] : []),
      ...(config.federation.mcpRegistries.length > 0 ? [mcpImports] : []),
    ];
    const federation = new FederationService({ db, clock, index: federatedIndex, sources, peers });
    // Read before any background job starts: a failure here leaves nothing running.
    const anythingFederated = sources.length > 0 || (await anyRemoteEntry(db));
    const invocation = new InvocationService({
      db,
      remote: federation,
      telemetry,
      clock,
      events,
      states,
      schemas: capabilitySchemas,
      didWebDomain,
      bounds: config.taskBounds,
      presence: availability,
      deliverers: {
        queue: new QueueDeliverer(events),
        webhook: webhookDeliverer,
      },
    });
    const agentTasks = new AgentTaskService({
      presence: availability,
      db,
      telemetry,
      clock,
      events,
      states,
      maxPollsPerAgent: config.taskBounds.maxPollsPerAgent,
    });
    const reputation = new ReputationService({ db, clock, didWebDomain });
    const stats = new StatsService({ db, clock, governance: registryGovernance(config) });
    // All active agents, before the first request (docs/decisions/search.md, "Where search runs").
    const searchIndex = new SearchIndexFollower(db, new SearchIndex(), (agents) => {
      // The restored database hands out change numbers again: a cached profile's number proves nothing.
      profileCache.clear();
      log.warn(
        { agents },
        'change feed moved backwards (database restored from a backup): search index and profile cache reloaded',
      );
    });
    const indexStarted = Date.now();
    await searchIndex.load();
    log.info({ agents: searchIndex.index.size, ms: Date.now() - indexStarted }, 'search index loaded');
    const rateLimit = { maxReviews: config.reviewRateLimit, windowMs: config.reviewRateWindowSeconds * 1000 };
    // Timers belong to the context: reputation refresh and search-count flush, stopped by close().
    const discoveryJobs = startDiscoveryJobs({
      config,
      reputation,
      serviceRecord,
      stats,
      onError: (job, error) => log.error({ err: error, job }, 'background job failed'),
    });
    // Expired open tasks to `timeout` and expired idempotency keys out, on every node (idempotent).
    const taskMaintenance = startTaskMaintenance({
      db,
      clock,
      states,
      bounds: config.taskBounds,
      intervalMs: config.taskSweepSeconds * 1000,
      onError: (job, error) => log.error({ err: error, job }, 'background job failed'),
    });
    metrics.watchAvailability(() => availability.counts());
    // Presence noted by polls is written in batches; stop() writes the last batch.
    const presenceJobs = availability.start();
    // Imports and peers: once now, then every FEDERATION_REFRESH_SECONDS (docs/federation.md).
    // Each new error text is logged (at info: the remote side's failure), as the public status omits them.
    const reportedSources = reportingSourceErrors(
      sources,
      () => readSources(db),
      (source) =>
        log.info(
          { source: source.id, state: source.state, last_error: source.last_error },
          'federation: a source reported an error',
        ),
    );
    const federationJobs = startFederationJobs(reportedSources, config.federation.refreshMs, (error) =>
      log.error({ err: error, job: 'federation-refresh' }, 'background job failed'),
    );
    // Off the request path: in the background now when anything is federated, else on first use.
    const federatedIndexLoad = startFederatedIndexLoad(
      federatedIndex,
      anythingFederated,
      (status, ms) => log.info({ indexed: status.indexed, ms }, 'federated search index loaded'),
      (error) => log.error({ err: error, job: 'federated-index' }, 'federated search index load failed'),
    );
    const probeJobs = overrides.manualProbes ? probes.stopper() : probes.start();
    const agentWrites = transactionRunner(db, database.dialect);
    return {
      agentWrites,
      config,
      clock,
      database,
      tokens,
      registration: new RegistrationService({
        db,
        writes: agentWrites,
        telemetry,
        clock,
        tokens,
        didWebDomain,
        audience: publicUrl,
        requireAudience: config.requireRegistrationAudience,
        schemas: capabilitySchemas,
        limiter: new RegistrationLimiter({
          perAddress: config.registrationRateLimit,
          perPrefix: config.registrationPrefixRateLimit,
          perIpv6Site: config.registrationIpv6SiteRateLimit,
          windowMs: config.registrationRateWindowSeconds * 1000,
        }),
        profileMaxBytes: config.profileMaxBytes,
        proofOfWorkBits: config.registrationPowBits,
      }),
      authentication: new AuthenticationService({
        db,
        clock,
        tokens,
        didWebDomain,
        audience: publicUrl,
        telemetry,
        legacyAuthUntil: config.legacyAuthUntil,
      }),
      agents: new AgentService({
        db,
        writes: agentWrites,
        telemetry,
        clock,
        didWebDomain,
        publicUrl,
        webhookPolicy,
        schemas: capabilitySchemas,
        serviceRecord,
        availability,
        profileCache,
        profileMaxBytes: config.profileMaxBytes,
        remote: federation,
      }),
      capabilitySchemas,
      didResolution: new DidResolutionService({ db, didWebDomain, publicUrl }),
      reviews: new ReviewService({ db, telemetry, clock, didWebDomain, reputation, rateLimit }),
      reputation,
      serviceRecord,
      availability,
      probes,
      search: new SearchService({
        db,
        clock,
        searches: stats,
        index: searchIndex,
        availability,
        publicUrl,
        federated: federatedIndex,
      }),
      federation,
      changeFeed: new ChangeFeedService({ db, publicUrl }),
      transparencyLog: new TransparencyLogService({
        db,
        publicUrl,
        didWebDomain,
        signer: new NoteSigner(
          logOrigin(publicUrl),
          await loadLogSigningKey(db, clock, config.logSigningKey),
        ),
      }),
      stats,
      activity: new ActivityService({ db, clock }),
      agentLabels: new AgentLabelService({ db }),
      build,
      metrics,
      telemetry,
      events,
      invocation,
      agentTasks,
      stopWaiters: async () => {
        federatedIndex.close();
        agentTasks.shutdown();
        await invocation.shutdown();
      },
      close: async () => {
        agentTasks.shutdown();
        await invocation.shutdown();
        await probeJobs.stop();
        await presenceJobs.stop();
        await discoveryJobs.stop();
        await taskMaintenance.stop();
        await federationJobs.stop();
        await federatedIndexLoad.stop();
        await validators.close();
        await events.close();
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}

/** The log's origin (and note key name): the public URL without its scheme, with /log (C2SP tlog-tiles). */
function logOrigin(publicUrl: string): string {
  return `${publicUrl.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/+$/, '')}/log`;
}
