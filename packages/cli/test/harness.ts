import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, startRegistryProcess } from '@agent-registry/testkit';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '../../..');
export const cliBin = path.join(repoRoot, 'packages/cli/bin/agent-registry.js');
/** The capability handlers the tests' workers serve. */
export const handlerModule = path.join(here, 'fixtures/handler.mjs');

export interface RunningRegistry {
  url: string;
  /** Stops the process (SIGTERM) and keeps the database. */
  stop(): Promise<void>;
  /** Starts it again on the same port and database. */
  start(): Promise<void>;
  /** Stops it and removes the database. */
  close(): Promise<void>;
  /** Its SQLite file, for a test that moves time forward in the database. */
  databaseFile: string;
}

/**
 * A real registry: the server's own entry point in a child process, on a fresh SQLite file and a
 * free port, with PUBLIC_URL set to the address the tests reach it at (signatures are bound to it).
 */
export async function startRegistry(env: Record<string, string> = {}): Promise<RunningRegistry> {
  const database = await createTestDatabase('sqlite');
  const registry = await startRegistryProcess({
    DATABASE_URL: database.url,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    ...env,
  });
  return {
    url: registry.url,
    start: registry.start,
    stop: registry.stop,
    close: async () => {
      await registry.stop();
      await database.drop();
    },
    databaseFile: database.file ?? '',
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export type Json = Record<string, unknown>;

/** What a failing command prints with `--json`. */
export interface ErrorOutput {
  error: {
    code: string;
    message: string;
    status?: number;
    task_id?: string;
    details?: string;
    hint?: string;
  };
}

/** The result of a command that must have succeeded; its output is shown when it did not. */
export const ok = (result: CliResult): CliResult => {
  assert.equal(result.code, 0, `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
};

export interface RunOptions {
  /** The config directory (AGENT_REGISTRY_HOME). */
  home: string;
  env?: Record<string, string | undefined>;
  stdin?: string;
  cwd?: string;
}

/** Environment for the CLI without anything of the developer's own that could change its behaviour. */
function cliEnvironment(options: RunOptions): NodeJS.ProcessEnv {
  const { AGENT_REGISTRY_URL: _url, XDG_CONFIG_HOME: _xdg, ...inherited } = process.env;
  const overrides = Object.entries(options.env ?? {});
  const removed = new Set(overrides.filter(([, value]) => value === undefined).map(([name]) => name));
  return Object.fromEntries(
    [...Object.entries({ ...inherited, AGENT_REGISTRY_HOME: options.home }), ...overrides].filter(
      ([name, value]) => value !== undefined && !removed.has(name),
    ),
  );
}

/** Runs `agent-registry <args>` as a separate process through its bin file, as a user would. */
export async function runCli(args: string[], options: RunOptions): Promise<CliResult> {
  const child = spawn(process.execPath, [cliBin, ...args], {
    cwd: options.cwd ?? options.home,
    env: cliEnvironment(options),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(options.stdin ?? '');
  const code = await new Promise<number | null>((resolve) =>
    child.on('close', (exitCode) => resolve(exitCode)),
  );
  return { code, stdout, stderr };
}

/** Starts `agent-registry <args>` and leaves it running (worker); `stop` sends SIGTERM and waits. */
export function spawnCli(
  args: string[],
  options: RunOptions,
): {
  child: ChildProcess;
  output: () => { stdout: string; stderr: string };
  /** Waits for it to exit by itself. */
  wait(): Promise<CliResult>;
  stop(): Promise<CliResult>;
} {
  const child = spawn(process.execPath, [cliBin, ...args], {
    cwd: options.cwd ?? options.home,
    env: cliEnvironment(options),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<number | null>((resolve) => child.on('close', (exitCode) => resolve(exitCode)));
  return {
    child,
    output: () => ({ stdout, stderr }),
    wait: async () => ({ code: await closed, stdout, stderr }),
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await closed;
      return { code, stdout, stderr };
    },
  };
}

/** A fresh config directory for one simulated user. */
export function tempHome(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'cli-home-'));
}

export function parseJson<T = Record<string, unknown>>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON (exit ${result.code}):\n${result.stdout}\nstderr:\n${result.stderr}`);
  }
}
