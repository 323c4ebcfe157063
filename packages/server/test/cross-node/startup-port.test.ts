import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import os from 'node:os';
import { test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { MIGRATION_LOCK_ID } from '../../src/db/migrations/index.js';
import { createTestDatabase, freePort, SERVER_DIR } from '@agent-registry/testkit';

const POLL_MS = 50;

/** One GET /healthz: its status, or the error that kept it from answering (refused, reset). */
async function probe(port: number): Promise<{ status: number; body: string } | { error: string }> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5_000) });
    return { status: response.status, body: await response.text() };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    return { error: cause?.code ?? String(error) };
  }
}

test('the port answers every 50 ms poll from the first `starting` to `ready`, through a migration held by another node', async () => {
  const database = await createTestDatabase();
  // Another node holds the migration lock for a while: the node waits in its migration (on SQLite the
  // wait blocks its main thread), then migrates, builds its app and takes the socket over.
  let release: () => Promise<void>;
  if (database.file !== undefined) {
    const holder = new SqliteDatabase(database.file);
    holder.pragma('journal_mode = WAL');
    holder.exec('begin immediate');
    release = async () => {
      holder.exec('commit');
      holder.close();
    };
  } else {
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    await holder.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    release = () => holder.end();
  }
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: SERVER_DIR,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: os.tmpdir(),
      LOG_LEVEL: 'info',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      SQLITE_BUSY_TIMEOUT_MS: '60000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let released = false;
  try {
    // Until the first answer the process is still loading; from then on every poll must be answered.
    const seen: string[] = [];
    let first: { status: number; body: string } | undefined;
    for (let polls = 0; first === undefined; polls++) {
      assert.equal(child.exitCode, null, output);
      assert.ok(polls < 1200, `the port never answered: ${output}`);
      const answer = await probe(port);
      if ('status' in answer) first = answer;
      else await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    assert.equal(first.status, 200);
    assert.equal((JSON.parse(first.body) as { status: string }).status, 'starting');
    seen.push('starting');
    let afterReady = 0;
    // Twenty polls past the ready line: the hand-over may still be under way when it is written.
    for (let polls = 0; afterReady < 20; polls++) {
      assert.ok(polls < 2400, `no ready line: ${output}`);
      if (!released && polls === 20) {
        released = true;
        await release();
      }
      const answer = await probe(port);
      assert.ok(
        'status' in answer,
        `poll ${polls} found the port closed (${JSON.stringify(answer)}): ${output}`,
      );
      assert.equal(answer.status, 200, answer.body);
      const status = (JSON.parse(answer.body) as { status: string }).status;
      if (seen.at(-1) !== status) seen.push(status);
      if (/ready at/.test(output)) afterReady++;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    // It went from starting to ok once, and the blocked wait was polled through, not around.
    assert.deepEqual(seen, ['starting', 'ok']);
    assert.match(output, /database migration/);
  } finally {
    if (!released) await release();
    child.kill('SIGTERM');
    await exited;
    await database.drop();
  }
  assert.equal(child.exitCode, 0, output);
});
