import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { adminQuery, createDatabase, fileCopyStrategy, type BenchDatabase } from './database.js';
import type { Options } from './options.js';
import { ROOT, log } from './processes.js';
import { seedRegistry, type SeedOptions, type SeedResult } from './seed.js';

/**
 * The run's database, seeded and settled before anything is measured: seeded now, or, with
 * `--keep-database <dir>`, copied from a seed an earlier run of the same dialect, size and port kept
 * there (seeding a million agents takes 10-15 minutes). Runs write (registrations, reviews, tasks), so
 * they always run on a copy: SQLite copies the kept file into the run's own temporary directory;
 * PostgreSQL creates the run's database with `CREATE DATABASE ... TEMPLATE`, from a template that
 * accepts no connections. The kept seed itself is never opened after it is made.
 */

export interface PreparedDatabase {
  database: BenchDatabase;
  seeded: SeedResult;
  /** Wall time of the seed (for a copy, of the seed it was copied from). */
  seedSeconds: number;
  /** Seeded by this run, or copied from a kept seed. */
  source: 'seeded' | 'copied';
  /** Wall time from the end of the seed (or the start of the copy) until the database is ready. */
  settleSeconds: number;
}

export type SeedParameters = Omit<SeedOptions, 'database' | 'agents' | 'log'>;

/**
 * Creates the run's database and seeds it, or copies a kept seed into it. `created` hears of the
 * database as soon as it exists, so that the runner drops it however the run ends.
 */
export async function prepareDatabase(
  options: Options,
  seedParameters: SeedParameters,
  created: (database: BenchDatabase) => void,
): Promise<PreparedDatabase> {
  const place = options.keepDatabase === undefined ? undefined : keptSeedPlace(options, seedParameters);
  const kept = place === undefined ? undefined : await readKeptSeed(place);
  if (place !== undefined && kept !== undefined) return copyKeptSeed(options, place, kept, created);
  const prepared = await seedAnew(options, seedParameters, created);
  if (place !== undefined) {
    const keepStart = Date.now();
    await keepSeed(prepared, place);
    log(`kept the seed in ${place.dir} (${((Date.now() - keepStart) / 1000).toFixed(1)} s)`);
  }
  return prepared;
}

async function seedAnew(
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
  return { database, seeded, seedSeconds, source: 'seeded', settleSeconds };
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

// ---------------------------------------------------------------------------------------- kept seeds

/** Where a kept seed of this run's dialect, size and port lives, and the fingerprint it must have. */
interface KeptSeedPlace {
  dir: string;
  manifestFile: string;
  fingerprint: string;
}

/** What a kept seed is, written beside it: a seed is reused only if all of it matches. */
export interface KeptManifest {
  /** Hash of what decides the seed's contents (seedFingerprint). */
  fingerprint: string;
  db: Options['db'];
  agents: number;
  /** SQLite: the kept file's name in the directory. PostgreSQL: the template database's name. */
  store: string;
  /** SQLite: the kept file's size and modification time, so that a file changed since is not reused. */
  storeBytes?: number;
  storeMtimeMs?: number;
  seedSeconds: number;
  /** The seed's DIDs (random, not derived from the PRNG) and counts, as seedRegistry returned them. */
  seeded: SeedResult;
  keptAt: string;
}

function keptSeedPlace(options: Options, seedParameters: SeedParameters): KeptSeedPlace {
  const dir = options.keepDatabase as string;
  const domain = seedParameters.didWebDomain.replace(/[^A-Za-z0-9]+/g, '_');
  return {
    dir,
    manifestFile: path.join(dir, `${options.db}-${options.agents}-${domain}.json`),
    fingerprint: seedFingerprint(options, seedParameters),
  };
}

async function copyKeptSeed(
  options: Options,
  place: KeptSeedPlace,
  kept: KeptManifest,
  created: (database: BenchDatabase) => void,
): Promise<PreparedDatabase> {
  const copyStart = Date.now();
  // PostgreSQL copies the template as it creates the database.
  const database = await createDatabase(options.db, options.db === 'postgres' ? kept.store : undefined);
  created(database);
  if (database.config.kind === 'sqlite') {
    fs.copyFileSync(path.join(place.dir, kept.store), database.config.path, fs.constants.COPYFILE_FICLONE);
    // The copy took the kept file's read-only mode with it; the run's copy must be writable.
    fs.chmodSync(database.config.path, 0o644);
  } else {
    // The copy's files are new to the cluster: written out now, not during a measured run.
    await checkpoint();
  }
  const settleSeconds = (Date.now() - copyStart) / 1000;
  log(`copied the seed of ${options.agents} agents kept at ${kept.keptAt} in ${settleSeconds.toFixed(1)} s`);
  return { database, seeded: kept.seeded, seedSeconds: kept.seedSeconds, source: 'copied', settleSeconds };
}

async function keepSeed(prepared: PreparedDatabase, place: KeptSeedPlace): Promise<void> {
  const { database } = prepared;
  fs.mkdirSync(place.dir, { recursive: true });
  const previous = readManifest(place.manifestFile);
  const manifest: KeptManifest = {
    fingerprint: place.fingerprint,
    db: database.config.kind,
    agents: prepared.seeded.dids.length,
    // SQLite: one file per directory, dialect, size and port. PostgreSQL: a name of its own; one named
    // after the fingerprint would be shared by two keep directories, and replacing it for one would
    // leave the other's DIDs naming agents it lacks.
    store:
      database.config.kind === 'sqlite'
        ? `${path.basename(place.manifestFile, '.json')}.db`
        : `registry_kept_seed_${prepared.seeded.dids.length}_${crypto.randomBytes(5).toString('hex')}`,
    seedSeconds: prepared.seedSeconds,
    seeded: prepared.seeded,
    keptAt: new Date().toISOString(),
  };
  try {
    if (database.config.kind === 'sqlite') {
      const file = database.config.path;
      if (fs.existsSync(`${file}-wal`) && fs.statSync(`${file}-wal`).size > 0)
        throw new Error(`${file} still has a WAL: the seed did not close it`);
      const kept = path.join(place.dir, manifest.store);
      const partial = `${kept}.partial-${process.pid}`;
      fs.copyFileSync(file, partial, fs.constants.COPYFILE_FICLONE);
      // Read-only, so that nothing opens the kept seed for writing by mistake (root ignores the mode,
      // hence the size and time in the manifest too).
      fs.chmodSync(partial, 0o444);
      fs.renameSync(partial, kept);
      const stat = fs.statSync(kept);
      manifest.storeBytes = stat.size;
      manifest.storeMtimeMs = stat.mtimeMs;
    } else {
      const source = new URL(database.url).pathname.slice(1);
      await adminQuery(`CREATE DATABASE ${manifest.store} TEMPLATE ${source}${await fileCopyStrategy()}`);
      // A template that accepts no connections: copies can be made of it, nobody can write to it.
      await adminQuery(`ALTER DATABASE ${manifest.store} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
    }
    // The manifest last: a seed is kept once its manifest is there.
    const partialManifest = `${place.manifestFile}.partial-${process.pid}`;
    fs.writeFileSync(partialManifest, JSON.stringify(manifest));
    fs.renameSync(partialManifest, place.manifestFile);
  } catch (error) {
    // A store without its manifest is never used; it would only take space (on a shared cluster).
    if (previous?.store !== manifest.store) await discardStore(place, manifest).catch(() => undefined);
    throw error;
  }
  // The seed of other code that this one replaces.
  if (previous !== undefined && previous.store !== manifest.store) await discardStore(place, previous);
}

async function discardStore(place: KeptSeedPlace, manifest: KeptManifest): Promise<void> {
  if (manifest.db === 'sqlite') fs.rmSync(path.join(place.dir, manifest.store), { force: true });
  else await dropTemplate(manifest.store);
}

async function dropTemplate(name: string): Promise<void> {
  if (!(await databaseExists(name))) return;
  await adminQuery(`ALTER DATABASE ${name} WITH IS_TEMPLATE false`);
  await adminQuery(`DROP DATABASE ${name}`);
}

async function databaseExists(name: string): Promise<boolean> {
  return ((await adminQuery('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount ?? 0) > 0;
}

/** The kept seed's manifest if the seed is usable: same fingerprint, its file or template unchanged. */
async function readKeptSeed(place: KeptSeedPlace): Promise<KeptManifest | undefined> {
  const manifest = readManifest(place.manifestFile);
  if (manifest === undefined) return undefined;
  if (manifest.fingerprint !== place.fingerprint) {
    log(`the seed kept in ${place.manifestFile} was made by other seed code or schema: seeding anew`);
    return undefined;
  }
  if (manifest.db === 'postgres') {
    // The name goes into SQL unquoted: only a name this module makes is used.
    if (
      /^registry_kept_seed_\d+_[0-9a-f]{10}$/.test(manifest.store) &&
      (await databaseExists(manifest.store))
    )
      return manifest;
    log(`the template ${manifest.store} named in ${place.manifestFile} is gone: seeding anew`);
    return undefined;
  }
  const file = path.join(place.dir, manifest.store);
  const stat = fs.existsSync(file) ? fs.statSync(file) : undefined;
  if (stat?.size === manifest.storeBytes && stat?.mtimeMs === manifest.storeMtimeMs) return manifest;
  log(`the kept seed ${file} is gone or was changed after it was kept: seeding anew`);
  return undefined;
}

/** A kept seed's manifest (`<seed>.json` beside a SQLite seed), or undefined when there is none. */
export function readManifest(file: string): KeptManifest | undefined {
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as KeptManifest) : undefined;
}

/**
 * What decides a seed's contents: the seed's parameters and the source of the seed, its corpus, the
 * server's schema, migrations and the store functions (modules' `*-store.ts`) the seed writes through.
 */
function seedFingerprint(options: Options, seedParameters: SeedParameters): string {
  const hash = crypto.createHash('sha256');
  hash.update(JSON.stringify({ db: options.db, agents: options.agents, ...seedParameters }));
  const sources = [
    'bench/seed.ts',
    'bench/corpus.ts',
    'packages/server/src/modules/reviews/reputation-model.ts',
    ...['db/migrations', 'db/schema', 'modules'].flatMap((dir) =>
      fs
        .readdirSync(path.join(ROOT, 'packages/server/src', dir), { recursive: true, encoding: 'utf8' })
        // Every migration and table, and of the modules only their stores (the queries a seed writes through).
        .filter((name) => name.endsWith('.ts') && (dir !== 'modules' || name.endsWith('-store.ts')))
        .map((name) => path.join('packages/server/src', dir, name)),
    ),
  ].sort();
  for (const file of sources) hash.update(file).update(fs.readFileSync(path.join(ROOT, file)));
  return hash.digest('hex');
}
