import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

/**
 * A PostgreSQL cluster of the test's own (initdb under the temp dir, its own port), so the test may
 * restart or stop it without touching the shared server other developers' tests use.
 */
const BIN_DIR = process.env.TEST_POSTGRES_BIN_DIR ?? '/usr/lib/postgresql/15/bin';

/** Why the private-cluster tests cannot run here, or undefined when they can. */
export function privateClusterUnavailable(): string | undefined {
  for (const binary of ['initdb', 'pg_ctl', 'postgres']) {
    if (!fs.existsSync(path.join(BIN_DIR, binary)))
      return `PostgreSQL server binaries not found in ${BIN_DIR} (set TEST_POSTGRES_BIN_DIR)`;
  }
  return undefined;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
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

export async function startPrivateCluster(): Promise<PrivateCluster> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-private-pg-'));
  const data = path.join(root, 'data');
  const port = await freePort();
  // PostgreSQL refuses to run as root: the cluster belongs to the postgres user when we are root.
  const asPostgres = process.getuid?.() === 0;
  if (asPostgres) execFileSync('chown', ['postgres', root]);
  const run = (binary: string, args: string[]): void => {
    const command = path.join(BIN_DIR, binary);
    if (asPostgres) execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { stdio: 'pipe' });
    else execFileSync(command, args, { stdio: 'pipe' });
  };
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
  const pgCtl = (args: string[]) =>
    run('pg_ctl', ['-D', data, '-l', path.join(root, 'server.log'), '-w', '-t', '60', ...args]);
  pgCtl(['-o', options, 'start']);
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
    restart: (mode) => pgCtl(['-m', mode, 'restart', '-o', options]),
    stop: (mode) => pgCtl(['-m', mode, 'stop']),
    start: () => pgCtl(['-o', options, 'start']),
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

/** The registry as its own process (`src/main.ts`), so a crash shows as an exit, not a dead test runner. */
export interface RegistryProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

export async function startRegistryProcess(env: Record<string, string>): Promise<RegistryProcess> {
  const port = await freePort();
  const serverRoot = path.resolve(import.meta.dirname, '..');
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: serverRoot,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`registry exited at start: ${output}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
