import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './kernel/config.js';
import type { DatabaseHandle } from './db/connect.js';
import { isDatabaseUnavailable } from './db/errors.js';
import { openPostgresForMigrations } from './db/connect.js';
import { MigrationFailedError, NewerDatabaseError, migrateToLatest } from './db/migrations/index.js';
import { DatabaseUnavailableError } from './kernel/errors.js';

/** The driver's or the system's code, under the registry's own wrappers (503 class, failed migration). */
const codeOf = (error: unknown): string | undefined => {
  if (error instanceof DatabaseUnavailableError || error instanceof MigrationFailedError)
    return codeOf(error.cause) ?? (error instanceof DatabaseUnavailableError ? error.code : undefined);
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

const causeOf = <T extends Error>(error: unknown, type: new (...args: never[]) => T): T | undefined => {
  for (let at = error; at instanceof Error; at = at.cause) if (at instanceof type) return at;
  return undefined;
};

/** Below this, a write error on the database's disk is taken for a full disk (SQLite reports some as I/O errors). */
const FULL_DISK_BYTES = 1024 * 1024;

function diskIsFull(directory: string): boolean {
  try {
    const { bavail, bsize } = fs.statfsSync(directory);
    return bavail * bsize < FULL_DISK_BYTES;
  } catch {
    return false;
  }
}

function postgresTarget(url: string): { where: string; user: string; database: string } {
  try {
    const parsed = new URL(url);
    const user = decodeURIComponent(parsed.username) || 'postgres';
    const database = decodeURIComponent(parsed.pathname.slice(1)) || user;
    return { where: `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}`, user, database };
  } catch {
    return {
      where: 'the DATABASE_URL host',
      user: 'the DATABASE_URL user',
      database: 'the DATABASE_URL database',
    };
  }
}

/**
 * Waits for a PostgreSQL that is still starting (container start-up, host reboot): refused
 * connections and "starting up" are retried until DATABASE_STARTUP_WAIT_SECONDS; anything else
 * (wrong password, missing role or database) fails at once, since waiting cannot fix it.
 */
export async function waitForDatabase(database: DatabaseHandle, config: Config, log: Logger): Promise<void> {
  const waitSeconds = config.database.kind === 'postgres' ? (config.database.startupWaitSeconds ?? 0) : 0;
  const giveUpAt = Date.now() + waitSeconds * 1000;
  for (let attempt = 1; ; attempt++) {
    try {
      await database.ping();
      return;
    } catch (error) {
      if (!isDatabaseUnavailable(error) || Date.now() >= giveUpAt) throw error;
      if (attempt === 1)
        log.warn(
          { waitSeconds },
          `PostgreSQL does not accept connections yet; retrying for up to ${waitSeconds} s (DATABASE_STARTUP_WAIT_SECONDS)`,
        );
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, Math.max(0, giveUpAt - Date.now()))));
    }
  }
}

/**
 * The database ready for the registry: reachable (waiting for a PostgreSQL still starting), then
 * migrated. PostgreSQL migrates on a connection of its own, without the pool's statement timeout.
 */
export async function migrateDatabase(
  database: DatabaseHandle,
  config: Config,
  log: Logger,
  onApplied?: (migration: string, ms: number) => void,
): Promise<void> {
  await waitForDatabase(database, config, log);
  if (config.database.kind === 'sqlite') return migrateToLatest(database.db, { log, onApplied });
  const migrating = openPostgresForMigrations(config.database, (error) =>
    log.warn({ err: error }, 'database background error during migrations'),
  );
  try {
    await migrateToLatest(migrating.db, { log, onApplied });
  } finally {
    await migrating.close();
  }
}

/**
 * One sentence for a start-up failure an operator can fix: what is wrong and what to do. Undefined
 * for failures without a known remedy (those are bugs, and keep their stack trace).
 */
export function explainStartupFailure(error: unknown, config: Config): string | undefined {
  const code = codeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  const listening = `${config.network.host}:${config.network.port}`;
  if (code === 'EADDRINUSE')
    return `Port ${config.network.port} is already in use on ${config.network.host}: stop the process listening on it, or set PORT to a free port.`;
  if (code === 'EADDRNOTAVAIL')
    return `HOST ${config.network.host} is not an address of this machine: set HOST to one of its addresses, or 0.0.0.0 for all.`;
  if (code === 'EACCES' && (error as { syscall?: string }).syscall === 'listen')
    return `Not allowed to listen on ${listening} (ports below 1024 need privileges): set PORT to 1024 or above.`;

  const newer = causeOf(error, NewerDatabaseError);
  if (newer !== undefined)
    return `${newer.message}: run that release or a newer one, or restore the backup taken before the upgrade (docs/operations.md, "Upgrades and migrations").`;
  const migration = causeOf(error, MigrationFailedError);
  const rolledBack =
    migration === undefined
      ? ''
      : ` Migration ${migration.migration} was rolled back; the next start runs it again.`;

  if (config.database.kind === 'sqlite') {
    const file = config.database.path;
    // A file-system error names its path: one elsewhere (a missing asset, say) is not the database's.
    const failedPath = (error as { path?: unknown }).path;
    const elsewhere =
      typeof failedPath === 'string' &&
      !path.resolve(failedPath).startsWith(path.dirname(path.resolve(file)) + path.sep) &&
      path.resolve(failedPath) !== path.dirname(path.resolve(file));
    if (elsewhere) return undefined;
    if (
      code === 'ENOSPC' ||
      code === 'SQLITE_FULL' ||
      (code?.startsWith('SQLITE_IOERR') === true && diskIsFull(path.dirname(path.resolve(file))))
    )
      return `The disk of the SQLite database ${file} is full (${code}): free space on it, or set DATABASE_URL=sqlite:<path> to a disk with room, then start again.${rolledBack}`;
    if (code === 'ENOTDIR' || code === 'ENOENT')
      return `Cannot write the SQLite database ${file}: ${message}: fix the path in DATABASE_URL=sqlite:<path>.`;
    // Another node migrating the same file, or a long backup: the wait for its write lock ran out.
    if (code === 'SQLITE_BUSY')
      return `The SQLite database ${file} is locked by another process (SQLITE_BUSY): run one registry per SQLite file, or wait for the other process (another node migrating it, a backup) and start again; SQLITE_BUSY_TIMEOUT_MS sets how long to wait for the lock.${rolledBack}`;
    if (
      code === 'EACCES' ||
      code === 'EPERM' ||
      code === 'EROFS' ||
      code === 'SQLITE_CANTOPEN' ||
      code?.startsWith('SQLITE_READONLY') === true ||
      code === 'SQLITE_IOERR'
    )
      return `Cannot write the SQLite database ${file} (${code}): make its directory writable by this user, or set DATABASE_URL=sqlite:<path> to a writable place.`;
    return undefined;
  }

  const { where, user, database } = postgresTarget(config.database.url);
  if (code === '53100')
    return `PostgreSQL at ${where} has no disk space left (disk_full): free space on the database server's disk, then start again.${rolledBack}`;
  if (code === '3D000')
    return `PostgreSQL database "${database}" does not exist on ${where}: create it (createdb -h ${where.split(':')[0]} -U ${user} ${database}) or fix the database name in DATABASE_URL.`;
  if (code === '28000' && /role/.test(message))
    return `PostgreSQL role "${user}" does not exist on ${where}: create it (createuser -h ${where.split(':')[0]} -U postgres ${user}) or fix the user in DATABASE_URL.`;
  if (code === '28P01' || code === '28000')
    return `PostgreSQL refused the login of "${user}" on ${where}: fix the password in DATABASE_URL or the server's pg_hba.conf.`;
  if (code === '42501')
    return `PostgreSQL role "${user}" may not create the registry's tables in "${database}": grant it CREATE on the database's public schema, or use the owner in DATABASE_URL.`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `PostgreSQL host in DATABASE_URL (${where}) does not resolve: fix the host name.`;
  if (isDatabaseUnavailable(error) || (migration !== undefined && isDatabaseUnavailable(migration.cause))) {
    const seconds = config.database.startupWaitSeconds ?? 0;
    const waited = seconds > 0 ? ` after ${seconds} s of retries` : '';
    return `PostgreSQL at ${where} does not accept connections${waited}: start it, or fix DATABASE_URL (or raise DATABASE_STARTUP_WAIT_SECONDS if it starts slowly).${rolledBack}`;
  }
  return undefined;
}
