import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { launchChromium } from '../support/browser.js';
import {
  testDatabase,
  freePort,
  privateClusterUnavailable,
  SERVER_DIR,
  WITH_POSTGRES,
} from '@agent-registry/testkit';

/**
 * What a newcomer's machine does with `npm test`: no PostgreSQL answering and no Debian chromium. The
 * wrapper and the browser fallback are what the rest of the suite stands on there.
 */

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Probed {
  url: string;
  mode: string;
  version: string;
  pid: number;
}

interface Wrapped {
  pid: number;
  /** Resolves with what the probe printed, once it has. */
  probed: Promise<Probed>;
  finished: Promise<Finished>;
  kill(signal: NodeJS.Signals): void;
}

/** The wrapper as its own process, with only the environment given (no inherited TEST_POSTGRES*). */
function wrap(env: Record<string, string>, script: string): Wrapped {
  const child = spawn(process.execPath, ['--import', 'tsx', WITH_POSTGRES, process.execPath, '-e', script], {
    cwd: SERVER_DIR,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: os.tmpdir(),
      ...(process.env.TEST_POSTGRES_BIN_DIR
        ? { TEST_POSTGRES_BIN_DIR: process.env.TEST_POSTGRES_BIN_DIR }
        : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let resolveProbed: (probed: Probed) => void = () => undefined;
  let rejectProbed: (error: Error) => void = () => undefined;
  const probed = new Promise<Probed>((resolve, reject) => {
    resolveProbed = resolve;
    rejectProbed = reject;
  });
  // Tests that do not wait for it must not fail on its rejection.
  probed.catch(() => undefined);
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes('\n')) resolveProbed(JSON.parse(stdout.split('\n')[0]!) as Probed);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const finished = new Promise<Finished>((resolve) =>
    child.once('close', (code) => {
      rejectProbed(new Error(`the probe printed nothing: ${stderr}`));
      resolve({ code, stdout, stderr });
    }),
  );
  return { pid: child.pid!, probed, finished, kill: (signal) => child.kill(signal) };
}

/** Prints the URL it was given, TEST_POSTGRES, the server's version and its pid as one JSON line, then waits `holdMs`. */
const probe = (holdMs = 0) => `
  const pg = require('pg');
  const client = new pg.Client({ connectionString: process.env.TEST_POSTGRES_URL });
  client.connect()
    .then(() => client.query('create database registry_wrapper_probe'))
    .then(() => client.query('show server_version'))
    .then((result) => {
      console.log(JSON.stringify({ url: process.env.TEST_POSTGRES_URL, mode: process.env.TEST_POSTGRES, version: result.rows[0].server_version, pid: process.pid }));
      return client.end();
    })
    .then(() => setTimeout(() => undefined, ${holdMs}));
`;

/** Whether anything accepts connections on the URL's port. */
async function listening(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The private clusters' directories a wrapper process made (each names its owner's pid). */
const clusterDirsOf = (pid: number): string[] =>
  fs
    .readdirSync(os.tmpdir())
    .filter((entry) => entry.startsWith('registry-private-pg-'))
    .filter((entry) => {
      try {
        return fs.readFileSync(path.join(os.tmpdir(), entry, 'owner'), 'utf8') === String(pid);
      } catch {
        return false;
      }
    });

// Each case starts a PostgreSQL of its own: once per `npm test` (in the SQLite pass) is enough.
const skip = testDatabase === 'postgres' ? 'runs in the SQLite pass' : (privateClusterUnavailable() ?? false);

describe('a test run without a PostgreSQL that answers', { skip }, () => {
  test('gets a private PostgreSQL 15 for the run, and it is gone when the run ends', async () => {
    const closed = `postgres://postgres@127.0.0.1:${await freePort()}/test`;
    const run = wrap({ TEST_POSTGRES_URL: closed }, probe());
    const { code, stdout, stderr } = await run.finished;
    assert.equal(code, 0, stderr);
    assert.match(stderr, /does not answer .*starting a private one for this run/);
    const { url, mode, version } = JSON.parse(stdout) as Probed;
    assert.notEqual(url, closed);
    assert.match(url, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/test$/);
    // Nested runs reuse it rather than start another.
    assert.equal(mode, 'existing');
    assert.match(version, /^15\./);
    assert.equal(await listening(url), false, 'the private server still listens after the run');
    assert.deepEqual(clusterDirsOf(run.pid), [], 'the private server left its directory behind');
  });

  test('passes the command its exit status', async () => {
    const closed = `postgres://postgres@127.0.0.1:${await freePort()}/test`;
    const { code } = await wrap({ TEST_POSTGRES_URL: closed }, 'process.exit(3)').finished;
    assert.equal(code, 3);
  });

  test('TEST_POSTGRES=existing fails at once, naming the server, instead of starting one', async () => {
    const closed = `postgres://postgres@127.0.0.1:${await freePort()}/test`;
    const run = wrap({ TEST_POSTGRES_URL: closed, TEST_POSTGRES: 'existing' }, probe());
    const { code, stdout, stderr } = await run.finished;
    assert.equal(code, 1);
    assert.equal(stdout, '', 'the command ran');
    assert.equal(
      stderr.trim(),
      `with-postgres: PostgreSQL at ${closed} does not answer (connect ECONNREFUSED ${new URL(closed).host}); start it, or unset TEST_POSTGRES`,
    );
    assert.deepEqual(clusterDirsOf(run.pid), []);
  });

  test('a run ended by SIGTERM stops its server', async () => {
    const run = wrap({ TEST_POSTGRES: 'private' }, probe(60_000));
    const { url } = await run.probed;
    assert.equal(await listening(url), true);
    run.kill('SIGTERM');
    assert.notEqual((await run.finished).code, 0);
    assert.equal(await listening(url), false, 'the private server still listens after SIGTERM');
    assert.deepEqual(clusterDirsOf(run.pid), []);
  });

  test('a server left by a run killed with SIGKILL is stopped by the next run', async () => {
    const killed = wrap({ TEST_POSTGRES: 'private' }, probe(60_000));
    const { url, pid: probePid } = await killed.probed;
    killed.kill('SIGKILL');
    // The command outlives a wrapper killed this way (and holds its output open): this test ends it.
    process.kill(probePid, 'SIGTERM');
    await killed.finished;
    assert.equal(await listening(url), true, 'SIGKILL stopped the server: nothing is left to clean up');
    assert.equal(clusterDirsOf(killed.pid).length, 1);
    const next = wrap({ TEST_POSTGRES: 'private' }, probe());
    assert.equal((await next.finished).code, 0);
    assert.equal(await listening(url), false, 'the abandoned server still listens');
    assert.deepEqual(clusterDirsOf(killed.pid), [], 'the abandoned server left its directory behind');
  });
});

describe(
  'the browser tests without Debian chromium',
  {
    skip:
      testDatabase === 'postgres'
        ? 'runs in the SQLite pass'
        : (process.platform !== 'linux' || process.arch !== 'x64') &&
          'the package ships a Linux x86-64 browser',
  },
  () => {
    test('run the Chromium that an npm package ships', async () => {
      const { browser, source } = await launchChromium(path.join(os.tmpdir(), 'no-such-chromium'));
      try {
        assert.match(source, /^@sparticuz\/chromium \d+\./);
        const page = await browser.newPage();
        await page.setContent('<p style="font-family: sans-serif">Agent Registry</p>');
        assert.equal(await page.locator('p').textContent(), 'Agent Registry');
        const png = await page.screenshot({ fullPage: true });
        assert.equal(png.subarray(1, 4).toString(), 'PNG');
      } finally {
        await browser.close();
      }
    });
  },
);
