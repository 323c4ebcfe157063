import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Migrator, sql } from 'kysely';
import { buildApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/kernel/config.js';
import { createContext } from '../../../src/context.js';
import { openDatabase } from '../../../src/db/connect.js';
import * as core from '../../../src/db/migrations/001-core.js';
import * as tasks from '../../../src/db/migrations/002-tasks.js';
import { registeredAgentRow } from '../../support/database-fixtures.js';

test('a database from before search (001-002) migrates to the latest: its active agents are found, the SQL search tables are gone', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-migration-'));
  const file = path.join(dir, 'registry.db');
  try {
    const before = openDatabase({ kind: 'sqlite', path: file });
    const migrator = new Migrator({
      db: before.db,
      provider: { getMigrations: async () => ({ '001-core': core, '002-tasks': tasks }) },
    });
    assert.equal((await migrator.migrateToLatest()).error, undefined);
    const now = Date.now();
    const agent = (id: string, name: string, status: 'active' | 'deactivated') =>
      registeredAgentRow(`did:web:localhost%3A8080:agent:${id.repeat(16)}`, {
        public_key: id.repeat(32),
        key_id: `ed25519:${id.repeat(32)}`,
        name,
        description: 'Draws maps',
        capabilities: JSON.stringify([{ type: 'Mapping', description: 'Topographic surveys' }]),
        tags: JSON.stringify(['Geo']),
        status,
        created_at: now,
        updated_at: now,
        deactivated_at: status === 'active' ? null : now,
      });
    const retired = agent('cd', 'Retired Cartographer', 'deactivated');
    await before.db
      .insertInto('agents')
      .values([agent('ab', 'Veteran Cartographer', 'active'), retired])
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
      for (const query of ['capability=mapping', 'tags=geo', 'q=topographic', 'q=cartographer']) {
        const response = await app.inject({ method: 'GET', url: `/api/agents/search?${query}` });
        assert.equal(response.statusCode, 200, response.body);
        assert.deepEqual(
          response.json().agents.map((agent: { name: string }) => agent.name),
          ['Veteran Cartographer'],
          query,
        );
      }
      // 009: search runs on the in-memory index; the SQL search structures are dropped.
      const { db } = ctx.database;
      const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(
        db,
      );
      const names = tables.rows.map((row) => row.name);
      for (const dropped of ['agents_fts', 'agents_fts_ids', 'agent_capabilities', 'agent_tags']) {
        assert.ok(!names.includes(dropped), dropped);
      }
    } finally {
      await app.close();
      await ctx.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
