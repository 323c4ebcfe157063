import pg from 'pg';
import { adminQuery, createDatabase, type BenchDatabase } from './database.js';
import type { Options } from './options.js';
import { log } from './processes.js';
import { seedRegistry, type SeedOptions, type SeedResult } from './seed.js';

/** The run's database, seeded and settled before anything is measured. */

export interface PreparedDatabase {
  database: BenchDatabase;
  seeded: SeedResult;
  /** Wall time of the seed. */
  seedSeconds: number;
  /** Wall time from the end of the seed until the database is ready. */
  settleSeconds: number;
}

export type SeedParameters = Omit<SeedOptions, 'database' | 'agents' | 'log'>;

/**
 * Creates the run's database, seeds and settles it. `created` hears of the database as soon as it
 * exists, so that the runner drops it however the run ends.
 */
export async function prepareDatabase(
  options: Options,
  seedParameters: SeedParameters,
  created: (database: BenchDatabase) => void,
): Promise<PreparedDatabase> {
  const database = await createDatabase(options.db);
  created(database);
  const seedStart = Date.now();
  const seeded = await seedRegistry({
    ...seedParameters,
    database: database.config,
    agents: options.agents,
    log,
  });
  const seedSeconds = (Date.now() - seedStart) / 1000;
  const settleStart = Date.now();
  await settle(database);
  const settleSeconds = (Date.now() - settleStart) / 1000;
  if (options.db === 'postgres')
    log(`settled the seeded database (VACUUM ANALYZE, CHECKPOINT) in ${settleSeconds.toFixed(1)} s`);
  return { database, seeded, seedSeconds, settleSeconds };
}

/**
 * Leaves a freshly bulk-loaded database as a registry that has been running a while has it, so that
 * no measured run pays for the load's aftermath.
 *
 * PostgreSQL: VACUUM sets the visibility map and hint bits of every page the seed wrote (without it,
 * the first reads of each page write it again, and index-only scans visit the heap), ANALYZE gives the
 * planner the statistics autovacuum would gather, and CHECKPOINT writes the dirty pages out now rather
 * than during a measured run. An earlier run measured a freshly loaded database, and its p99s grew
 * through the run; on a cluster with autovacuum off (as this VM's shared one is) the seed would never
 * be vacuumed at all.
 *
 * SQLite: nothing more. The seed has folded its WAL back into the file (seed.ts), and SQLite has no
 * background work to wait out. The registry never runs ANALYZE or PRAGMA optimize (db/connect.ts, the
 * migrations), so its planner never has statistics, and ANALYZE here would measure plans production
 * does not use: on a 100,000-agent seed it changed 4 of the 84 statements a run prepares (the change
 * feed's read and the agent count take another index, the reviewer lookup of reputation v2 another
 * index of agents, and the task update of the queue goes by status instead of by id).
 */
async function settle(database: BenchDatabase): Promise<void> {
  if (database.config.kind === 'sqlite') return;
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
  await checkpoint();
}

/** CHECKPOINT needs a superuser or pg_checkpoint: without either, the run goes on and says so. */
async function checkpoint(): Promise<void> {
  try {
    await adminQuery('CHECKPOINT');
  } catch (error) {
    log(`CHECKPOINT refused (${String(error)}): the run may pay for writing out the seed`);
  }
}
