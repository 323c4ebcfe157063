import pino from 'pino';
import { systemClock, type Clock } from './kernel/clock.js';
import type { Config } from './kernel/config.js';
import { Lifecycle } from './kernel/lifecycle.js';
import { WebhookNetworkPolicy, systemResolver, type HostResolver } from './kernel/network-policy.js';
import { readBuildInfo, type RunningBuild } from './kernel/version.js';
import { openDatabase, type DatabaseHandle } from './db/connect.js';
import type { TransactionRunner } from './db/group-commit.js';
import { createRegistryMetrics, type RegistryMetrics } from './telemetry/prometheus.js';
import type { Telemetry } from './telemetry/telemetry.js';
import { createIdentityModule } from './modules/identity/identity-module.js';
import type { TokenService } from './modules/identity/tokens.js';
import { createCapabilitiesModule } from './modules/capabilities/capabilities-module.js';
import type { CapabilitySchemas } from './modules/capabilities/capability-schemas.js';
import { ServiceRecordService } from './modules/service-record/service-record.js';
import { createAvailabilityModule } from './modules/availability/availability-module.js';
import type { AvailabilityService } from './modules/availability/availability.js';
import type { WebhookProber } from './modules/availability/webhook-probes.js';
import { createAgentsModule } from './modules/agents/agents-module.js';
import type { AgentLabelService } from './modules/agents/agent-labels.js';
import type { AgentService } from './modules/agents/agents.js';
import type { AuthenticationService } from './modules/agents/authentication.js';
import type { DidResolutionService } from './modules/agents/did-resolution.js';
import type { RegistrationService } from './modules/agents/registration.js';
import { createTasksModule } from './modules/tasks/tasks-module.js';
import type { AgentTaskService } from './modules/tasks/agent-tasks.js';
import type { TaskEvents } from './modules/tasks/events.js';
import type { InvocationService } from './modules/tasks/invocation.js';
import { createReviewsModule } from './modules/reviews/reviews-module.js';
import type { ReputationService } from './modules/reviews/reputation.js';
import type { ReviewService } from './modules/reviews/reviews.js';
import type { ChangeFeedService } from './modules/agents/change-feed.js';
import { createSearchModule } from './modules/search/search-module.js';
import type { SearchService } from './modules/search/search.js';
import { createStatsModule } from './modules/stats/stats-module.js';
import type { ActivityService } from './modules/stats/activity.js';
import type { StatsService } from './modules/stats/stats.js';
import { createTransparencyLogModule } from './modules/transparency-log/transparency-log-module.js';
import type { TransparencyLogService } from './modules/transparency-log/transparency-log.js';
import { ArdService } from './modules/ard/ard-service.js';
import { ardPublisher } from './modules/ard/urn.js';
import { createFederationModule } from './modules/federation/federation-module.js';
import type { FederationService } from './modules/federation/federation.js';
import type { EntryProber } from './modules/federation/entry-probes.js';
import type { ObservationService } from './modules/federation/observations.js';
import type { WatchEvent } from './modules/watches/watch-events.js';
import type { EntryChange } from './modules/federation/observations.js';
import { migrateDatabase } from './startup.js';
import { BackupScheduler } from './backup-schedule.js';
import { MIGRATIONS } from './db/migrations/index.js';
import { createWatchesModule } from './modules/watches/watches-module.js';
import type { WatchesModule } from './modules/watches/watches-module.js';
import type { WatchService } from './modules/watches/watches.js';
import { NotFoundError } from './kernel/errors.js';
import { createKeyRotationModule } from './modules/key-rotation/key-rotation-module.js';
import type { KeyRotationService } from './modules/key-rotation/key-rotation.js';
import { createModerationModule } from './modules/moderation/moderation-module.js';
import type { ModerationService } from './modules/moderation/moderation.js';
import type { ReportService } from './modules/moderation/reports.js';
import type { AppealService } from './modules/moderation/appeals.js';
import type { KeyRecoveryService } from './modules/key-rotation/key-recovery.js';
import { createDomainsModule } from './modules/domains/domains-module.js';
import type { DomainService } from './modules/domains/domains.js';
import { domainsOfAgents, holdersOf } from './modules/domains/domain-store.js';

/** Everything a request may need, built once by createContext: the composition root. */
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
  /** Agentic Resource Discovery over the same search (docs/ard.md). */
  ard: ArdService;
  /** Remote entries, referrals and the federation sources' status (modules/federation/). */
  federation: FederationService;
  /** What probes of imported entries found; onEntryChange is the hook for their changes. */
  observations: ObservationService;
  /** Probes of imported MCP servers and A2A card endpoints (docs/federation.md, "Observed"). */
  entryProbes: EntryProber;
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
  /** Watches of agents and remote entries, and their deliveries (docs/watches.md). */
  watches: WatchService;
  /** The watches' background work as one call (tests run it instead of waiting for its timers). */
  watchJobs: Pick<WatchesModule, 'runOnce'>;
  /** Rotation of did:web agents' keys (docs/identity.md). */
  keyRotation: KeyRotationService;
  /** Recovery keys and their timelocked recoveries; `finishDue()` is the sweep tests run. */
  keyRecovery: KeyRecoveryService;
  /** Verified domains and handles (docs/identity.md); `recheckDue()` is the re-check round tests run. */
  domains: DomainService;
  /** Abuse reports (docs/moderation.md). */
  reports: ReportService;
  /** The operator's suspensions and restorations, and the public list of them. */
  moderation: ModerationService;
  /** Suspended agents' appeals, signed with their keys. */
  appeals: AppealService;
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
  /** No background watch rounds: tests run them with watchJobs.runOnce(). */
  manualWatches?: boolean;
  /** No background domain re-checks: tests run them with domains.recheckDue(). */
  manualDomainChecks?: boolean;
}

/**
 * Builds every module in order, each on what the ones before it made. Whatever starts (the database,
 * worker threads, event channels, timers) is registered on one lifecycle as it starts: close() and a
 * failure part-way through both stop it all in reverse, so a failed start leaves nothing running.
 */
export async function createContext(config: Config, overrides: ContextOverrides = {}): Promise<AppContext> {
  const clock = overrides.clock ?? systemClock;
  const log =
    overrides.logStream === undefined
      ? pino({ level: config.operations.logLevel })
      : pino({ level: config.operations.logLevel }, overrides.logStream);
  const build = readBuildInfo();
  const metrics = createRegistryMetrics({ version: build.version });
  const telemetry = metrics.telemetry(log);
  const lifecycle = new Lifecycle();
  const database = lifecycle.add(
    'database',
    openDatabase(config.database, (error) => {
      telemetry.databaseError({ error });
      log.warn({ err: error }, 'database background error (idle connection lost or WAL checkpoint failed)');
    }),
    (handle) => handle.close(),
  );
  if (database.pool !== undefined) metrics.watchPool(database.pool);
  try {
    await migrateDatabase(database, config, log, (_migration, ms) =>
      metrics.operations.migrationApplied(ms / 1000),
    );
    metrics.operations.schemaMigrations(MIGRATIONS.length);
    const { db } = database;
    const common = { db, clock, log, config, lifecycle, metrics, telemetry };
    const { tokens } = await createIdentityModule(db, clock, config);
    const { capabilitySchemas } = createCapabilitiesModule(lifecycle);
    const serviceRecord = new ServiceRecordService({ db, clock });
    const webhookPolicy = new WebhookNetworkPolicy(
      config.tasks.webhookAllowPrivateNetworks,
      overrides.resolveHost ?? systemResolver,
    );
    const federation = await createFederationModule({
      ...common,
      policy: webhookPolicy,
      manualProbes: overrides.manualProbes === true,
    });
    // Probes reach webhooks through the tasks module's deliverer, built next: they run only once jobs start.
    const availability = createAvailabilityModule({
      ...common,
      probes: config.probes,
      manualProbes: overrides.manualProbes === true,
      ping: (target, signal) => tasks.webhookDeliverer.ping(target, signal),
    });
    const tasks = await createTasksModule({
      ...common,
      database,
      schemas: capabilitySchemas,
      webhookPolicy,
      presence: availability.availability,
      outcomes: availability.probes,
      remote: federation.federation,
      onFinished: (trx, id) => serviceRecord.recordFinished(trx, id),
    });
    const agents = createAgentsModule({
      ...common,
      database,
      tokens,
      webhookPolicy,
      schemas: capabilitySchemas,
      serviceRecord,
      availability: availability.availability,
      remote: federation.federation,
      // Built after agents (it writes through agents' writer): read through it once it exists.
      keyRecoveries: { pending: (did) => keys.keyRecovery.pending(did) },
      identityClaims: { forProfile: (did) => domains.domains.forProfile(did) },
      // Built after agents too (it writes through agents' writer).
      suspensions: { of: (did) => moderation.moderation.suspensionOf(did) },
    });
    const keys = createKeyRotationModule({ ...common, writes: agents.agentWrites, tokens });
    const domains = createDomainsModule({ ...common, writes: agents.agentWrites, policy: webhookPolicy });
    const moderation = createModerationModule({ db, clock, config, writes: agents.agentWrites });
    const reviews = createReviewsModule({ ...common, alsoRefreshed: serviceRecord });
    const stats = createStatsModule(common);
    const { search } = await createSearchModule({
      ...common,
      publicUrl: config.identity.publicUrl,
      availability: availability.availability,
      profileCache: agents.profileCache,
      searches: stats.stats,
      federated: federation.federatedIndex,
      domainHolders: (domain) => holdersOf(db, domain),
      domainsOf: (dids) => domainsOfAgents(db, dids),
    });
    const { transparencyLog } = await createTransparencyLogModule(db, clock, config, metrics.operations);
    const { publicUrl, didWebDomain } = config.identity;
    const ard = new ArdService({
      search,
      db,
      site: { publicUrl, publisher: ardPublisher(publicUrl) },
      didWebDomain,
      referrals: config.network.ardReferrals,
      domainsOf: (dids) => domainsOfAgents(db, dids),
    });
    const watches = createWatchesModule({
      ...common,
      policy: webhookPolicy,
      send: (message, signal) => tasks.webhookDeliverer.sendEvent(message, signal),
      availability: async (dids) =>
        new Map(
          [...(await availability.availability.statuses(dids))].map(([did, { status }]) => [did, status]),
        ),
      targets: {
        kindOf: async (target) => {
          const found = async (read: () => Promise<unknown>) =>
            read().then(
              () => true,
              (error: unknown) => {
                if (error instanceof NotFoundError) return false;
                throw error;
              },
            );
          if (target.startsWith('did:'))
            return (await found(() => agents.agents.getProfile(target))) ? 'agent' : undefined;
          return (await found(() => federation.federation.entry(target))) ? 'entry' : undefined;
        },
      },
    });
    // What the probes of imported entries find reaches the entries' watchers.
    federation.observations.onEntryChange((change) => {
      watches.watches
        .publish(entryWatchEvent(change))
        .catch((error: unknown) =>
          log.error({ err: error, entry: change.entryId }, 'watches: an entry change was not queued'),
        );
    });
    // Background work last, once everything it touches exists.
    stats.startJobs();
    reviews.startJobs();
    tasks.startJobs();
    availability.startJobs();
    federation.startJobs();
    const { backups } = config.operations;
    if (backups !== undefined)
      lifecycle.add(
        'scheduled backups',
        new BackupScheduler({
          db,
          clock,
          log,
          database: config.database,
          schedule: backups,
          metrics: metrics.operations,
        }).start(),
        (jobs) => jobs.stop(),
      );
    if (overrides.manualWatches !== true) watches.startJobs();
    keys.startJobs();
    if (overrides.manualDomainChecks !== true) domains.startJobs();
    return {
      config,
      clock,
      database,
      tokens,
      capabilitySchemas,
      serviceRecord,
      registration: agents.registration,
      agentWrites: agents.agentWrites,
      authentication: agents.authentication,
      agents: agents.agents,
      didResolution: agents.didResolution,
      agentLabels: agents.agentLabels,
      events: tasks.events,
      invocation: tasks.invocation,
      agentTasks: tasks.agentTasks,
      availability: availability.availability,
      probes: availability.probes,
      reviews: reviews.reviews,
      reputation: reviews.reputation,
      search,
      changeFeed: agents.changeFeed,
      stats: stats.stats,
      activity: stats.activity,
      transparencyLog,
      ard,
      federation: federation.federation,
      observations: federation.observations,
      entryProbes: federation.entryProbes,
      build,
      metrics,
      telemetry,
      watches: watches.watches,
      watchJobs: watches,
      keyRotation: keys.keyRotation,
      keyRecovery: keys.keyRecovery,
      domains: domains.domains,
      reports: moderation.reports,
      moderation: moderation.moderation,
      appeals: moderation.appeals,
      stopWaiters: async () => {
        federation.federatedIndex.close();
        await tasks.stopWaiters();
      },
      close: () => lifecycle.close(),
    };
  } catch (error) {
    await lifecycle
      .close()
      .catch((closeError: unknown) => log.error({ err: closeError }, 'closing what had started failed'));
    throw error;
  }
}

/** A change the probes of an imported entry found, as the event its watchers receive. */
function entryWatchEvent(change: EntryChange): WatchEvent {
  return change.kind === 'tools_changed'
    ? {
        type: 'entry.tools_changed',
        target: change.entryId,
        time: change.observedAt,
        data: {
          tools_digest: change.after,
          previous_tools_digest: change.before,
          tools_count: change.toolsCount,
        },
      }
    : {
        type: 'entry.status_changed',
        target: change.entryId,
        time: change.observedAt,
        data: { status: change.after, previous_status: change.before },
      };
}
