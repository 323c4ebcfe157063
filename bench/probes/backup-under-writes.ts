/**
 * `npm run backup` on a seeded registry while clients keep writing through HTTP:
 *
 *   npx tsx bench/probes/backup-under-writes.ts [--db sqlite|postgres] [--agents 100000] [--lanes 8]
 *     [--online-backup-seconds 40]
 *
 * Seeds the database (bench/seed.ts), starts the built registry on it, and runs `--lanes` clients that
 * each register agents and rewrite their profiles back to back. Once they run, it backs up with the
 * command operators use (packages/server/dist/backup-main.js) and, on SQLite, then tries SQLite's online
 * backup API (better-sqlite3's `backup()`, what `sqlite3 .backup` uses) under the same writes for at
 * most `--online-backup-seconds`, counting its restarts. Finally it checks the copy: every write
 * acknowledged before the backup started is in it, and it passes `PRAGMA integrity_check` (SQLite) or
 * restores with pg_restore (PostgreSQL). Prints the figures and writes them to bench/out/.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { call } from '../client.js';
import { createDatabase, type BenchDatabase } from '../database.js';
import { ed25519Identity, ed25519RegistrationBody } from '../keys.js';
import { OUT, ROOT, buildIfNeeded, log, sleep, spawnNode, stop, waitForHttp } from '../processes.js';
import { scriptArgs } from './script-args.js';
import { seedRegistry } from '../seed.js';

const run = promisify(execFile);
const args = scriptArgs();
const kind = args.text('--db') === 'postgres' ? 'postgres' : 'sqlite';
const agents = args.number('--agents', 100_000);
const lanes = args.number('--lanes', 8);
const onlineBackupSeconds = args.number('--online-backup-seconds', 40);
const port = Number(process.env.BENCH_PORT ?? 18090);
const base = `http://127.0.0.1:${port}`;

interface Owned {
  did: string;
  token: string;
}

function profile(name: string) {
  return {
    name,
    description: `${name}: written while a backup runs`,
    capabilities: [{ type: 'general' }],
    tags: [],
  };
}

async function register(name: string): Promise<Owned> {
  const body = ed25519RegistrationBody(ed25519Identity(), profile(name), Date.now());
  const reply = await call(base, 'POST', '/api/agents/register', body);
  if (reply.status !== 201)
    throw new Error(`register ${name}: ${reply.status} ${JSON.stringify(reply.json)}`);
  return { did: reply.json.did as string, token: reply.json.token as string };
}

/** What the copy holds: every agent's description, by DID. */
async function descriptionsIn(copy: string): Promise<{ descriptions: Map<string, string>; check: string }> {
  if (kind === 'sqlite') {
    const db = new Database(copy, { readonly: true, fileMustExist: true });
    try {
      const check = String(db.pragma('integrity_check', { simple: true }));
      const rows = db.prepare('select did, description from agents').all() as {
        did: string;
        description: string;
      }[];
      return { descriptions: new Map(rows.map((row) => [row.did, row.description])), check };
    } finally {
      db.close();
    }
  }
  const restored = await createDatabase('postgres');
  try {
    await run('pg_restore', [
      '--exit-on-error',
      '--single-transaction',
      '--no-owner',
      `--dbname=${restored.url}`,
      copy,
    ]);
    const client = new pg.Client({ connectionString: restored.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ did: string; description: string }>(
        'select did, description from agents',
      );
      return { descriptions: new Map(rows.map((row) => [row.did, row.description])), check: 'pg_restore ok' };
    } finally {
      await client.end();
    }
  } finally {
    await restored.drop();
  }
}

/** SQLite's online backup under the same writes, given up after `seconds`: did it finish, how often it restarted. */
async function onlineBackup(source: string, target: string, seconds: number) {
  const db = new Database(source, { readonly: true, fileMustExist: true });
  const started = performance.now();
  let restarts = 0;
  let lastRemaining = Infinity;
  try {
    await db.backup(target, {
      progress: ({ remainingPages }) => {
        if (remainingPages > lastRemaining) restarts += 1;
        lastRemaining = remainingPages;
        if (performance.now() - started > seconds * 1000) throw new Error('gave up');
        return 100;
      },
    });
    return { finished: true, seconds: (performance.now() - started) / 1000, restarts };
  } catch {
    return { finished: false, seconds: (performance.now() - started) / 1000, restarts };
  } finally {
    db.close();
    fs.rmSync(target, { force: true });
  }
}

async function main(): Promise<void> {
  buildIfNeeded();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-bench-backup-'));
  let database: BenchDatabase | undefined;
  let server: ReturnType<typeof spawnNode> | undefined;
  try {
    database = await createDatabase(kind);
    log(`seeding ${agents} agents (${kind})`);
    const seedStart = performance.now();
    await seedRegistry({ database: database.config, agents, didWebDomain: `localhost%3A${port}`, log });
    log(
      `seeded in ${((performance.now() - seedStart) / 1000).toFixed(1)} s; ${(await database.sizeBytes()) / 2 ** 20} MiB`,
    );
    const logFile = path.join(dir, 'server.log');
    server = spawnNode(
      [path.join(ROOT, 'packages/server/dist/main.js')],
      {
        DATABASE_URL: database.url,
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_URL: `http://localhost:${port}`,
        LOG_LEVEL: 'warn',
      },
      logFile,
    );
    await waitForHttp(`${base}/readyz`, server, 600_000);

    const registeredBefore: string[] = [];
    const revisionBefore = new Map<string, number>();
    let backupStarted = false;
    let stopping = false;
    let writes = 0;
    const lane = async (index: number) => {
      const own = [await register(`Backup lane ${index}`)];
      for (let round = 0; !stopping; round += 1) {
        if (round % 4 === 0) {
          const agent = await register(`Backup writer ${index}-${round}`);
          own.push(agent);
          if (!backupStarted) registeredBefore.push(agent.did);
        } else {
          const target = own[round % own.length] as Owned;
          const reply = await call(
            base,
            'PUT',
            `/api/agents/${encodeURIComponent(target.did)}`,
            { description: `revision ${round}` },
            target.token,
          );
          if (reply.status !== 200) throw new Error(`PUT: ${reply.status} ${JSON.stringify(reply.json)}`);
          if (!backupStarted) revisionBefore.set(target.did, round);
        }
        writes += 1;
      }
    };
    const running = Promise.allSettled(Array.from({ length: lanes }, (_, index) => lane(index)));

    // The write rate before the backup, over a few seconds of steady writing.
    await sleep(3000);
    const rateFrom = writes;
    await sleep(5000);
    const writesPerSecond = (writes - rateFrom) / 5;
    log(`writes before the backup: ${writesPerSecond.toFixed(0)}/s from ${lanes} clients`);

    const copy = path.join(dir, 'backup', kind === 'sqlite' ? 'registry.db' : 'registry.dump');
    const writesAtStart = writes;
    backupStarted = true;
    const backupStart = performance.now();
    const child = spawn(process.execPath, [path.join(ROOT, 'packages/server/dist/backup-main.js'), copy], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: database.url },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    const backupSeconds = (performance.now() - backupStart) / 1000;
    const writesDuringBackup = writes - writesAtStart;
    log(
      `npm run backup: exit ${code} after ${backupSeconds.toFixed(1)} s; ${writesDuringBackup} writes acknowledged meanwhile`,
    );

    const online =
      kind === 'sqlite' && database.config.kind === 'sqlite'
        ? await onlineBackup(database.config.path, path.join(dir, 'online.db'), onlineBackupSeconds)
        : undefined;
    if (online !== undefined)
      log(
        `online backup API: ${online.finished ? 'finished' : 'did not finish'} in ${online.seconds.toFixed(1)} s, ${online.restarts} restarts`,
      );

    stopping = true;
    for (const result of await running) if (result.status === 'rejected') throw result.reason;
    if (code !== 0) throw new Error(`the backup exited with ${code}`);

    const { descriptions, check } = await descriptionsIn(copy);
    const missing = registeredBefore.filter((did) => !descriptions.has(did)).length;
    const stale = [...revisionBefore].filter(([did, revision]) => {
      const copied = /^revision (\d+)$/.exec(descriptions.get(did) ?? '');
      return copied === null || Number(copied[1]) < revision;
    }).length;
    const result = {
      kind,
      agents,
      lanes,
      databaseBytes: fs.statSync(copy).size,
      writesPerSecond,
      backupSeconds,
      backupExit: code,
      writesDuringBackup,
      acknowledgedBefore: registeredBefore.length + revisionBefore.size,
      missing,
      stale,
      check,
      agentsInCopy: descriptions.size,
      online,
    };
    log(
      `copy: ${descriptions.size} agents, ${check}; of ${result.acknowledgedBefore} writes acknowledged before the backup, ${missing} registrations missing and ${stale} profile revisions older`,
    );
    fs.mkdirSync(OUT, { recursive: true });
    const outFile = path.join(OUT, `backup-${kind}-${agents}-${Date.now()}.json`);
    fs.writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
    log(`figures in ${outFile}`);
    if (missing > 0 || stale > 0 || (kind === 'sqlite' && check !== 'ok')) process.exitCode = 1;
  } finally {
    if (server !== undefined) await stop(server);
    await database?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
