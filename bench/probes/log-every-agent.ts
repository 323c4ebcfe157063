/**
 * How long the upgrade that puts every agent older than the transparency log into it takes (migration
 * 022-log-every-agent): a database at the schema before the log (migration 013) gets N agents written
 * as rows (as a release of that time left them), is migrated up to the migration before, and then the
 * one migration is timed as a start of the registry runs it. Prints the seconds and the log's records.
 *
 *   node --import tsx bench/probes/log-every-agent.ts [--db sqlite|postgres] [--agents 100000]
 */
import { sql } from 'kysely';
import {
  MIGRATIONS,
  loadConfig,
  migrateToLatest,
  openDatabase,
  openPostgresForMigrations,
} from '@agent-registry/testkit/server-internals';
import { createDatabase } from '../database.js';
import { scriptArgs } from './script-args.js';

const args = scriptArgs();
const agents = args.number('--agents', 100_000);
const kind = args.text('--db') === 'postgres' ? 'postgres' : 'sqlite';
const BATCH = 1000;
const MIGRATION = '022-log-every-agent';

const database = await createDatabase(kind);
try {
  const config = loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
  const handle = openDatabase(config.database);
  try {
    await migrateToLatest(handle.db, { until: '013-availability' });
    const seedStart = performance.now();
    for (let start = 0; start < agents; start += BATCH) {
      const rows = [];
      for (let i = start; i < Math.min(agents, start + BATCH); i += 1) {
        const id = i.toString(16).padStart(32, '0');
        rows.push({
          did: `did:web:localhost%3A8080:agent:${id}`,
          name: `Agent ${i}`,
          description: `An agent registered before the log, number ${i}`,
          public_key: id.padStart(64, '0'),
          key_id: `ed25519:${id}`,
          key_type: 'ed25519' as const,
          capabilities: JSON.stringify([{ type: 'translation', description: 'Translates text' }]),
          tags: JSON.stringify(['language', `group-${i % 50}`]),
          status: 'active' as const,
          invocation_enabled: 0,
          delivery_mode: 'none' as const,
          average_rating: 0,
          reputation_score: 0,
          total_reviews: 0,
          created_at: 1_700_000_000_000 + i,
          updated_at: 1_700_000_000_000 + i,
          change_seq: i + 1,
        });
      }
      await handle.db.insertInto('agents').values(rows).execute();
    }
    await sql`update change_feed_head set seq = ${agents} where id = 1`.execute(handle.db);
    console.log(
      `${kind}: wrote ${agents} agents in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`,
    );
    const names = MIGRATIONS.map(([name]) => name);
    const previous = names[names.indexOf(MIGRATION) - 1];
    if (previous === undefined) throw new Error(`${MIGRATION} is not listed`);
    await migrateToLatest(handle.db, { until: previous });
    if (kind === 'postgres') await sql`analyze`.execute(handle.db);

    // As a start of the registry migrates: PostgreSQL on a connection without the requests' timeouts.
    const migrating =
      config.database.kind === 'postgres'
        ? openPostgresForMigrations(config.database, (error) => console.error(error))
        : handle;
    const started = performance.now();
    try {
      await migrateToLatest(migrating.db, { until: MIGRATION });
    } finally {
      if (migrating !== handle) await migrating.close();
    }
    const seconds = (performance.now() - started) / 1000;
    const logged = await sql<{ n: number | string }>`select count(*) as n from log_records`.execute(
      handle.db,
    );
    console.log(
      `${kind}: ${MIGRATION} logged ${Number(logged.rows[0]?.n)} agents in ${seconds.toFixed(1)} s`,
    );
  } finally {
    await handle.close();
  }
} finally {
  await database.drop();
}
