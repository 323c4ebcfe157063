import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import {
  SERVER_DIR,
  createTestDatabase,
  ed25519Agent,
  registrationBody,
  startRegistryProcess,
  testDatabase,
  type RegistryProcess,
  type TestDatabase,
} from '@agent-registry/testkit';
import { profileOf } from '../support/discovery-helpers.js';
import { http } from '../support/http.js';

const run = promisify(execFile);
const CLI = path.resolve(SERVER_DIR, '../cli/bin/agent-registry.js');

interface Agent {
  did: string;
  token: string;
}

interface MirrorRun {
  code: number;
  stdout: string;
  stderr: string;
  json: Record<string, unknown>;
}

/** `agent-registry mirror <dir> --json` as a user runs it: its own process, exit code and output. */
async function mirror(registry: RegistryProcess, dir: string, ...extra: string[]): Promise<MirrorRun> {
  const args = [CLI, 'mirror', dir, '--registry', registry.url, '--json', ...extra];
  try {
    const { stdout, stderr } = await run(process.execPath, args, { env: { ...process.env, NO_COLOR: '1' } });
    return { code: 0, stdout, stderr, json: JSON.parse(stdout) as Record<string, unknown> };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(failed.stdout || failed.stderr) as Record<string, unknown>;
    } catch {
      // Not JSON: the assertions show stdout and stderr.
    }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr, json };
  }
}

const errorOf = (result: MirrorRun): { code?: string; message?: string } =>
  (result.json.error ?? {}) as { code?: string; message?: string };

/** The mirror's copy, read as any SQLite client reads it. */
function copy<T>(dir: string, statement: string): T[] {
  const db = new Database(path.join(dir, 'mirror.db'), { readonly: true });
  try {
    return db.prepare(statement).all() as T[];
  } finally {
    db.close();
  }
}

/** One statement on the registry's own database, behind the registry's back (what an attacker with database access does). */
async function tamper(database: TestDatabase, statement: string): Promise<void> {
  if (database.file !== undefined) {
    const db = new Database(database.file);
    try {
      db.exec(statement);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

async function registerOn(registry: RegistryProcess, name: string): Promise<Agent> {
  const body = await registrationBody(ed25519Agent(), profileOf(name), Date.now());
  const response = await http(registry, 'POST', '/api/agents/register', undefined, body);
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body as unknown as Agent;
}

const treeSize = async (registry: RegistryProcess): Promise<number> =>
  Number((await (await fetch(`${registry.url}/log/checkpoint`)).text()).split('\n')[1]);

function assertStopped(result: MirrorRun, pattern: RegExp): void {
  assert.equal(result.code, 5, `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  assert.equal(errorOf(result).code, 'LOG_VERIFICATION_FAILED');
  assert.match(errorOf(result).message ?? '', pattern);
}

describe('agent-registry mirror against a running registry', () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'log-mirror-'));
  const started: { registry: RegistryProcess; database: TestDatabase }[] = [];

  async function fresh(): Promise<{ registry: RegistryProcess; database: TestDatabase }> {
    const database = await createTestDatabase();
    const registry = await startRegistryProcess({ DATABASE_URL: database.url });
    started.push({ registry, database });
    return { registry, database };
  }

  after(async () => {
    for (const { registry, database } of started) {
      await registry.stop();
      await database.drop();
    }
    fs.rmSync(work, { recursive: true, force: true });
  });

  test('follows the log, continues where it stopped, pins its key, and names a profile that is not the logged one', async () => {
    const { registry, database } = await fresh();
    const agents: Agent[] = [];
    for (let i = 0; i < 4; i += 1) agents.push(await registerOn(registry, `Mirrored ${i}`));
    const dir = path.join(work, 'follow');

    const first = await mirror(registry, dir);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.json.tree_size, 4);
    assert.equal(first.json.added, 4);
    assert.equal(first.json.key_source, 'trust-on-first-use');
    assert.match(first.stderr, /trust on first use: pinned the verifier key/);
    const key = (await (await fetch(`${registry.url}/log/verifier-key`)).text()).trim();
    assert.equal(first.json.verifier_key, key);
    const profiles = copy<{ did: string; profile: string }>(
      dir,
      'SELECT did, profile FROM agents ORDER BY leaf_index',
    );
    assert.deepEqual(
      profiles.map((row) => [row.did, (JSON.parse(row.profile) as { name: string }).name]),
      agents.map((agent, i) => [agent.did, `Mirrored ${i}`]),
    );

    const update = await http(
      registry,
      'PUT',
      `/api/agents/${encodeURIComponent(agents[0]!.did)}`,
      agents[0]!.token,
      {
        description: 'Changed once',
      },
    );
    assert.equal(update.status, 200, JSON.stringify(update.body));
    agents.push(await registerOn(registry, 'Mirrored 4'));
    const second = await mirror(registry, dir);
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual([second.json.tree_size, second.json.added, second.json.agents], [6, 2, 5]);
    assert.doesNotMatch(second.stderr, /trust on first use/);
    const changed = copy<{ profile: string; op: string }>(
      dir,
      `SELECT profile, op FROM agents WHERE did = '${agents[0]!.did}'`,
    )[0];
    assert.equal(
      (JSON.parse(changed?.profile ?? '{}') as { description: string }).description,
      'Changed once',
    );
    assert.equal(copy<{ n: number }>(dir, 'SELECT COUNT(*) AS n FROM log_entries')[0]?.n, 6);

    const otherKey = key.replace(/\+[0-9a-f]{8}\+/, '+00000000+');
    const refused = await mirror(registry, dir, '--verifier-key', otherKey);
    assert.equal(refused.code, 2, refused.stderr);
    const elsewhere = await mirror(registry, path.join(work, 'pinned'), '--verifier-key', key);
    assert.equal(elsewhere.code, 0, elsewhere.stderr);
    assert.equal(elsewhere.json.key_source, 'flag');

    // The profile row changed behind the log's back; the restart empties the profile cache.
    await tamper(
      database,
      `UPDATE agents SET description = 'Not what was logged' WHERE did = '${agents[2]!.did}'`,
    );
    await registry.stop();
    await registry.start();
    const lied = await mirror(registry, path.join(work, 'lied'));
    assertStopped(
      lied,
      new RegExp(
        `the profile served for ${agents[2]!.did} .* is not the one logged at position 2, sequence \\d+`,
      ),
    );
    assert.equal(
      copy<{ n: number }>(path.join(work, 'lied'), 'SELECT COUNT(*) AS n FROM log_entries')[0]?.n,
      0,
    );
  });

  test('a rewritten log row and a deleted leaf each stop the mirror, which keeps what it had verified', async () => {
    const { registry, database } = await fresh();
    for (let i = 0; i < 5; i += 1) await registerOn(registry, `Logged ${i}`);
    const dir = path.join(work, 'tampered');
    assert.equal((await mirror(registry, dir)).code, 0);

    // The record of leaf 1 rewritten, and the registry restarted: it now signs the rewritten history.
    await tamper(
      database,
      `UPDATE log_records SET record = REPLACE(record, 'Logged 1', 'Forged 1') WHERE seq = (SELECT MIN(seq) + 1 FROM log_records)`,
    );
    await registry.stop();
    await registry.start();
    assertStopped(await mirror(registry, dir), /forked checkpoint: two different roots for tree size 5/);
    await registerOn(registry, 'Logged 5');
    assertStopped(await mirror(registry, dir), /entry 1 was rewritten since it was verified/);
    assert.equal(copy<{ tree_size: number }>(dir, 'SELECT tree_size FROM mirror_head')[0]?.tree_size, 5);

    // A mirror starting now cannot tell the history was rewritten, but the served profile is not the forged leaf's.
    const later = path.join(work, 'later');
    assertStopped(
      await mirror(registry, later),
      /the profile served for .* is not the one logged at position 1, sequence/,
    );
    // Following the entries only, it trusts the rewritten log from its start; then a leaf is deleted under it.
    const trusted = await mirror(registry, later, '--no-profiles');
    assert.equal(trusted.json.tree_size, 6, `${trusted.stdout}${trusted.stderr}`);
    await registerOn(registry, 'Logged 6');
    await tamper(database, 'DELETE FROM log_records WHERE seq = (SELECT MIN(seq) + 3 FROM log_records)');
    assertStopped(
      await mirror(registry, later),
      /entry bundle 0 holds 6 entries, not 7|entry 3 was rewritten/,
    );
    assert.equal(copy<{ tree_size: number }>(later, 'SELECT tree_size FROM mirror_head')[0]?.tree_size, 6);
  });

  test('a mirror directory of an earlier release gets its follow state rebuilt from its entries, checked against its root', async () => {
    const { registry } = await fresh();
    for (let i = 0; i < 3; i += 1) await registerOn(registry, `Earlier ${i}`);
    const dir = path.join(work, 'earlier-release');
    assert.equal((await mirror(registry, dir)).json.tree_size, 3);
    // The shape an earlier release wrote: every leaf hash in log_entries, no follow state in the head.
    const asEarlierRelease = (target: string, statements: string) => {
      const db = new Database(path.join(target, 'mirror.db'));
      try {
        db.exec(`ALTER TABLE mirror_head DROP COLUMN follow_state; ${statements}`);
      } finally {
        db.close();
      }
    };
    const changed = path.join(work, 'earlier-release-changed');
    fs.cpSync(dir, changed, { recursive: true });
    asEarlierRelease(dir, '');
    asEarlierRelease(changed, 'UPDATE log_entries SET leaf_hash = zeroblob(32) WHERE leaf_index = 1');

    await registerOn(registry, 'Earlier 3');
    const next = await mirror(registry, dir);
    assert.equal(next.code, 0, next.stderr);
    assert.deepEqual([next.json.tree_size, next.json.added], [4, 1]);
    const [head] = copy<{ follow_state: string; root_hash: string }>(
      dir,
      'SELECT follow_state, root_hash FROM mirror_head',
    );
    const state = JSON.parse(head?.follow_state ?? '{}') as {
      size: number;
      root: string;
      range: string[];
      partial_bundle: string[];
    };
    assert.equal(state.size, 4);
    assert.equal(state.root, head?.root_hash);
    assert.equal(state.range.length, 1);
    assert.deepEqual(
      state.partial_bundle,
      copy<{ hash: string }>(dir, 'SELECT leaf_hash AS hash FROM log_entries ORDER BY leaf_index').map(
        (row) => Buffer.from(row.hash).toString('base64'),
      ),
    );
    assert.equal((await mirror(registry, dir)).json.added, 0);

    assertStopped(
      await mirror(registry, changed),
      /mirror\.db holds 3 entries hashing to .*, not the 3 verified ones of root .*: the copy was changed/,
    );
  });

  test('a restore from an older backup is a shrink, then a fork, never silently accepted', async () => {
    const { registry, database } = await fresh();
    for (let i = 0; i < 3; i += 1) await registerOn(registry, `Before ${i}`);
    const backup = path.join(work, testDatabase === 'sqlite' ? 'registry-backup.db' : 'registry-backup.dump');
    await run(process.execPath, ['--import', 'tsx', 'src/backup-main.ts', backup], {
      cwd: SERVER_DIR,
      env: { ...process.env, DATABASE_URL: database.url },
    });
    for (let i = 0; i < 3; i += 1) await registerOn(registry, `Lost ${i}`);
    const dir = path.join(work, 'restored');
    assert.equal((await mirror(registry, dir)).json.tree_size, 6);

    // docs/operations.md, Restore: stop every node, restore, start.
    await registry.stop();
    if (database.file !== undefined) {
      fs.rmSync(`${database.file}-wal`, { force: true });
      fs.rmSync(`${database.file}-shm`, { force: true });
      fs.copyFileSync(backup, database.file);
    } else {
      await run('pg_restore', [
        '--clean',
        '--if-exists',
        '--single-transaction',
        '--no-owner',
        `--dbname=${database.url}`,
        backup,
      ]);
    }
    await registry.start();
    assert.equal(await treeSize(registry), 3);
    assertStopped(
      await mirror(registry, dir),
      /the log shrank from 6 entries \(verified\) to 3: it was rewound/,
    );

    for (let i = 0; i < 3; i += 1) await registerOn(registry, `After ${i}`);
    assert.equal(await treeSize(registry), 6);
    assertStopped(await mirror(registry, dir), /forked checkpoint: two different roots for tree size 6/);
    await registerOn(registry, 'After 3');
    assertStopped(await mirror(registry, dir), /entry 3 was rewritten since it was verified/);
    assert.equal(copy<{ tree_size: number }>(dir, 'SELECT tree_size FROM mirror_head')[0]?.tree_size, 6);
    // A new trust point, taken deliberately (docs/operations.md), follows the restored log.
    assert.equal((await mirror(registry, path.join(work, 'after-restore'))).json.tree_size, 7);
  });
});
