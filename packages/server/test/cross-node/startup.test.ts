import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/connect.js';
import { MIGRATION_LOCK_ID, MIGRATIONS, migrateToLatest } from '../../src/db/migrations/index.js';
import { createTestDatabase, testDatabase, SERVER_DIR, freePort } from '@agent-registry/testkit';

const POSTGRES = new URL(process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
}

/** The real registry process (`node src/main.ts` through tsx), with only the environment given. */
function startProcess(env: Record<string, string>): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: SERVER_DIR,
    env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor: async (pattern, timeoutMs = 30_000) => {
      const giveUpAt = Date.now() + timeoutMs;
      while (!pattern.test(out + err)) {
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${out}${err}`);
        if (Date.now() > giveUpAt) throw new Error(`no ${pattern} in: ${out}${err}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

/** Exit 1 and one line on stderr that says what to do, without a stack trace. */
async function assertClearFailure(run: Run, says: RegExp): Promise<string> {
  const code = await run.exited;
  const stderr = run.stderr().trim();
  assert.equal(code, 1, `${run.stdout()}${stderr}`);
  const lines = stderr.split('\n').filter((line) => line.trim() !== '');
  assert.equal(lines.length, 1, `one line, got: ${stderr}`);
  assert.match(lines[0] ?? '', says);
  assert.doesNotMatch(stderr + run.stdout(), /^\s+at\s/m, 'no stack trace at the default level');
  return lines[0] ?? '';
}

const tempDirs: string[] = [];
const tempDir = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-startup-'));
  tempDirs.push(dir);
  return dir;
};
after(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe(
  'start-up of the real process',
  { skip: testDatabase === 'postgres' && 'runs in the SQLite pass' },
  () => {
    test('a port in use ends with one line naming PORT, exit 1', async () => {
      const blocker = net.createServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      const { port } = blocker.address() as net.AddressInfo;
      try {
        const run = startProcess({
          PORT: String(port),
          HOST: '127.0.0.1',
          DATABASE_URL: `sqlite:${path.join(tempDir(), 'registry.db')}`,
        });
        await assertClearFailure(run, new RegExp(`Port ${port} is already in use.*set PORT`));
      } finally {
        blocker.close();
      }
    });

    test('an SQLite path that cannot be written ends with one line naming DATABASE_URL, exit 1', async () => {
      const dir = tempDir();
      const notADirectory = path.join(dir, 'file');
      fs.writeFileSync(notADirectory, 'not a directory');
      const run = startProcess({
        PORT: String(await freePort()),
        DATABASE_URL: `sqlite:${path.join(notADirectory, 'data', 'registry.db')}`,
      });
      await assertClearFailure(run, /Cannot write the SQLite database .*DATABASE_URL=sqlite:/);
    });

    test('an SQLite file whose write lock another process holds past the busy timeout ends with one line, exit 1', async () => {
      const file = path.join(tempDir(), 'registry.db');
      const holder = new SqliteDatabase(file);
      holder.pragma('journal_mode = WAL');
      holder.exec('begin immediate');
      try {
        const run = startProcess({
          PORT: String(await freePort()),
          HOST: '127.0.0.1',
          DATABASE_URL: `sqlite:${file}`,
          SQLITE_BUSY_TIMEOUT_MS: '200',
        });
        await assertClearFailure(
          run,
          /SQLite database .* is locked by another process.*SQLITE_BUSY_TIMEOUT_MS/,
        );
      } finally {
        holder.exec('rollback');
        holder.close();
      }
    });

    test('warns about a variable that looks like a setting (PROT), then serves; the ready line names /docs and the address', async () => {
      const port = await freePort();
      const run = startProcess({
        PORT: String(port),
        HOST: '127.0.0.1',
        PROT: '9999',
        DATABASE_URL: `sqlite:${path.join(tempDir(), 'registry.db')}`,
      });
      try {
        await run.waitFor(/ready at/);
        const lines = run
          .stdout()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        const warning = lines.find((line) => line.variable === 'PROT');
        assert.ok(warning, run.stdout());
        assert.equal(warning.level, 40);
        assert.match(String(warning.msg), /did you mean PORT/);
        const ready = lines.find((line) => /ready at/.test(String(line.msg)));
        assert.match(
          String(ready?.msg),
          new RegExp(`http://localhost:${port}.*http://localhost:${port}/docs`),
        );

        // One log line per request, with its id, route template, status and duration.
        const response = await fetch(`http://127.0.0.1:${port}/api/agents/search?q=x&name=typo`, {
          headers: { 'x-request-id': 'startup-test-1' },
        });
        assert.equal(response.status, 400);
        await run.waitFor(/startup-test-1/);
        await new Promise((resolve) => setTimeout(resolve, 200));
        const mine = run
          .stdout()
          .split('\n')
          .filter((line) => line.includes('startup-test-1'))
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        assert.equal(mine.length, 1, JSON.stringify(mine));
        assert.deepEqual(
          { ...mine[0], time: 0, pid: 0, hostname: '', durationMs: 0 },
          {
            level: 30,
            time: 0,
            pid: 0,
            hostname: '',
            reqId: 'startup-test-1',
            method: 'GET',
            route: '/api/agents/search',
            url: '/api/agents/search?q=x&name=typo',
            status: 400,
            code: 'UNKNOWN_QUERY_PARAMETER',
            durationMs: 0,
            msg: 'GET /api/agents/search?q=x&name=typo 400',
          },
        );
      } finally {
        run.child.kill('SIGTERM');
        assert.equal(await run.exited, 0);
      }
    });
  },
);

describe(
  'start-up against PostgreSQL',
  { skip: testDatabase !== 'postgres' && 'runs in the PostgreSQL pass' },
  () => {
    const urlWith = (changes: { user?: string; database?: string; port?: number }): string => {
      const url = new URL(POSTGRES);
      if (changes.user !== undefined) url.username = changes.user;
      if (changes.database !== undefined) url.pathname = `/${changes.database}`;
      if (changes.port !== undefined) url.port = String(changes.port);
      return url.toString();
    };

    test('a missing database ends with one line saying how to create it', async () => {
      const run = startProcess({
        PORT: String(await freePort()),
        DATABASE_URL: urlWith({ database: 'registry_no_such_database' }),
      });
      await assertClearFailure(run, /database "registry_no_such_database" does not exist.*createdb/);
    });

    test('a missing role ends with one line saying how to create it', async () => {
      const run = startProcess({
        PORT: String(await freePort()),
        DATABASE_URL: urlWith({ user: 'registry_no_such_role' }),
      });
      await assertClearFailure(run, /role "registry_no_such_role" does not exist.*createuser/);
    });

    test('an unreachable PostgreSQL is retried for DATABASE_STARTUP_WAIT_SECONDS, then one line', async () => {
      const run = startProcess({
        PORT: String(await freePort()),
        DATABASE_URL: urlWith({ port: await freePort() }),
        DATABASE_STARTUP_WAIT_SECONDS: '1',
      });
      const line = await assertClearFailure(
        run,
        /does not accept connections after 1 s of retries: start it/,
      );
      assert.match(line, /DATABASE_URL/);
      assert.match(run.stdout(), /retrying for up to 1 s/);
    });

    test('a PostgreSQL that comes up while the registry waits is used', async () => {
      const pgPort = await freePort();
      const port = await freePort();
      // A database of its own: the shared one may hold another branch's migrations.
      const database = await createTestDatabase();
      const run = startProcess({
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: urlWith({ port: pgPort, database: new URL(database.url).pathname.slice(1) }),
        DATABASE_STARTUP_WAIT_SECONDS: '30',
      });
      // PostgreSQL "starts" late: a TCP relay to the real server opens on the port after the first refusal.
      await run.waitFor(/retrying for up to 30 s/);
      const relay = net.createServer((socket) => {
        const upstream = net.connect(Number(POSTGRES.port || 5432), POSTGRES.hostname);
        socket.pipe(upstream).pipe(socket);
        socket.on('error', () => upstream.destroy());
        upstream.on('error', () => socket.destroy());
      });
      await new Promise<void>((resolve) => relay.listen(pgPort, '127.0.0.1', resolve));
      try {
        await run.waitFor(/ready at/);
        const response = await fetch(`http://127.0.0.1:${port}/readyz`);
        assert.equal(response.status, 200);
      } finally {
        run.child.kill('SIGTERM');
        await run.exited;
        relay.close();
        await database.drop();
      }
    });
  },
);

describe(
  'start-up during an upgrade',
  { skip: testDatabase === 'postgres' && 'runs in the SQLite pass' },
  () => {
    // A bound, not a timing assertion: these starts used to spin or hang instead of exiting.
    const exits = { timeout: 60_000 };

    test('an SQLite path under /proc ends with one line naming the directory, exit 1', exits, async () => {
      const run = startProcess({
        PORT: String(await freePort()),
        DATABASE_URL: 'sqlite:/proc/nowhere/registry.db',
      });
      await assertClearFailure(
        run,
        /cannot create the directory \/proc\/nowhere.*fix the path in DATABASE_URL=sqlite:/,
      );
    });

    test(
      'an SQLite path whose directory is a file ends with one line naming that file, exit 1',
      exits,
      async () => {
        const file = path.join(tempDir(), 'hostname');
        fs.writeFileSync(file, 'vm\n');
        const run = startProcess({
          PORT: String(await freePort()),
          DATABASE_URL: `sqlite:${path.join(file, 'x.db')}`,
        });
        await assertClearFailure(
          run,
          new RegExp(`${file} is not a directory.*fix the path in DATABASE_URL=sqlite:`),
        );
      },
    );

    test(
      'a database migrated by a newer release ends with one line: run that release or restore the backup',
      exits,
      async () => {
        const file = path.join(tempDir(), 'registry.db');
        const database = openDatabase({ kind: 'sqlite', path: file });
        await migrateToLatest(database.db);
        await sql`insert into kysely_migration (name, timestamp) values ('011-from-a-newer-release', '2027-01-01T00:00:00.000Z')`.execute(
          database.db,
        );
        await database.close();
        const run = startProcess({ PORT: String(await freePort()), DATABASE_URL: `sqlite:${file}` });
        await assertClearFailure(
          run,
          /migrated by a newer release .*011-from-a-newer-release.*run that release or a newer one, or restore the backup taken before the upgrade/,
        );
      },
    );

    test(
      'a full disk, even in the middle of a migration, ends with one line saying to free space; once freed, the node starts',
      { ...exits, skip: process.getuid?.() !== 0 && 'mounting a small tmpfs needs root' },
      async () => {
        const mount = tempDir();
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mount]);
        const filler = path.join(mount, 'filler');
        const database = `sqlite:${path.join(mount, 'registry.db')}`;
        try {
          // Full: the registry's first write finds no room.
          try {
            execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=4k'], { stdio: 'ignore' });
          } catch {
            // dd stops with "No space left on device": the disk is full.
          }
          const full = startProcess({ PORT: String(await freePort()), DATABASE_URL: database });
          await assertClearFailure(full, /disk of the SQLite database .* is full .*free space on it/);

          // Room for a few migrations, not for all of them: the one that fills the disk is rolled back.
          fs.truncateSync(filler, fs.statSync(filler).size - 160 * 1024);
          const partly = startProcess({ PORT: String(await freePort()), DATABASE_URL: database });
          await assertClearFailure(
            partly,
            /disk of the SQLite database .* is full .*free space on it.* Migration \d{3}-[a-z-]+ was rolled back; the next start runs it again\./,
          );

          fs.rmSync(filler);
          const port = await freePort();
          const freed = startProcess({ PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: database });
          try {
            await freed.waitFor(/ready at/);
            assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
          } finally {
            freed.child.kill('SIGTERM');
            await freed.exited;
          }
        } finally {
          execFileSync('umount', [mount]);
        }
      },
    );
  },
);

describe('start-up while another node migrates', () => {
  test('/healthz answers (live, not ready) while the node waits to migrate, past any statement timeout; one log line per migration', async () => {
    const database = await createTestDatabase();
    // Another node holds the migration lock: on SQLite the write lock, on PostgreSQL the advisory lock.
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
    const run = startProcess({
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      SQLITE_BUSY_TIMEOUT_MS: '60000',
      // Requests' limit; migrations are not bound by it.
      DATABASE_STATEMENT_TIMEOUT_MS: '100',
    });
    let released = false;
    try {
      let health: Response | undefined;
      while (health === undefined) {
        health = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
        if (run.child.exitCode !== null) throw new Error(run.stderr());
        if (health === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(health.status, 200);
      assert.equal(((await health.json()) as { status: string }).status, 'starting');
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      assert.equal(ready.status, 503);
      assert.equal(ready.headers.get('retry-after'), '1');
      assert.equal(((await ready.json()) as { code: string }).code, 'DATABASE_UNAVAILABLE');
      const other = await fetch(`http://127.0.0.1:${port}/api/stats`);
      assert.equal(other.status, 503);
      // Ten times the statement timeout: the wait for the lock must outlast it.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.equal(run.child.exitCode, null, run.stderr());
      assert.doesNotMatch(run.stdout(), /database migration/, 'nothing migrated while the lock is held');

      released = true;
      await release();
      await run.waitFor(/ready at/);
      assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
      const live = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { status: string };
      assert.equal(live.status, 'ok');
      const migrated = run
        .stdout()
        .split('\n')
        .filter((line) => line.includes('database migration'))
        .map((line) => JSON.parse(line) as { migration: string; ms: number; msg: string });
      assert.deepEqual(
        migrated.map(({ migration }) => migration),
        MIGRATIONS.map(([name]) => name),
      );
      for (const line of migrated)
        assert.match(line.msg, new RegExp(`^database migration ${line.migration} applied in \\d+ ms$`));
    } finally {
      if (!released) await release();
      run.child.kill('SIGTERM');
      await run.exited;
      await database.drop();
    }
  });
});
