import { sql, type Kysely, type KyselyPlugin, type Migration } from 'kysely';
import type { Db } from '../connect.js';
import { sqlDialect } from '../dialect.js';
import * as core from './001-core.js';
import * as tasks from './002-tasks.js';
import * as discovery from './003-discovery.js';
import * as searchActiveOnly from './004-search-active-only.js';
import * as usedSignatures from './005-used-signatures.js';
import * as invocationIdempotency from './006-invocation-idempotency.js';
import * as trust from './007-trust.js';
import * as changeFeed from './008-change-feed.js';
import * as searchInMemory from './009-search-in-memory.js';
import * as pendingTasksIndex from './010-pending-tasks-index.js';
import * as taskBounds from './011-task-bounds.js';
import * as registrationLimits from './012-registration-limits.js';
import * as availability from './013-availability.js';
import * as transparencyLog from './014-transparency-log.js';
import * as webhookProbes from './015-webhook-probes.js';
import * as federation from './017-federation.js';
import * as peerFollowState from './018-peer-follow-state.js';
import * as logRecordsRowid from './019-log-records-rowid.js';
import * as invocationClientQuota from './020-invocation-client-quota.js';
import * as entryProbes from './021-entry-probes.js';
import * as logEveryAgent from './022-log-every-agent.js';
import * as watches from './022-watches.js';
import * as keyRotation from './023-key-rotation.js';
import * as moderation from './025-moderation.js';
import * as domains from './026-domains.js';
import * as presenceStopped from './027-presence-stopped.js';
import * as homeReports from './028-home-reports.js';
import * as homeLive from './029-home-live.js';

/** Explicit, ordered list: a migration is never discovered from the file system at run time. */
export const MIGRATIONS: readonly (readonly [name: string, migration: Migration])[] = [
  ['001-core', core],
  ['002-tasks', tasks],
  ['003-discovery', discovery],
  ['004-search-active-only', searchActiveOnly],
  ['005-used-signatures', usedSignatures],
  ['006-invocation-idempotency', invocationIdempotency],
  ['007-trust', trust],
  ['008-change-feed', changeFeed],
  ['009-search-in-memory', searchInMemory],
  ['010-pending-tasks-index', pendingTasksIndex],
  ['011-task-bounds', taskBounds],
  ['012-registration-limits', registrationLimits],
  ['013-availability', availability],
  ['014-transparency-log', transparencyLog],
  ['015-webhook-probes', webhookProbes],
  ['017-federation', federation],
  ['018-peer-follow-state', peerFollowState],
  ['019-log-records-rowid', logRecordsRowid],
  ['020-invocation-client-quota', invocationClientQuota],
  ['021-entry-probes', entryProbes],
  ['022-log-every-agent', logEveryAgent],
  ['022-watches', watches],
  ['023-key-rotation', keyRotation],
  ['025-moderation', moderation],
  ['026-domains', domains],
  ['027-presence-stopped', presenceStopped],
  ['028-home-reports', homeReports],
  ['029-home-live', homeLive],
];

/**
 * The database holds migrations this release does not know: a newer release migrated it. Nothing
 * was changed; the way out is that release, or the backup taken before the upgrade.
 */
export class NewerDatabaseError extends Error {
  constructor(readonly unknownMigrations: readonly string[]) {
    super(
      `The database was migrated by a newer release of the registry (it has migration ${unknownMigrations.join(', ')}, unknown to this one)`,
    );
    this.name = 'NewerDatabaseError';
  }
}

/** A migration that failed; it was rolled back, and the ones before it stay applied. */
export class MigrationFailedError extends Error {
  constructor(
    readonly migration: string,
    cause: unknown,
  ) {
    super(
      `Database migration ${migration} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    );
    this.name = 'MigrationFailedError';
  }
}

export interface MigrateOptions {
  /** One line per applied migration with its duration (an upgrade of a large database takes a while). */
  log?: { info(fields: object, message: string): void };
  /**
   * Called after each statement of a migration's transaction (its own statements, then the row that
   * records it), before the commit: the kill-during-migration test ends the process here.
   */
  afterStatement?: (migration: string, statement: number) => void | Promise<void>;
  /** Stop after this migration (tests build the database of an earlier release). */
  until?: string;
  /** Told of each migration applied, once committed (the metrics). */
  onApplied?: (migration: string, ms: number) => void;
}

// The table Kysely's Migrator kept, so databases migrated by earlier releases read the same history.
const HISTORY = 'kysely_migration';
/** Any constant: every node takes the same PostgreSQL advisory lock around each migration. */
export const MIGRATION_LOCK_ID = 7_354_912_001;

/**
 * Applies the pending migrations in list order, each in its own transaction together with its row in
 * the history table, on both dialects: a process killed mid-migration leaves the database as it was
 * before that migration, and the next start runs it again. Kysely's Migrator runs SQLite migrations
 * outside any transaction (its adapter reports no transactional DDL, though SQLite's DDL is
 * transactional), so an interrupted one left half its tables behind.
 */
export async function migrateToLatest(db: Db, options: MigrateOptions = {}): Promise<void> {
  const dialect = sqlDialect(db);
  const known = new Set(MIGRATIONS.map(([name]) => name));
  const last = options.until ?? MIGRATIONS[MIGRATIONS.length - 1]?.[0];
  let announced = false;
  for (;;) {
    const done = await db.connection().execute(async (connection) => {
      // SQLite: `begin immediate` takes the write lock first, so two processes on one file take turns
      // (the busy timeout waits) instead of both reading the history and then colliding.
      await sql.raw(dialect === 'sqlite' ? 'begin immediate' : 'begin').execute(connection);
      try {
        if (dialect === 'postgres')
          await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`.execute(connection);
        await sql`create table if not exists ${sql.table(HISTORY)} (
          name varchar(255) not null primary key,
          timestamp varchar(255) not null
        )`.execute(connection);
        const applied = await sql<{ name: string }>`select name from ${sql.table(HISTORY)}`.execute(
          connection,
        );
        const appliedNames = new Set(applied.rows.map((row) => row.name));
        const unknown = [...appliedNames].filter((name) => !known.has(name)).sort();
        if (unknown.length > 0) throw new NewerDatabaseError(unknown);
        const next = MIGRATIONS.find(([name]) => !appliedNames.has(name));
        if (next === undefined || (last !== undefined && appliedNames.has(last))) {
          await sql`commit`.execute(connection);
          return true;
        }
        const [name, migration] = next;
        if (!announced) {
          announced = true;
          const lastIndex =
            last === undefined ? MIGRATIONS.length : MIGRATIONS.findIndex(([known]) => known === last) + 1;
          const pending = MIGRATIONS.slice(0, lastIndex)
            .map(([known]) => known)
            .filter((known) => !appliedNames.has(known));
          options.log?.info(
            { pending },
            `migrating the database: ${pending.length} pending, ${pending[0]} to ${pending[pending.length - 1]}`,
          );
        }
        const started = performance.now();
        try {
          // Migrations are written against tables, not the application's schema types.
          const untyped = connection as unknown as Kysely<unknown>;
          const steps =
            options.afterStatement === undefined ? untyped : counted(untyped, name, options.afterStatement);
          await migration.up(steps);
          await sql`insert into ${sql.table(HISTORY)} (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(
            steps,
          );
          await sql`commit`.execute(connection);
        } catch (error) {
          throw new MigrationFailedError(name, error);
        }
        const ms = Math.round(performance.now() - started);
        options.log?.info({ migration: name, ms }, `database migration ${name} applied in ${ms} ms`);
        options.onApplied?.(name, ms);
        return false;
      } catch (error) {
        await sql`rollback`.execute(connection).catch(() => undefined);
        throw error;
      }
    });
    if (done) return;
  }
}

/** The connection with a hook after each statement it runs. */
function counted(
  connection: Kysely<unknown>,
  migration: string,
  afterStatement: NonNullable<MigrateOptions['afterStatement']>,
): Kysely<unknown> {
  let statement = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      statement += 1;
      await afterStatement(migration, statement);
      return args.result;
    },
  };
  return connection.withPlugin(plugin);
}
