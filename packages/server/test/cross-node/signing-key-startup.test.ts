import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { createContext } from '../../src/context.js';
import { loadConfig } from '../../src/kernel/config.js';
import {
  createTestDatabase,
  freePort,
  testDatabase,
  SERVER_DIR,
  type TestDatabase,
} from '@agent-registry/testkit';

const databases: TestDatabase[] = [];
after(async () => {
  for (const database of databases) await database.drop();
});

/** Whether the registry touched the database: the SQLite file exists, or PostgreSQL has its migration table. */
async function migrated(database: TestDatabase): Promise<boolean> {
  if (database.file !== undefined) return fs.existsSync(database.file);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query(
      "select 1 from information_schema.tables where table_name like 'kysely_migration%'",
    );
    return rows.length > 0;
  } finally {
    await client.end();
  }
}

/** What keeps this process alive, counted by kind (timers, workers, sockets). */
function resourceCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/**
 * The registry as an operator starts it, left to end by itself: the process is never killed, so a
 * timer, worker or socket left running would keep it alive past the test's timeout.
 */
async function startAlone(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: SERVER_DIR,
    env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.resume();
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stderr };
}

describe(`a malformed signing key stops the registry before it starts anything (${testDatabase})`, () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ format: 'pem', type: 'pkcs8' })
    .toString();

  for (const [name, value, says] of [
    ['LOG_SIGNING_KEY', 'not a key', 'LOG_SIGNING_KEY is neither a PKCS#8 PEM nor a private JWK'],
    ['TOKEN_SIGNING_KEY', 'not a key', 'TOKEN_SIGNING_KEY is neither a PKCS#8 PEM nor a private JWK'],
    ['LOG_SIGNING_KEY', rsa, 'LOG_SIGNING_KEY must be an Ed25519 key, got rsa'],
  ] as const) {
    test(`${name} ${value === rsa ? 'of another key type' : `"${value}"`}: the configuration error alone, exit 1, the process ends by itself, the database untouched`, async () => {
      const database = await createTestDatabase();
      databases.push(database);
      const { code, stderr } = await startAlone({
        DATABASE_URL: database.url,
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        [name]: value,
      });
      assert.equal(code, 1, stderr);
      // Reported as every other configuration error: the heading, then one line per problem.
      assert.equal(stderr, `Invalid configuration:\n  - ${says}\n`);
      assert.equal(await migrated(database), false);
    });
  }

  test('a context that fails part-way closes everything it had started: no worker, timer or connection is left', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const config = loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
    // A key loadConfig would refuse, handed over directly: the failure comes after the database, the
    // validator workers and the task events have started.
    const before = resourceCounts();
    await assert.rejects(
      createContext({
        ...config,
        identity: {
          ...config.identity,
          logSigningKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
        },
      }),
      /LOG_SIGNING_KEY must be an Ed25519 key, got ec/,
    );
    // A socket's or a worker's last close callback may still be queued: what is left once they ran.
    const added = async (): Promise<string[]> => {
      for (let turn = 0; turn < 100; turn++) {
        const left = [...resourceCounts()].filter(([kind, count]) => count > (before.get(kind) ?? 0));
        if (left.length === 0) return [];
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return [...resourceCounts()]
        .filter(([kind, count]) => count > (before.get(kind) ?? 0))
        .map(([kind]) => kind);
    };
    // Earlier tests' child processes may still be going away; nothing of any kind may be added.
    assert.deepEqual(await added(), [], 'left running');
    assert.equal(await migrated(database), true, 'the context got as far as the migrations');
  });
});
