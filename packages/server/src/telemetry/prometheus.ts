import type { Pool } from 'pg';
import type { Logger } from 'pino';
import client from 'prom-client';
import { RequestStats } from './request-stats.js';
import type { Telemetry } from './telemetry.js';
import { createOperationsMetrics, type OperationsMetrics } from './operations-metrics.js';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const INVOCATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);

/** Records one HTTP request; labels are route templates, never raw URLs, so series stay bounded. */
export type RequestObserver = (method: string, route: string, status: number, seconds: number) => void;

export interface RegistryMetrics {
  registry: client.Registry;
  observeRequest: RequestObserver;
  /** Telemetry for the services: counts into metrics and writes the domain events at info. */
  telemetry(log: Logger): Telemetry;
  /** Pool gauges for PostgreSQL (connections in use, idle, waiting), read at each scrape. */
  watchPool(pool: Pool): void;
  /** Profile cache counters and size (modules/agents/profile-cache.ts), read at each scrape. */
  watchProfileCache(cache: ProfileCacheReadings): void;
  /** Active agents by availability status (modules/availability/), counted at each scrape. */
  watchAvailability(count: () => Promise<Record<'online' | 'offline' | 'unknown', number>>): void;
  /** A peer registry stopped being followed (forked log or mismatching records): the alert's metric. */
  federationPeerStopped(peer: string): void;
  /** One availability probe of a webhook agent ended (answered or not). */
  probed(ok: boolean): void;
  render(): Promise<string>;
  /** The transparency log, search index, federation rounds, migrations and scheduled backups. */
  operations: OperationsMetrics;
}

export interface ProfileCacheReadings {
  readonly hits: number;
  readonly misses: number;
  readonly bytes: number;
  readonly size: number;
}

/**
 * One Prometheus registry per context (never the global one), so two registries in one process (tests,
 * several nodes) do not mix their numbers.
 */
export function createRegistryMetrics(labels: { version: string }): RegistryMetrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });

  // By outcome only, never by agent: a flapping agent moves a count, it adds no series.
  const probes = new client.Counter({
    name: 'registry_webhook_probes_total',
    help: 'Availability probes of webhook agents by outcome (answered: a 2xx; failed: anything else)',
    labelNames: ['outcome'],
    registers: [registry],
  });

  new client.Gauge({
    name: 'registry_build_info',
    help: 'Always 1; the version label says which build runs',
    labelNames: ['version'],
    registers: [registry],
  }).set(labels, 1);

  const requestStats = new RequestStats(LATENCY_BUCKETS);
  requestStats.register(registry, 'http_requests_total', 'http_request_duration_seconds');
  const invocations = new client.Counter({
    name: 'registry_invocations_total',
    help: 'Invocations ended, by outcome (completed, failed, webhook_failed, timeout) and delivery mode',
    labelNames: ['outcome', 'delivery'],
    registers: [registry],
  });
  const invocationSeconds = new client.Histogram({
    name: 'registry_invocation_duration_seconds',
    help: 'Time from invocation to its end, by outcome and delivery mode',
    labelNames: ['outcome', 'delivery'],
    buckets: INVOCATION_BUCKETS,
    registers: [registry],
  });
  const openTasks = new client.Gauge({
    name: 'registry_tasks_open',
    help: 'Tasks created through this node that are still pending or processing (their invoker waits); sum over nodes',
    registers: [registry],
  });
  const longPolls = new client.Gauge({
    name: 'registry_long_poll_waiters',
    help: 'Workers waiting in a long poll of GET /api/agent/tasks on this node',
    registers: [registry],
  });
  const webhooks = new client.Counter({
    name: 'registry_webhook_deliveries_total',
    help: 'Webhook POSTs, by outcome: completed (answered with output), accepted (202, result later), failed',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const webhookSeconds = new client.Histogram({
    name: 'registry_webhook_delivery_duration_seconds',
    help: 'Time a webhook took to answer, by outcome',
    labelNames: ['outcome'],
    buckets: INVOCATION_BUCKETS,
    registers: [registry],
  });
  const registrations = new client.Counter({
    name: 'registry_registrations_total',
    help: 'Agents registered, by key type',
    labelNames: ['key_type'],
    registers: [registry],
  });
  const deactivations = new client.Counter({
    name: 'registry_deactivations_total',
    help: 'Agents deactivated',
    registers: [registry],
  });
  const reviews = new client.Counter({
    name: 'registry_reviews_total',
    help: 'Reviews submitted, by whether they cite a completed invocation',
    labelNames: ['verified'],
    registers: [registry],
  });
  const databaseErrors = new client.Counter({
    name: 'registry_database_errors_total',
    help: 'Database failures: unreachable, dropped connections, timeouts, background errors',
    registers: [registry],
  });

  const deprecatedAuthentication = new client.Counter({
    name: 'registry_deprecated_authentication_total',
    help: 'Requests that used an authentication form kept for a deprecation window (LEGACY_AUTH_UNTIL), by form (token_without_aud, login_without_audience) and outcome (accepted, refused)',
    labelNames: ['form', 'outcome'],
    registers: [registry],
  });

  // Series read from their source at each scrape, not updated on the hot path.
  const gauge = (name: string, help: string, read: () => number) =>
    new client.Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  const counter = (name: string, help: string, read: () => number) =>
    new client.Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });

  const observeRequest: RequestObserver = (method, route, status, seconds) =>
    requestStats.observe(METHODS.has(method) ? method : 'OTHER', route, status, seconds);

  const peerStops = new client.Counter({
    name: 'registry_federation_peer_stops_total',
    help: 'Times a peer registry stopped being followed: its log forked or it served records that did not match (docs/federation.md)',
    labelNames: ['peer'],
    registers: [registry],
  });
  return {
    registry,
    observeRequest,
    telemetry: (log) => ({
      agentRegistered: ({ did, keyType }) => {
        registrations.inc({ key_type: keyType });
        log.info({ event: 'agent_registered', did, keyType }, 'agent registered');
      },
      agentDeactivated: ({ did }) => {
        deactivations.inc();
        log.info({ event: 'agent_deactivated', did }, 'agent deactivated');
      },
      invocationEnded: (event) => {
        const labels = { outcome: event.outcome, delivery: event.delivery };
        invocations.inc(labels);
        invocationSeconds.observe(labels, event.durationMs / 1000);
        log.info({ event: 'invocation_ended', ...event }, `invocation ${event.outcome}`);
      },
      webhookDelivered: ({ outcome, durationMs }) => {
        webhooks.inc({ outcome });
        webhookSeconds.observe({ outcome }, durationMs / 1000);
      },
      reviewSubmitted: (event) => {
        reviews.inc({ verified: String(event.verified) });
        log.info({ event: 'review_submitted', ...event }, 'review submitted');
      },
      invocationsWaiting: (delta) => openTasks.inc(delta),
      longPollWaiters: (delta) => longPolls.inc(delta),
      databaseError: () => databaseErrors.inc(),
      deprecatedAuthentication: ({ form, accepted }) =>
        deprecatedAuthentication.inc({ form, outcome: accepted ? 'accepted' : 'refused' }),
    }),
    watchPool: (pool) => {
      gauge('registry_db_pool_connections', 'PostgreSQL connections open in the pool', () => pool.totalCount);
      gauge(
        'registry_db_pool_in_use',
        'PostgreSQL connections running a query',
        () => pool.totalCount - pool.idleCount,
      );
      gauge(
        'registry_db_pool_waiting',
        'Queries waiting for a free PostgreSQL connection',
        () => pool.waitingCount,
      );
      gauge('registry_db_pool_max', 'Largest pool size (DATABASE_POOL_SIZE)', () => pool.options.max ?? 0);
    },
    watchProfileCache: (cache) => {
      counter(
        'registry_profile_cache_hits_total',
        'GET profile answers served from the profile cache (the agent unchanged since it was cached)',
        () => cache.hits,
      );
      counter(
        'registry_profile_cache_misses_total',
        'GET profile reads not answered from the profile cache (read, mapped and serialised)',
        () => cache.misses,
      );
      gauge(
        'registry_profile_cache_bytes',
        'Memory the profile cache holds (PROFILE_CACHE_MB bounds it)',
        () => cache.bytes,
      );
      gauge(
        'registry_profile_cache_entries',
        'Agents whose serialised profile the cache holds',
        () => cache.size,
      );
    },
    watchAvailability: (count) => {
      new client.Gauge({
        name: 'registry_agents_by_availability',
        help: 'Active agents by availability status (online, offline, unknown), read from the database at each scrape',
        labelNames: ['status'],
        registers: [registry],
        async collect() {
          // The database may be unreachable while /metrics is scraped: the last counts stay.
          const counts = await count().catch(() => undefined);
          if (counts === undefined) return;
          for (const status of ['online', 'offline', 'unknown'] as const)
            this.set({ status }, counts[status]);
        },
      });
    },
    federationPeerStopped: (peer) => peerStops.inc({ peer }),
    probed: (ok) => probes.inc({ outcome: ok ? 'answered' : 'failed' }),
    render: () => registry.metrics(),
    operations: createOperationsMetrics(registry),
  };
}
