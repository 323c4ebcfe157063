import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { getJson, profileOf, registerNamed } from '../support/discovery-helpers.js';
import {
  agentPath,
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
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import { http } from '../support/http.js';
import { merkleRoot, splitBundle, verifyCheckpoint } from '../support/tlog-verifier.js';

const run = promisify(execFile);

interface Agent {
  did: string;
  token: string;
}

async function registerOn(node: RegistryProcess, name: string): Promise<Agent> {
  const body = await registrationBody(ed25519Agent(), profileOf(name), Date.now());
  const response = await http(node, 'POST', '/api/agents/register', undefined, body);
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body as unknown as Agent;
}

/** The names a node's search finds for one word (every group here is smaller than a page). */
async function found(node: RegistryProcess, word: string): Promise<string[]> {
  const response = await http(node, 'GET', `/api/agents/search?q=${word}&limit=100`);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  const agents = response.body.agents as { name: string }[];
  assert.equal(response.body.total, agents.length);
  return agents.map((agent) => agent.name).sort();
}

/** A node's checkpoint, and whether its root is the root of the entry bundles it serves. */
async function logRootMatchesEntries(node: RegistryProcess): Promise<{ size: number; matches: boolean }> {
  const key = (await (await fetch(`${node.url}/log/verifier-key`)).text()).trim();
  const { size, root } = verifyCheckpoint(await (await fetch(`${node.url}/log/checkpoint`)).text(), key);
  const entries: Uint8Array[] = [];
  for (let index = 0; index * 256 < size; index += 1) {
    const width = Math.min(256, size - index * 256);
    const tile = `${String(index).padStart(3, '0')}${width < 256 ? `.p/${width}` : ''}`;
    const response = await fetch(`${node.url}/log/tile/entries/${tile}`);
    assert.equal(response.status, 200, tile);
    entries.push(...splitBundle(new Uint8Array(await response.arrayBuffer())));
  }
  return { size, matches: Buffer.from(merkleRoot(entries)).equals(Buffer.from(root)) };
}

const names = (word: string, count: number): string[] =>
  Array.from({ length: count }, (_, index) => `${word} ${index}`).sort();

describe('a node whose database moves back under it', () => {
  let registry: TestRegistry;

  before(async () => {
    registry = await startRegistry();
  });

  after(async () => {
    await registry?.close();
  });

  test('the feed head behind the index: the next search reloads the index and profile cache from the database', async () => {
    const search = async (word: string) => {
      const response = await getJson(registry, `/api/agents/search?q=${word}&limit=100`);
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json<{ agents: { name: string }[]; total: number }>();
      // The total counts the index's matches: an agent the restore removed would still count.
      assert.equal(body.total, body.agents.length);
      return body.agents.map((agent) => agent.name);
    };
    const description = async (did: string) => {
      const response = await getJson(registry, agentPath(did));
      assert.equal(response.statusCode, 200, response.body);
      return response.json<{ description: string }>().description;
    };
    const kept = await registerNamed(registry, 'Rewound kept');
    const removed = await registerNamed(registry, 'Rewound removed');
    assert.deepEqual((await search('rewound')).sort(), ['Rewound kept', 'Rewound removed']);
    assert.equal(await description(kept.did), 'Rewound kept description');
    // What a restore leaves: the later agent gone, the head back at the earlier one's number, and
    // that number now standing for another version of it (numbers are handed out a second time).
    const { db } = registry.ctx.database;
    const { change_seq } = await db
      .selectFrom('agents')
      .select('change_seq')
      .where('did', '=', kept.did)
      .executeTakeFirstOrThrow();
    await db.deleteFrom('agents').where('did', '=', removed.did).execute();
    await db.updateTable('agents').set({ description: 'As restored' }).where('did', '=', kept.did).execute();
    await sql`update change_feed_head set seq = ${Number(change_seq)} where id = 1`.execute(db);

    assert.deepEqual(await search('rewound'), ['Rewound kept']);
    assert.equal(await description(kept.did), 'As restored');
  });
});

const postgresOnly =
  testDatabase === 'postgres'
    ? false
    : 'pg_dump and pg_restore under running nodes (the postgres pass runs this; SQLite is restored with the node stopped, operations-docs.test.ts)';

describe('pg_restore while two nodes run', { skip: postgresOnly }, () => {
  let testDb: TestDatabase;
  let a: RegistryProcess;
  let b: RegistryProcess;
  let dir: string;

  before(async () => {
    testDb = await createTestDatabase();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-restore-'));
    [a, b] = await Promise.all([
      startRegistryProcess({ DATABASE_URL: testDb.url, PUBLIC_URL: TEST_PUBLIC_URL }),
      startRegistryProcess({ DATABASE_URL: testDb.url, PUBLIC_URL: TEST_PUBLIC_URL }),
    ]);
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await testDb?.drop();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('each node notices the restore at its next search or log request, even after new writes carried the head past it', async () => {
    const alpha: Agent[] = [];
    for (let index = 0; index < 6; index += 1) alpha.push(await registerOn(a, `Alpha ${index}`));
    const dump = path.join(dir, 'registry.dump');
    await run(process.execPath, ['--import', 'tsx', 'src/backup-main.ts', dump], {
      cwd: SERVER_DIR,
      env: { ...process.env, DATABASE_URL: testDb.url },
    });

    for (let index = 0; index < 4; index += 1) await registerOn(a, `Bravo ${index}`);
    for (const agent of alpha.slice(0, 2)) {
      const response = await http(b, 'DELETE', `/api/agents/${encodeURIComponent(agent.did)}`, agent.token);
      assert.equal(response.status, 200, JSON.stringify(response.body));
    }
    const logged = await logRootMatchesEntries(b);
    assert.ok(logged.matches);
    for (const node of [a, b]) {
      assert.deepEqual(await found(node, 'bravo'), names('Bravo', 4));
      assert.deepEqual(await found(node, 'alpha'), names('Alpha', 6).slice(2));
    }

    await run('pg_restore', [
      '--clean',
      '--if-exists',
      '--single-transaction',
      '--no-owner',
      `--dbname=${testDb.url}`,
      dump,
    ]);
    await run('psql', [testDb.url, '-c', 'ANALYZE']);

    // Node a searches at once: the head it reads is behind its index.
    assert.deepEqual(await found(a, 'alpha'), names('Alpha', 6));
    assert.deepEqual(await found(a, 'bravo'), []);
    // More changes than the restore took back: node b, which has not searched since, reads a head
    // past its index's position; only the recreated table tells it the feed is not the one it read.
    for (let index = 0; index < 8; index += 1) await registerOn(a, `Charlie ${index}`);
    for (const node of [b, a]) {
      assert.deepEqual(await found(node, 'alpha'), names('Alpha', 6));
      assert.deepEqual(await found(node, 'bravo'), []);
      assert.deepEqual(await found(node, 'charlie'), names('Charlie', 8));
    }
    // Node b has not read the log since the restore, and the head is past what it had read: it
    // rebuilds its tree rather than appending the new records to the lost ones.
    const rebuilt = await logRootMatchesEntries(b);
    assert.equal(rebuilt.size, logged.size - 6 + 8);
    assert.ok(rebuilt.matches, 'the signed root is the root of the entries served');
  });
});
