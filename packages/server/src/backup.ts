import { spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { DatabaseConfig } from './kernel/config.js';

/** A backup that cannot be made, with what to do about it (one line for the operator). */
export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

/** Temporary files and copying processes of backups under way, for when the process is told to stop. */
const partials = new Set<string>();
const copiers = new Set<ChildProcess>();

/** Ends every backup under way: stops its copying process and removes its temporary file (the process then exits). */
export function abandonBackups(): void {
  for (const child of copiers) child.kill('SIGTERM');
  for (const file of partials) rmSync(file, { force: true });
  partials.clear();
}

export interface BackupOptions {
  /** Replace an existing file at the destination (refused otherwise). */
  overwrite: boolean;
}

export interface BackupResult {
  file: string;
  bytes: number;
  kind: DatabaseConfig['kind'];
}

/**
 * A consistent copy of the registry's database at `destination`, made while the registry runs.
 * SQLite: `VACUUM INTO` reads one snapshot and writes it out in a single pass, so writers never make
 * it start over (the online backup API restarts whenever another connection writes, and on a busy
 * registry never finishes). PostgreSQL: `pg_dump --format=custom` (one repeatable-read snapshot),
 * which pg_restore reads. Either is written under a temporary name in the destination's directory and
 * given its name only once complete, so the destination never holds a partial backup.
 */
export async function backupDatabase(
  database: DatabaseConfig,
  destination: string,
  options: BackupOptions,
): Promise<BackupResult> {
  const file = path.resolve(destination);
  // Refused before the copy is made: the last step could never give a directory's name to a file.
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory() === true)
    throw new BackupError(
      `${file} is a directory: name the backup file, e.g. ${path.join(file, 'registry-backup')}`,
    );
  if (!options.overwrite && existsSync(file))
    throw new BackupError(`${file} already exists: choose another file name, or pass --force to replace it`);
  const directory = path.dirname(file);
  try {
    mkdirSync(directory, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new BackupError(
      `Cannot create the directory ${directory} (${codeOf(error)}): choose a writable place`,
    );
  }
  const partial = path.join(directory, `.${path.basename(file)}.partial-${process.pid}`);
  partials.add(partial);
  try {
    // The copy holds the token signing key and every agent's data: readable by its owner only, whatever
    // the umask. VACUUM INTO and pg_dump both write into an empty file that exists, keeping its mode.
    rmSync(partial, { force: true });
    closeSync(openSync(partial, 'wx', 0o600));
    if (database.kind === 'sqlite') await sqliteCopy(database.path, database.busyTimeoutMs, partial);
    else await pgDump(database.url, partial);
    syncFile(partial);
    if (options.overwrite) renameSync(partial, file);
    else {
      // A hard link fails if the name was taken meanwhile, where a rename would replace it.
      try {
        linkSync(partial, file);
      } catch (error) {
        if (codeOf(error) === 'EEXIST')
          throw new BackupError(
            `${file} appeared while the backup ran: choose another file name, or pass --force`,
          );
        throw error;
      }
      rmSync(partial);
    }
    syncFile(directory);
  } finally {
    rmSync(partial, { force: true });
    partials.delete(partial);
  }
  return { file, bytes: statSync(file).size, kind: database.kind };
}

/**
 * VACUUM INTO and quick_check are synchronous and may run for minutes on a large file: in this process
 * they would hold the event loop, so a stop signal could not be handled until the copy had taken its
 * name. They run in a process of their own (backup-sqlite-main.ts), stopped like pg_dump.
 */
function sqliteCopy(source: string, busyTimeoutMs: number | undefined, target: string): Promise<void> {
  if (source === ':memory:')
    throw new BackupError('DATABASE_URL names an in-memory SQLite database: nothing to back up');
  if (!existsSync(source))
    throw new BackupError(
      `There is no SQLite database at ${source}: check DATABASE_URL (the registry creates it at its first start)`,
    );
  // The same extension as this module: .ts under tsx (tests), .js once built.
  const self = fileURLToPath(import.meta.url);
  const main = path.join(path.dirname(self), `backup-sqlite-main${path.extname(self)}`);
  const child = spawn(
    process.execPath,
    [...process.execArgv, main, source, String(busyTimeoutMs ?? 5000), target],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  copiers.add(child);
  child.once('exit', () => copiers.delete(child));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new BackupError(stderr.trim() || `the SQLite copy stopped (${signal ?? `exit status ${code}`})`),
        );
    });
  });
}

/** The copy itself, in the process sqliteCopy starts: throws BackupError with what went wrong. */
export function vacuumInto(source: string, busyTimeoutMs: number, target: string): void {
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    db.prepare('VACUUM INTO ?').run(target);
  } catch (error) {
    throw new BackupError(`SQLite could not copy ${source} to ${target}: ${(error as Error).message}`);
  } finally {
    db.close();
  }
  const copy = new Database(target, { readonly: true, fileMustExist: true });
  try {
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok')
      throw new BackupError(`The copy of ${source} does not pass SQLite's quick_check (${String(check)})`);
  } finally {
    copy.close();
  }
}

/** The password goes to pg_dump through its environment, not its command line (visible to `ps`). */
function pgDump(url: string, target: string): Promise<void> {
  const command = 'pg_dump';
  const parsed = new URL(url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = '';
  const child = spawn(
    command,
    ['--format=custom', `--file=${target}`, '--no-password', `--dbname=${parsed.href}`],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: password === '' ? process.env : { ...process.env, PGPASSWORD: password },
    },
  );
  copiers.add(child);
  child.once('exit', () => copiers.delete(child));
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      reject(
        codeOf(error) === 'ENOENT'
          ? new BackupError(
              `${command} is not installed or not on PATH: install PostgreSQL's client programs of the server's major version (e.g. apt-get install postgresql-client-15)`,
            )
          : error,
      );
    });
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new BackupError(`pg_dump failed (${signal ?? `exit status ${code}`}); its own message is above`),
        );
    });
  });
}

function syncFile(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : String(error);
}
