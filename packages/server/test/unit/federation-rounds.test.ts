import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eventually, testDatabase } from '@agent-registry/testkit';
import type { Db } from '../../src/db/connect.js';
import { startFederationJobs } from '../../src/modules/federation/federation-jobs.js';
import { ensureSource, readSource } from '../../src/modules/federation/remote-sources-store.js';
import { refreshEach } from '../../src/modules/federation/source-rounds.js';
import { migratedTestDatabase } from '../support/database-fixtures.js';

let handle: { db: Db; close(): Promise<void> };
const peers = ['https://broken.example', 'https://healthy.example'];
const idOf = (url: string): string => `peer:${url}`;

before(async () => {
  handle = await migratedTestDatabase();
  for (const url of peers) await ensureSource(handle.db, { id: idOf(url), kind: 'peer', url });
});
after(() => handle?.close());

test(`a source that fails unexpectedly is put on its status and the round goes on to the next (${testDatabase})`, async () => {
  const refreshed: string[] = [];
  const defect = new TypeError("Cannot read properties of undefined (reading 'length')");
  await assert.rejects(
    refreshEach(handle.db, peers, idOf, async (url) => {
      refreshed.push(url);
      if (url === peers[0]) throw defect;
    }),
    (error) => error === defect,
  );
  assert.deepEqual(refreshed, peers);
  const broken = await readSource(handle.db, idOf(peers[0] as string));
  assert.equal(broken?.state, 'error');
  assert.equal(
    broken?.last_error,
    "unexpected failure (the registry's log has it): Cannot read properties of undefined (reading 'length')",
  );
  assert.equal((await readSource(handle.db, idOf(peers[1] as string)))?.state, 'ok');
});

test(`a source that does not finish is cut at its own deadline and the next source still runs (${testDatabase})`, async () => {
  const ran: [string, boolean][] = [];
  await refreshEach(
    handle.db,
    peers,
    idOf,
    async (url, signal) => {
      // The first never answers: only its deadline ends it.
      if (url === peers[0]) await new Promise((resolve) => signal.addEventListener('abort', resolve));
      ran.push([url, signal.aborted]);
    },
    undefined,
    50,
  );
  assert.deepEqual(ran, [
    [peers[0], true],
    [peers[1], false],
  ]);
});

test('one kind of source failing does not keep the next kind from its round', async () => {
  const reported: unknown[] = [];
  const ran: string[] = [];
  const jobs = startFederationJobs(
    [
      {
        refreshAll: async () => {
          ran.push('peers');
          throw new Error('peers failed');
        },
      },
      {
        refreshAll: async () => {
          ran.push('imports');
        },
      },
    ],
    3_600_000,
    (error) => reported.push(error),
  );
  await eventually(() => ran.length === 2, 'the imports refreshed after the peers failed');
  await jobs.stop();
  assert.deepEqual(ran, ['peers', 'imports']);
  assert.deepEqual(
    reported.map((error) => (error as Error).message),
    ['peers failed'],
  );
});
