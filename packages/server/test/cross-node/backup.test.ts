import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { profileOf } from '../support/discovery-helpers.js';
import {
  createTestDatabase,
  ed25519Agent,
  registrationBody,
  testDatabase,
  type TestDatabase,
  TEST_PUBLIC_URL,
  startRegistryProcess,
  type RegistryProcess,
  SERVER_DIR,
} from '@agent-registry/testkit';
import { http } from '../support/http.js';

const run = promisify(execFile);

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run backup`'s program, as a process of its own, on the given database. */
function backup(databaseUrl: string, args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/backup-main.ts', ...args], {
    cwd: SERVER_DIR,
    env: { ...process.env, DATABASE_URL: databaseUrl, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

interface Agent {
  did: string;
  token: string;
}

async function register(node: RegistryProcess, name: string): Promise<Agent> {
  const body = await registrationBody(
    ed25519Agent(),
    profileOf(name, { description: `${name}: ${'a modest profile of some length '.repeat(8)}` }),
    Date.now(),
  );
  const response = await http(node, 'POST', '/api/agents/register', undefined, body);
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body as unknown as Agent;
}

/** What a copy holds: every agent's description, by DID. */
type Descriptions = Map<string, string>;

async function descriptionsIn(copy: string): Promise<Descriptions> {
  if (testDatabase === 'sqlite') {
    const db = new Database(copy, { readonly: true, fileMustExist: true });
    try {
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
      const rows = db.prepare('select did, description from agents').all() as {
        did: string;
        description: string;
      }[];
      return new Map(rows.map((row) => [row.did, row.description]));
    } finally {
      db.close();
    }
  }
  // A PostgreSQL backup is checked where it is used: restored into an empty database.
  const restored = await createTestDatabase();
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
      return new Map(rows.map((row) => [row.did, row.description]));
    } finally {
      await client.end();
    }
  } finally {
    await restored.drop();
  }
}

describe('npm run backup under sustained writes', () => {
  let testDb: TestDatabase;
  let node: RegistryProcess;
  let dir: string;
  const agents: Agent[] = [];

  before(async () => {
    // The usual umask, inherited by the backup processes: the copy's mode must not come from it.
    process.umask(0o022);
    testDb = await createTestDatabase();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-backup-'));
    node = await startRegistryProcess({ DATABASE_URL: testDb.url, PUBLIC_URL: TEST_PUBLIC_URL });
    // A modest registry: a few hundred agents, registered four at a time.
    await Promise.all(
      [0, 1, 2, 3].map(async (lane) => {
        for (let index = 0; index < 60; index += 1)
          agents.push(await register(node, `Seeded ${lane}-${index}`));
      }),
    );
  });

  after(async () => {
    await node?.stop();
    await testDb?.drop();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the copy holds every write acknowledged before the backup started, and opens', async () => {
    /** Writes answered 2xx before the backup process was started: the copy must hold each. */
    const registeredBefore: string[] = [];
    const revisionBefore = new Map<string, number>();
    let started = false;
    let stop = false;
    let acknowledgedAfter = 0;

    // Each lane registers agents and rewrites profiles (its own seeded agents, numbered revisions).
    const lane = async (laneIndex: number) => {
      const own = agents.filter((_, index) => index % 3 === laneIndex);
      for (let round = 0; !stop; round += 1) {
        if (round % 3 === 0) {
          const agent = await register(node, `Written ${laneIndex}-${round}`);
          if (!started) registeredBefore.push(agent.did);
          else acknowledgedAfter += 1;
          continue;
        }
        const target = own[round % own.length] as Agent;
        const response = await http(
          node,
          'PUT',
          `/api/agents/${encodeURIComponent(target.did)}`,
          target.token,
          {
            description: `revision ${round}`,
          },
        );
        assert.equal(response.status, 200, JSON.stringify(response.body));
        if (!started) revisionBefore.set(target.did, round);
        else acknowledgedAfter += 1;
      }
    };
    const lanes = Promise.allSettled([0, 1, 2].map(lane));
    // Let the lanes get going, then back up while they write.
    while (registeredBefore.length < 6) await new Promise((resolve) => setTimeout(resolve, 20));
    started = true;
    const copy = path.join(
      dir,
      'nested',
      'backup',
      testDatabase === 'sqlite' ? 'registry.db' : 'registry.dump',
    );
    const outcome = await backup(testDb.url, [copy]);
    // The writers keep going a little after the backup, so it ran under writes from start to end.
    const acknowledgedWhileBackingUp = acknowledgedAfter;
    while (acknowledgedAfter < acknowledgedWhileBackingUp + 3)
      await new Promise((resolve) => setTimeout(resolve, 20));
    stop = true;
    for (const result of await lanes) if (result.status === 'rejected') throw result.reason;

    assert.equal(outcome.code, 0, outcome.stderr);
    assert.match(
      outcome.stdout,
      /^Backed up the (SQLite|PostgreSQL) database to .*registry\.(db|dump) \(\d+ bytes/,
    );
    assert.deepEqual(
      fs.readdirSync(path.dirname(copy)),
      [path.basename(copy)],
      'no temporary file is left beside the copy',
    );
    // It holds the token signing key: its owner's alone, in directories the backup created for it.
    assert.equal(fs.statSync(copy).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.dirname(copy)).mode & 0o777, 0o700);
    const held = await descriptionsIn(copy);
    for (const agent of agents) assert.ok(held.has(agent.did), `seeded agent ${agent.did} is in the copy`);
    for (const did of registeredBefore) assert.ok(held.has(did), `registered ${did} is in the copy`);
    for (const [did, revision] of revisionBefore) {
      // A later revision may be in the copy too (written after the start, before the snapshot).
      const copied = /^revision (\d+)$/.exec(held.get(did) ?? '');
      assert.ok(copied !== null && Number(copied[1]) >= revision, `${did}: revision ${revision} or later`);
    }
  });

  test('refuses to replace an existing file unless asked, and says what to do', async () => {
    const existing = path.join(dir, 'existing.bak');
    fs.writeFileSync(existing, 'an older backup');
    const refused = await backup(testDb.url, [existing]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /already exists: choose another file name, or pass --force to replace it/);
    assert.equal(fs.readFileSync(existing, 'utf8'), 'an older backup');

    const replaced = await backup(testDb.url, [existing, '--force']);
    assert.equal(replaced.code, 0, replaced.stderr);
    assert.equal(fs.statSync(existing).mode & 0o777, 0o600);
    assert.notEqual(fs.readFileSync(existing, 'utf8'), 'an older backup');
    assert.ok((await descriptionsIn(existing)).size >= agents.length);
  });

  test('a directory as the destination is refused in one line, even with --force, and nothing is left', async () => {
    const parent = fs.mkdtempSync(path.join(dir, 'parent-'));
    const directory = path.join(parent, 'backups');
    fs.mkdirSync(directory);
    for (const args of [[directory], [directory, '--force']]) {
      const outcome = await backup(testDb.url, args);
      assert.equal(outcome.code, 1, args.join(' '));
      assert.equal(
        outcome.stderr,
        `Backup failed: ${directory} is a directory: name the backup file, e.g. ${path.join(directory, 'registry-backup')}\n`,
      );
      assert.ok(fs.statSync(directory).isDirectory());
      assert.deepEqual(fs.readdirSync(directory), []);
      assert.deepEqual(fs.readdirSync(parent), ['backups']);
    }
  });

  test('a wrong command line exits 2 with the usage', async () => {
    for (const args of [[], ['a.db', 'b.db'], ['--overwrite']]) {
      const outcome = await backup(testDb.url, args);
      assert.equal(outcome.code, 2, args.join(' '));
      assert.match(outcome.stderr, /^Usage: npm run backup -- <destination-file> \[--force\]/);
    }
  });

  test(
    'PostgreSQL without pg_dump on PATH: one line naming what to install, exit 1',
    {
      skip: testDatabase === 'postgres' ? false : 'pg_dump is used for PostgreSQL only',
    },
    async () => {
      const emptyPath = fs.mkdtempSync(path.join(dir, 'path-'));
      const outcome = await backup(testDb.url, [path.join(dir, 'never.dump')], { PATH: emptyPath });
      assert.equal(outcome.code, 1);
      assert.equal(
        outcome.stderr,
        "Backup failed: pg_dump is not installed or not on PATH: install PostgreSQL's client programs of the server's major version (e.g. apt-get install postgresql-client-15)\n",
      );
      assert.equal(fs.existsSync(path.join(dir, 'never.dump')), false);
    },
  );

  test(
    'PostgreSQL: a failing pg_dump is exit 1, a stopped backup leaves no file and no pg_dump behind',
    {
      skip: testDatabase === 'postgres' ? false : 'pg_dump is used for PostgreSQL only',
    },
    async () => {
      // A stand-in pg_dump on PATH: writes part of its file, then fails or waits to be stopped.
      const bin = fs.mkdtempSync(path.join(dir, 'bin-'));
      const pidFile = path.join(bin, 'pid');
      fs.writeFileSync(
        path.join(bin, 'pg_dump'),
        `#!/bin/sh
for arg; do case "$arg" in --file=*) file="\${arg#--file=}";; esac; done
echo 'half a dump' > "$file"
[ "$FAKE_PG_DUMP" = fail ] && { echo 'pg_dump: error: connection refused' >&2; exit 1; }
echo $$ > '${pidFile}.tmp' && mv '${pidFile}.tmp' '${pidFile}'
exec sleep 60
`,
        { mode: 0o755 },
      );
      const target = fs.mkdtempSync(path.join(dir, 'target-'));
      const env = { PATH: `${bin}:${process.env.PATH ?? ''}` };

      const failed = await backup(testDb.url, [path.join(target, 'failed.dump')], {
        ...env,
        FAKE_PG_DUMP: 'fail',
      });
      assert.equal(failed.code, 1);
      assert.match(
        failed.stderr,
        /pg_dump: error: connection refused\nBackup failed: pg_dump failed \(exit status 1\)/,
      );
      assert.deepEqual(fs.readdirSync(target), []);

      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'src/backup-main.ts', path.join(target, 'stopped.dump')],
        {
          cwd: SERVER_DIR,
          env: { ...process.env, DATABASE_URL: testDb.url, ...env },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
      while (!fs.existsSync(pidFile)) await new Promise((resolve) => setTimeout(resolve, 20));
      const dumpPid = Number(fs.readFileSync(pidFile, 'utf8'));
      assert.equal(fs.readdirSync(target).length, 1, 'the dump is being written under its temporary name');
      child.kill('SIGTERM');
      assert.equal(await exited, 143);
      assert.match(stderr, /Backup interrupted \(SIGTERM\): nothing was written/);
      assert.deepEqual(fs.readdirSync(target), []);
      // pg_dump was told to stop too (its exit is the kernel's to report, so wait for it).
      const alive = () => {
        try {
          process.kill(dumpPid, 0);
          return true;
        } catch {
          return false;
        }
      };
      while (alive()) await new Promise((resolve) => setTimeout(resolve, 20));
    },
  );

  test(
    'SQLite: a backup stopped while the copy runs leaves no file and no copying process behind',
    {
      skip: testDatabase === 'sqlite' ? false : 'SQLite only',
    },
    async () => {
      // A lock held here keeps the copy waiting (busy timeout) while the test stops the backup.
      const source = path.join(dir, 'locked.db');
      const holder = new Database(source);
      holder.exec('create table t (x); insert into t values (1)');
      holder.exec('begin exclusive');
      const target = fs.mkdtempSync(path.join(dir, 'stopped-'));
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'src/backup-main.ts', path.join(target, 'stopped.db')],
        {
          cwd: SERVER_DIR,
          env: { ...process.env, DATABASE_URL: `sqlite:${source}`, SQLITE_BUSY_TIMEOUT_MS: '60000' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
      // The process that copies: the backup, or a child of it, holding the database open.
      const holds = (pid: number): boolean => {
        try {
          return fs.readdirSync(`/proc/${pid}/fd`).some((fd) => {
            try {
              return fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === source;
            } catch {
              return false;
            }
          });
        } catch {
          return false;
        }
      };
      const copier = (): number | undefined => {
        const pid = child.pid as number;
        let children: number[] = [];
        try {
          children = fs
            .readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
            .split(' ')
            .filter((entry) => entry !== '')
            .map(Number);
        } catch {
          // Not started yet, or already gone.
        }
        return [pid, ...children].find(holds);
      };
      let copying: number | undefined;
      while ((copying = copier()) === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
      // Stopped while the copy still waits for the lock: the stop is handled at once, not once the
      // copy has ended (then failed, past the busy timeout, or been named, once the lock is free).
      child.kill('SIGTERM');
      assert.equal(await exited, 143, stdout + stderr);
      holder.exec('commit');
      holder.close();
      assert.equal(stderr, 'Backup interrupted (SIGTERM): nothing was written\n');
      assert.equal(stdout, '');
      assert.deepEqual(fs.readdirSync(target), []);
      // Gone, or a zombie nobody has reaped yet: either way it writes nothing more.
      const alive = (): boolean => {
        try {
          return fs.readFileSync(`/proc/${copying}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
        } catch {
          return false;
        }
      };
      while (alive()) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(fs.readdirSync(target), [], 'the stopped copy wrote nothing afterwards');
    },
  );

  test(
    'SQLite: a database file that does not exist is named, not created',
    {
      skip: testDatabase === 'sqlite' ? false : 'SQLite only',
    },
    async () => {
      const missing = path.join(dir, 'nowhere', 'registry.db');
      const outcome = await backup(`sqlite:${missing}`, [path.join(dir, 'never.db')]);
      assert.equal(outcome.code, 1);
      assert.match(
        outcome.stderr,
        /There is no SQLite database at .*nowhere\/registry\.db: check DATABASE_URL/,
      );
      assert.equal(fs.existsSync(missing), false);
    },
  );
});
