import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Migrator } from 'kysely';
import { buildApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/kernel/config.js';
import { createContext } from '../../../src/context.js';
import { openDatabase } from '../../../src/db/connect.js';
import * as core from '../../../src/db/migrations/001-core.js';
import * as tasks from '../../../src/db/migrations/002-tasks.js';
import * as discovery from '../../../src/db/migrations/003-discovery.js';
import * as searchActiveOnly from '../../../src/db/migrations/004-search-active-only.js';
import * as usedSignatures from '../../../src/db/migrations/005-used-signatures.js';

test('migration 006 links the identities on file and counts the tasks that finished before it', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-migration-'));
  const file = path.join(dir, 'registry.db');
  try {
    const before = openDatabase({ kind: 'sqlite', path: file });
    const migrator = new Migrator({
      db: before.db,
      provider: {
        getMigrations: async () => ({
          '001-core': core,
          '002-tasks': tasks,
          '003-discovery': discovery,
          '004-search-active-only': searchActiveOnly,
          '005-used-signatures': usedSignatures,
        }),
      },
    });
    assert.equal((await migrator.migrateToLatest()).error, undefined);
    const now = Date.now();
    const did = (id: string) => `did:web:localhost%3A8080:agent:${id.repeat(16)}`;
    const agent = (id: string, webhook: string | null, referrer: string | null) => ({
      did: did(id),
      key_type: 'ed25519' as const,
      public_key: id.repeat(32),
      key_id: `ed25519:${id.repeat(32)}`,
      chain_id: null,
      name: `Agent ${id}`,
      description: null,
      avatar: null,
      website: null,
      capabilities: JSON.stringify([{ type: 'echo' }]),
      tags: '[]',
      status: 'active' as const,
      invocation_enabled: 1,
      delivery_mode: webhook === null ? ('queue' as const) : ('webhook' as const),
      webhook_url: webhook,
      webhook_secret: null,
      referrer,
      average_rating: 0,
      reputation_score: 0,
      total_reviews: 0,
      created_at: now,
      updated_at: now,
      deactivated_at: null,
    });
    await before.db
      .insertInto('agents')
      .values([
        agent('aa', 'https://hooks.example.com/a', null),
        agent('bb', 'https://HOOKS.example.com/b', null),
        agent('cc', null, did('aa')),
        agent('dd', null, 'a friend'),
      ])
      .execute();
    const task = (id: string, caller: string, target: string, status: 'completed' | 'timeout') => ({
      id,
      caller_did: did(caller),
      target_did: did(target),
      capability: 'echo',
      input: '{}',
      status,
      delivery_mode: 'queue' as const,
      output: status === 'completed' ? '{}' : null,
      error: null,
      error_code: null,
      created_at: now - 1000,
      deadline_at: now + 30_000,
      accepted_at: now - 900,
      completed_at: now - 600,
    });
    await before.db
      .insertInto('tasks')
      .values([
        task('t1', 'cc', 'bb', 'completed'), // counts
        task('t2', 'dd', 'bb', 'timeout'), // counts
        task('t3', 'aa', 'bb', 'completed'), // same webhook host: linked
        task('t4', 'cc', 'aa', 'completed'), // cc was referred by aa: linked
      ])
      .execute();
    await before.close();

    const ctx = await createContext(
      loadConfig({
        DATABASE_URL: `sqlite:${file}`,
        PUBLIC_URL: 'http://localhost:8080',
        LOG_LEVEL: 'silent',
      }),
    );
    const app = await buildApp(ctx, { logger: false });
    try {
      const record = async (id: string) =>
        (await app.inject({ url: `/api/agents/${encodeURIComponent(did(id))}` })).json().service_record;
      const b = await record('bb');
      assert.equal(b.all_time.invocations, 2);
      assert.equal(b.all_time.completed, 1);
      assert.equal(b.all_time.timeouts, 1);
      assert.equal(b.last_30_days.distinct_callers, 2);
      assert.equal(
        b.last_30_days.latency_p50_ms,
        350,
        'one 400 ms call: the middle of its 200-500 ms bucket',
      );
      assert.equal((await record('aa')).all_time.invocations, 0);
      const partners = await ctx.database.db.selectFrom('call_partners').selectAll().execute();
      assert.deepEqual(
        partners.map((row) => [row.caller_did, row.target_did]),
        [[did('cc'), did('bb')]],
      );
    } finally {
      await app.close();
      await ctx.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
