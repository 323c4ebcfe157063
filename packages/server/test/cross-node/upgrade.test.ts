import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { Wallet } from 'ethers';
import { checkProfileAgainstLeaf, verifyLogProof, type LogProof } from '@agent-registry/protocol';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import {
  createTestDatabase,
  referenceCanonicalJson,
  secp256k1Agent,
  testDatabase,
  TEST_PUBLIC_URL,
  type TestDatabase,
  startRegistryProcess,
  SERVER_DIR,
} from '@agent-registry/testkit';
import { loadRelease, stateOf } from '../support/database-fixtures.js';
import { http } from '../support/http.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.join(here, '..', 'fixtures', 'upgrade');

interface Answer {
  status: number;
  body: unknown;
}

/** What make-fixture.sh wrote: the agents' keys and the first complete release's answers. */
interface Fixture {
  agents: { did: string; key_type: 'ed25519' | 'secp256k1'; secret: string }[];
  tasks: { id: string; caller_did: string; target_did: string; status: string }[];
  answers: Record<string, Answer>;
}

const fixture = JSON.parse(
  fs.readFileSync(path.join(fixtures, `release-1.${testDatabase}.json`), 'utf8'),
) as Fixture;

/** A database of the kind under test holding the first complete release's schema and data. */
async function releaseDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  await loadRelease(database);
  return database;
}

interface ChildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function migrationChild(database: TestDatabase, ...args: string[]): Promise<ChildRun> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/support/migration-child.ts', database.url, ...args],
    {
      cwd: SERVER_DIR,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
}

/** Statements per migration (each migration's own, then its history row), counted on a copy. */
async function statementsPerMigration(make: () => Promise<TestDatabase>): Promise<Record<string, number>> {
  const scratch = await make();
  try {
    const run = await migrationChild(scratch, 'count');
    assert.equal(run.code, 0, run.stderr);
    return JSON.parse(run.stdout) as Record<string, number>;
  } finally {
    await scratch.drop();
  }
}

/**
 * Kills a migrating process after every statement of each named migration (each kill from the state
 * before that migration), checks that the database is exactly as before the migration, then lets
 * the migration finish.
 */
async function killAtEveryStep(
  database: TestDatabase,
  names: readonly string[],
  statements: Record<string, number>,
): Promise<void> {
  for (const name of names) {
    const before = await stateOf(database);
    const count = statements[name] ?? 0;
    assert.ok(count >= 1, `${name} runs at least its history row`);
    for (let statement = 1; statement <= count; statement += 1) {
      const run = await migrationChild(database, 'kill', name, String(statement));
      assert.equal(run.signal, 'SIGKILL', `killed after statement ${statement} of ${name}: ${run.stderr}`);
      assert.deepEqual(
        await stateOf(database),
        before,
        `killed after statement ${statement} of ${count} of ${name}: the database is as it was before ${name}`,
      );
    }
    const finished = await migrationChild(database, 'until', name);
    assert.equal(finished.code, 0, finished.stderr);
    assert.deepEqual((await stateOf(database)).applied, [...before.applied, name].sort());
  }
}

/** A fresh token through today's API, signed with the key the fixture kept. */
async function login(url: string, agent: Fixture['agents'][number]): Promise<Answer> {
  const timestamp = Date.now();
  let signature: string;
  if (agent.key_type === 'secp256k1') {
    const key = secp256k1Agent({ wallet: new Wallet(agent.secret) });
    signature = await key.sign(key.authenticationMessage(agent.did, timestamp));
  } else {
    const seed = Buffer.from(agent.secret, 'hex');
    const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
    const privateKey = crypto.createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
    const message = referenceCanonicalJson({
      audience: TEST_PUBLIC_URL,
      did: agent.did,
      purpose: 'authenticate',
      timestamp,
    });
    signature = crypto.sign(null, Buffer.from(message, 'utf8'), privateKey).toString('hex');
  }
  const response = await fetch(`${url}/api/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ did: agent.did, timestamp, signature }),
  });
  return { status: response.status, body: (await response.json()) as unknown };
}

/** Lists of links that later releases extend with their new faces (A2A, MCP). */
const GROWING_LISTS = /\.(endpoints|service)$/;

/**
 * Every member the earlier release answered, with the same value (today's answers may add members,
 * and entries to lists of links).
 */
function differences(then: unknown, now: unknown, at: string, found: string[]): void {
  if (Array.isArray(then) && GROWING_LISTS.test(at) && Array.isArray(now)) {
    for (const item of then) {
      const kept = now.some((candidate) => {
        const inner: string[] = [];
        differences(item, candidate, at, inner);
        return inner.length === 0;
      });
      if (!kept) found.push(`${at}: ${JSON.stringify(item)} is missing from ${JSON.stringify(now)}`);
    }
  } else if (Array.isArray(then)) {
    if (!Array.isArray(now) || now.length !== then.length) {
      found.push(`${at}: ${JSON.stringify(then)} became ${JSON.stringify(now)}`);
      return;
    }
    then.forEach((item, index) => differences(item, now[index], `${at}[${index}]`, found));
  } else if (then !== null && typeof then === 'object') {
    if (now === null || typeof now !== 'object') {
      found.push(`${at}: ${JSON.stringify(then)} became ${JSON.stringify(now)}`);
      return;
    }
    for (const [key, value] of Object.entries(then))
      differences(value, (now as Record<string, unknown>)[key], `${at}.${key}`, found);
  } else if (then !== now) {
    found.push(`${at}: ${JSON.stringify(then)} became ${JSON.stringify(now)}`);
  }
}

describe(`upgrade from the first complete release (${testDatabase})`, () => {
  test("a kill after any statement of the release's own migrations, from an empty database, leaves the database as before that migration", async () => {
    const release = await releaseDatabase();
    const releaseApplied = (await stateOf(release)).applied;
    await release.drop();
    const statements = await statementsPerMigration(createTestDatabase);
    const database = await createTestDatabase();
    try {
      await killAtEveryStep(database, releaseApplied, statements);
    } finally {
      await database.drop();
    }
  });

  test('upgraded with a kill after every statement of every later migration, it serves every record as before', async () => {
    const statements = await statementsPerMigration(releaseDatabase);
    const database = await releaseDatabase();
    try {
      const { applied } = await stateOf(database);
      const pending = MIGRATIONS.map(([name]) => name).filter((name) => !applied.includes(name));
      assert.ok(pending.length > 0, 'the fixture is of an earlier release');
      await killAtEveryStep(database, pending, statements);

      const node = await startRegistryProcess({ DATABASE_URL: database.url, PUBLIC_URL: TEST_PUBLIC_URL });
      try {
        const tokens = new Map<string, string>();
        const refused = new Map<string, Answer>();
        for (const agent of fixture.agents) {
          const answer = await login(node.url, agent);
          if (answer.status === 200) tokens.set(agent.did, (answer.body as { token: string }).token);
          else refused.set(agent.did, answer);
        }
        assert.equal(
          refused.size,
          1,
          `only the deactivated agent is refused a token: ${JSON.stringify([...refused])}`,
        );
        const openTasks = new Set(
          fixture.tasks
            .filter(({ status }) => status === 'pending' || status === 'processing')
            .map(({ id }) => id),
        );
        const found: string[] = [];
        for (const [key, then] of Object.entries(fixture.answers)) {
          const [url = '', as] = key.split(' as ');
          if (as !== undefined && !tokens.has(as)) {
            // The deactivated agent cannot sign in again; its own reads were refused then too.
            assert.ok(then.status >= 400, key);
            continue;
          }
          const now = await http(node, 'GET', url, as === undefined ? undefined : tokens.get(as));
          if (now.status !== then.status) found.push(`${key}: status ${then.status} became ${now.status}`);
          const taskId = url.startsWith('/api/tasks/') ? url.slice('/api/tasks/'.length) : undefined;
          if (taskId !== undefined && openTasks.has(taskId)) {
            // Open then, past its deadline now: the sweep may have ended it since.
            const {
              status,
              completed_at: _c,
              error: _e,
              error_code: _ec,
              ...rest
            } = then.body as Record<string, unknown>;
            assert.ok([status, 'timeout'].includes(now.body.status), `${key}: ${JSON.stringify(now.body)}`);
            differences(rest, now.body, key, found);
            continue;
          }
          differences(then.body, now.body, key, found);
        }
        assert.deepEqual(found, []);

        // Every agent of the earlier release is in the transparency log, as `agent-registry verify` checks.
        const verifierKey = await (await fetch(`${node.url}/log/verifier-key`)).text();
        for (const agent of fixture.agents) {
          const path = `/api/agents/${encodeURIComponent(agent.did)}`;
          const proof = await http(node, 'GET', `${path}/log-proof`);
          assert.equal(proof.status, 200, `${agent.did}: ${JSON.stringify(proof.body)}`);
          const { leaf } = verifyLogProof(proof.body as unknown as LogProof, verifierKey.trim(), agent.did);
          const profile = await http(node, 'GET', path);
          if (profile.status === 200) checkProfileAgainstLeaf(profile.body, leaf, 0);
        }
      } finally {
        await node.stop();
      }
    } finally {
      await database.drop();
    }
  });
});
