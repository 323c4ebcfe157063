import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.js';

/** The server package's folder: the working directory of its processes (`src/main.ts`, `src/backup-main.ts`). */
export const SERVER_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../server');

/** Every test registers from one address; the registration limits have tests of their own. */
export const UNLIMITED_REGISTRATIONS = {
  REGISTRATION_RATE_LIMIT: '1000000',
  REGISTRATION_PREFIX_RATE_LIMIT: '1000000',
} as const;

/** How long a process may take to answer /readyz: tsx compiles the server on a busy machine first. */
const READY_TIMEOUT_MS = 60_000;
/** How long `stop` waits after SIGTERM before SIGKILL, so a hung shutdown cannot outlive its test. */
const STOP_TIMEOUT_MS = 15_000;
/** How much of what the process wrote is kept for `output()` (the end of it). */
const OUTPUT_KEPT = 100_000;

export interface RegistryProcess {
  /** Where it listens: http://127.0.0.1:<port>. */
  url: string;
  port: number;
  /** The process running now (a new one after `start`). */
  readonly child: ChildProcess;
  /** The end of what it wrote to stdout and stderr, for a failing test's message. */
  output(): string;
  /** Starts it again, on the same port and settings (after `stop`). */
  start(): Promise<void>;
  /** SIGTERM, and waits for the process to exit. */
  stop(): Promise<void>;
}

/**
 * The registry as its own process (`src/main.ts` through tsx), as an operator runs one, so a crash
 * shows as an exit rather than a dead test runner; resolves once /readyz answers 200. `env` holds its
 * settings, DATABASE_URL at least, over these: 127.0.0.1 on a free port, PUBLIC_URL that address,
 * LOG_LEVEL warn and unlimited registrations.
 */
export async function startRegistryProcess(env: Record<string, string>): Promise<RegistryProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let output = '';

  const start = async (): Promise<void> => {
    output = '';
    const spawned = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: SERVER_DIR,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_URL: url,
        LOG_LEVEL: 'warn',
        ...UNLIMITED_REGISTRATIONS,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = spawned;
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT);
    };
    spawned.stdout?.on('data', collect);
    spawned.stderr?.on('data', collect);
    const giveUpAt = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (spawned.exitCode !== null) throw new Error(`registry exited with ${spawned.exitCode}:\n${output}`);
      try {
        if ((await fetch(`${url}/readyz`)).status === 200) return;
      } catch {
        // Not listening yet.
      }
      if (Date.now() > giveUpAt) throw new Error(`registry on ${port} did not become ready:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  const stop = async (): Promise<void> => {
    const running = child;
    if (running === undefined || running.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill('SIGTERM');
    const killer = setTimeout(() => running.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(killer);
  };

  await start();
  return {
    url,
    port,
    get child() {
      return child as ChildProcess;
    },
    output: () => output,
    start,
    stop,
  };
}
