import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

const SERVER_DIR = new URL('../../server/', import.meta.url);
const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The registry's token key, known to tests so they can mint tokens the registry accepts (or not). */
export const tokenSigningKey = crypto.generateKeyPairSync('ed25519').privateKey;
const tokenSigningPem = tokenSigningKey.export({ format: 'pem', type: 'pkcs8' }).toString();

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function sqliteDatabase(): Promise<TestDatabase> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-registry-'));
  return {
    url: `sqlite:${path.join(dir, 'registry.db')}`,
    drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export async function postgresDatabase(): Promise<TestDatabase> {
  const name = `sdk_test_${crypto.randomBytes(6).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
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

export interface RegistryProcess {
  url: string;
  port: number;
  /** Starts the registry (again) on the same port and database. */
  start(): Promise<void>;
  /** SIGTERM, and waits for the process to exit. */
  stop(): Promise<void>;
}

/**
 * A real registry as its own process (`src/main.ts` through tsx), as users run it: the SDK tests talk
 * to it over HTTP only, and can stop and restart it.
 */
export async function registryProcess(
  database: TestDatabase,
  options: { publicUrl?: string; env?: Record<string, string> } = {},
): Promise<RegistryProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let output = '';

  const start = async (): Promise<void> => {
    output = '';
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: SERVER_DIR,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_URL: options.publicUrl ?? url,
        DATABASE_URL: database.url,
        LOG_LEVEL: 'warn',
        TOKEN_SIGNING_KEY: tokenSigningPem,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const started = Date.now();
    while (Date.now() - started < 60_000) {
      if (child.exitCode !== null) throw new Error(`registry exited with ${child.exitCode}:\n${output}`);
      try {
        const response = await fetch(`${url}/readyz`);
        if (response.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`registry did not become ready:\n${output}`);
  };

  const stop = async (): Promise<void> => {
    const running = child;
    if (running === undefined || running.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill('SIGTERM');
    const killer = setTimeout(() => running.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(killer);
  };

  await start();
  return { url, port, start, stop };
}

/** Waits until `predicate` holds, checking on every event-loop turn (no fixed sleeps in assertions). */
export async function until(predicate: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const started = Date.now();
  while (!predicate()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
