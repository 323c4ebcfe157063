import client from 'prom-client';

/** Kinds of federation source: the only label of the federation series, so they stay a handful. */
export type FederationSourceKind = 'peer' | 'a2a' | 'mcp';
export type FederationSourceState = 'ok' | 'error' | 'stopped';

const KINDS: readonly FederationSourceKind[] = ['peer', 'a2a', 'mcp'];
const STATES: readonly FederationSourceState[] = ['ok', 'error', 'stopped'];
/** Series of one scrape share one reading of the log taken within this long. */
const SCRAPE_MS = 1000;
const ROUND_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

/** What the transparency log says of itself at a scrape (modules/transparency-log/). */
export interface TransparencyLogReadings {
  treeSize: number;
  /** Epoch ms of the last checkpoint signed over the then-current tree; undefined before the first. */
  checkpointedAt: number | undefined;
  rebuilds: number;
  signingFailures: number;
}

/**
 * The moving parts beside requests: the transparency log, the search index, federation rounds,
 * migrations and scheduled backups. Every label is from a fixed set (a source kind, never its URL).
 */
export interface OperationsMetrics {
  watchTransparencyLog(read: () => Promise<TransparencyLogReadings>): void;
  /** Agents in the search index, caught up from the change feed at each scrape. */
  watchSearchIndex(agents: () => Promise<number>): void;
  /** The search index was reloaded because the change feed moved backwards (a restored database). */
  searchIndexReloaded(): void;
  /** One round over the sources of one kind ended, after `seconds`; `failed`: it threw (a defect, the database). */
  federationRound(kind: FederationSourceKind, seconds: number, failed: boolean): void;
  /** The sources' states and stored entries by kind, as read after a round of `kind`. */
  federationStatus(
    kind: FederationSourceKind,
    sources: readonly { kind: FederationSourceKind; state: FederationSourceState }[],
    entries: Readonly<Partial<Record<FederationSourceKind, number>>>,
  ): void;
  /** This process applied a migration at start-up. */
  migrationApplied(seconds: number): void;
  /** Migrations this build knows and the database has recorded, once migrated. */
  schemaMigrations(count: number): void;
  /** The last scheduled backup of any node succeeded at `atMs`; this node's own gives its size and duration. */
  backupSucceeded(event: { atMs: number; bytes?: number; seconds?: number }): void;
  backupFailed(): void;
}

export function createOperationsMetrics(registry: client.Registry): OperationsMetrics {
  const registers = [registry];
  const reloads = new client.Counter({
    name: 'registry_search_index_reloads_total',
    help: 'Reloads of the search index because the change feed moved backwards (the database was restored from a backup)',
    labelNames: ['reason'],
    registers,
  });
  reloads.inc({ reason: 'change_feed_backwards' }, 0);
  const roundSeconds = new client.Histogram({
    name: 'registry_federation_round_duration_seconds',
    help: 'Duration of a federation round over the sources of one kind',
    labelNames: ['kind'],
    buckets: ROUND_BUCKETS,
    registers,
  });
  const rounds = new client.Counter({
    name: 'registry_federation_rounds_total',
    help: 'Federation rounds by source kind and outcome (failed: a source failed unexpectedly, see the log)',
    labelNames: ['kind', 'outcome'],
    registers,
  });
  const sourceErrors = new client.Counter({
    name: 'registry_federation_source_errors_total',
    help: 'Sources that ended a round in error (their last error is on the operator status and in the log), by kind',
    labelNames: ['kind'],
    registers,
  });
  const sources = new client.Gauge({
    name: 'registry_federation_sources',
    help: 'Federation sources by kind and state (ok, error, stopped), as read after the last round',
    labelNames: ['kind', 'state'],
    registers,
  });
  const entries = new client.Gauge({
    name: 'registry_federation_entries',
    help: 'Remote entries stored, by the kind of source they came from, as read after the last round',
    labelNames: ['kind'],
    registers,
  });
  const migrations = new client.Counter({
    name: 'registry_migrations_applied_total',
    help: 'Database migrations this process applied at start-up',
    registers,
  });
  const migrationSeconds = new client.Counter({
    name: 'registry_migration_seconds_total',
    help: 'Time this process spent applying database migrations at start-up',
    registers,
  });
  const schema = new client.Gauge({
    name: 'registry_schema_migrations',
    help: 'Migrations recorded in the database once this process migrated it (the same on every node of one release)',
    registers,
  });
  const backupLast = new client.Gauge({
    name: 'registry_backup_last_success_timestamp_seconds',
    help: 'When the last scheduled backup of any node completed (shared in the database; 0: none yet or not scheduled)',
    registers,
  });
  const backupBytes = new client.Gauge({
    name: 'registry_backup_last_size_bytes',
    help: 'Size of the last scheduled backup this node took',
    registers,
  });
  const backupSeconds = new client.Gauge({
    name: 'registry_backup_last_duration_seconds',
    help: 'How long the last scheduled backup this node took ran',
    registers,
  });
  const backupFailures = new client.Counter({
    name: 'registry_backup_failures_total',
    help: 'Scheduled backups that failed (the log says why)',
    registers,
  });

  return {
    watchTransparencyLog: (read) => {
      // One reading serves every series of one scrape (prom-client collects them side by side).
      let reading: { at: number; readings: Promise<TransparencyLogReadings | undefined> } | undefined;
      let failures = 0;
      const current = (): Promise<TransparencyLogReadings | undefined> => {
        if (reading === undefined || Date.now() - reading.at > SCRAPE_MS)
          reading = {
            at: Date.now(),
            readings: read().catch(() => {
              failures += 1;
              return undefined;
            }),
          };
        return reading.readings;
      };
      const series = (
        kind: 'gauge' | 'counter',
        name: string,
        help: string,
        value: (readings: TransparencyLogReadings) => number | undefined,
      ): void => {
        const collect = async function (this: client.Gauge | client.Counter): Promise<void> {
          const readings = await current();
          const read = name.endsWith('_catch_up_failures_total')
            ? failures
            : readings === undefined
              ? undefined
              : value(readings);
          if (read === undefined) return;
          this.reset();
          if (this instanceof client.Gauge) this.set(read);
          else this.inc(read);
        };
        if (kind === 'gauge') new client.Gauge({ name, help, registers, collect });
        else new client.Counter({ name, help, registers, collect });
      };
      series(
        'gauge',
        'registry_transparency_log_tree_size',
        'Leaves of the transparency log as this node serves it (caught up from the database at each scrape)',
        (r) => r.treeSize,
      );
      series(
        'gauge',
        'registry_transparency_log_checkpoint_timestamp_seconds',
        'When this node last signed a checkpoint over the whole log as the database holds it (caught up at each scrape); its age grows while catching up or signing fails',
        (r) => (r.checkpointedAt === undefined ? undefined : r.checkpointedAt / 1000),
      );
      series(
        'counter',
        'registry_transparency_log_rebuilds_total',
        'Times the transparency log was rebuilt from the database after a restore was detected',
        (r) => r.rebuilds,
      );
      series(
        'counter',
        'registry_transparency_log_signing_failures_total',
        'Checkpoints that could not be signed',
        (r) => r.signingFailures,
      );
      series(
        'counter',
        'registry_transparency_log_catch_up_failures_total',
        'Scrapes at which the transparency log could not be caught up from the database or signed',
        () => undefined,
      );
    },
    watchSearchIndex: (agents) => {
      new client.Gauge({
        name: 'registry_search_index_agents',
        help: 'Agents in this node’s search index, caught up from the change feed at each scrape',
        registers,
        async collect() {
          // The database may be unreachable while /metrics is scraped: the last count stays.
          const count = await agents().catch(() => undefined);
          if (count !== undefined) this.set(count);
        },
      });
    },
    searchIndexReloaded: () => reloads.inc({ reason: 'change_feed_backwards' }),
    federationRound: (kind, seconds, failed) => {
      roundSeconds.observe({ kind }, seconds);
      rounds.inc({ kind, outcome: failed ? 'failed' : 'ok' });
    },
    federationStatus: (roundKind, rows, stored) => {
      for (const kind of KINDS) {
        for (const state of STATES)
          sources.set({ kind, state }, rows.filter((row) => row.kind === kind && row.state === state).length);
        entries.set({ kind }, stored[kind] ?? 0);
      }
      const erring = rows.filter((row) => row.kind === roundKind && row.state === 'error').length;
      sourceErrors.inc({ kind: roundKind }, erring);
    },
    migrationApplied: (seconds) => {
      migrations.inc();
      migrationSeconds.inc(seconds);
    },
    schemaMigrations: (count) => schema.set(count),
    backupSucceeded: ({ atMs, bytes, seconds }) => {
      backupLast.set(atMs / 1000);
      if (bytes !== undefined) backupBytes.set(bytes);
      if (seconds !== undefined) backupSeconds.set(seconds);
    },
    backupFailed: () => backupFailures.inc(),
  };
}
