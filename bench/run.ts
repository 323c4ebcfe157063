/**
 * npm run bench [-- --db postgres] [--agents 100000] [--remote N] [--duration 10] [--connections 10] [--cpu-prof]
 *                [--only get,search,...] [--search-duration 4] [--keep-database <dir>]
 *                [--registry-node-flags "--max-semi-space-size=64"]
 *
 * `--remote N` seeds N remote entries (one peer's mirrored agents) beside the agents: by default as
 * many as `--agents` when search is measured, else none. With them every search shape is measured again
 * with scope=federated (rows `search-federated-*`), once the registry has loaded its federated index.
 *
 * `--smoke` runs every scenario once, small and short (3,000 agents and as many remote entries, a
 * second a run, no warm-up), as `.ci/run` does: it fails on any error, any status a scenario does not
 * expect, and any difference between the reference servers' GET profile and the registry's; it judges no
 * budget and prints none (`npm run bench:smoke`; bench/RESULTS.md, "Smoke bench").
 *
 * `--only sybil` runs only the Sybil simulation of reputation v1 against v2 (bench/sybil.ts), in
 * process on SQLite; `--agents` then sets its honest agents (default 100).
 *
 * Builds the server if its build is stale, seeds a fresh database with `--agents` agents and their
 * reviews through the server's own store functions and settles it (PostgreSQL: VACUUM ANALYZE and
 * CHECKPOINT, so no measured run pays for the bulk load's aftermath), starts the registry as its own
 * process (node packages/server/dist/main.js) and runs the scenarios of bench/scenarios/ in order,
 * driving them with autocannon from this process; GET profile is measured side by side with a bare
 * node:http baseline and a bare-Fastify floor on the same database. Prints a table, one BUDGET line per
 * budget, and writes the raw figures to bench/out/. See bench/RESULTS.md for what the figures mean.
 *
 * `--keep-database <dir>` keeps seeds between runs: the first run of a dialect, size (`--agents`) and
 * BENCH_PORT (its did:web DIDs name the port) seeds, settles and keeps a copy in <dir> (SQLite: a
 * read-only file; PostgreSQL: a template database that accepts no connections, named in <dir>); later
 * runs start from a fresh copy of it (a file copy; CREATE DATABASE ... TEMPLATE), so every run starts
 * from the same seeded state and the writing scenarios never touch the kept seed. A seed made by other
 * seed code, corpus, schema or migrations is replaced. To discard: delete <dir>, and on PostgreSQL
 * ALTER DATABASE <template> IS_TEMPLATE false, then DROP DATABASE it.
 */
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { BenchDatabase } from './database.js';
import type { Row } from './measure.js';
import { parseOptions, type Options } from './options.js';
import { OUT, ROOT, buildIfNeeded, log, stop } from './processes.js';
import { machine, statusKb } from './proc.js';
import { renderReport, writeRawFigures } from './report.js';
import { registerActors } from './scenarios/actors.js';
import { authGetScenario } from './scenarios/auth-get.js';
import type { Scenario, ScenarioContext } from './scenarios/context.js';
import { facesScenario } from './scenarios/faces.js';
import { getProfileScenario } from './scenarios/get-profile.js';
import { ardScenario } from './scenarios/ard.js';
import { pageScenarios } from './scenarios/pages.js';
import { profileUpdateScenario } from './scenarios/profile-update.js';
import { queueScenario } from './scenarios/queue.js';
import { registrationScenarios } from './scenarios/registration.js';
import { reviewScenario } from './scenarios/reviews.js';
import { searchScenarios } from './scenarios/search.js';
import { webhookScenario } from './scenarios/webhook.js';
import { prepareDatabase } from './seeded-database.js';
import { startRegistry } from './servers.js';
import { summariseProfile } from './profile-summary.js';
import { runSybilBench } from './sybil.js';

/** The scenarios after GET profile (which needs no actors) and the actors' registration, in order. */
const SCENARIOS: Scenario[] = [
  authGetScenario,
  // Every search shape, each sort, at 1 and 10 connections.
  searchScenarios,
  // ARD beside the API calls it adapts.
  ardScenario,
  pageScenarios,
  queueScenario,
  webhookScenario,
  facesScenario,
  profileUpdateScenario,
  // SQLite only.
  reviewScenario,
  registrationScenarios,
];

/**
 * A row every scenario makes, by name (a prefix ending in `-` stands for any row it begins): a smoke run
 * of every scenario fails when one is missing, so that a scenario which stops running is noticed.
 * SQLite only: reviews and registrations.
 */
const SMOKE_ROWS: { name: string; sqliteOnly?: true }[] = [
  { name: 'get' },
  { name: 'baseline-get' },
  { name: 'floor-get' },
  { name: 'auth-get' },
  { name: 'search-' },
  { name: 'search-federated-' },
  { name: 'ard-search' },
  { name: 'ard-entry-' },
  { name: 'ard-catalog-page-1' },
  { name: 'page-' },
  { name: 'queue' },
  { name: 'webhook' },
  { name: 'faces-1' },
  { name: 'profile-update' },
  { name: 'review', sqliteOnly: true },
  { name: 'register-ed25519', sqliteOnly: true },
  { name: 'register-secp256k1', sqliteOnly: true },
];

function assertSmokeRows(rows: readonly Row[], db: Options['db']): void {
  const missing = SMOKE_ROWS.filter(
    (expected) =>
      (expected.sqliteOnly !== true || db === 'sqlite') &&
      !rows.some((row) =>
        expected.name.endsWith('-') ? row.name.startsWith(expected.name) : row.name === expected.name,
      ),
  );
  if (missing.length > 0) {
    throw new Error(`smoke: no run of ${missing.map((row) => row.name).join(', ')}: a scenario did not run`);
  }
}

/**
 * Errors the processes of a smoke run logged (the registry logs JSON at warn and above; pino's error is
 * level 50, fatal 60): an error in a background job fails the run even when every answer was right.
 */
function assertNothingLoggedAsError(processLog: string): void {
  const errors = fs
    .readFileSync(processLog, 'utf8')
    .split('\n')
    .filter((line) => {
      if (!line.startsWith('{')) return false;
      try {
        return Number((JSON.parse(line) as { level?: unknown }).level) >= 50;
      } catch {
        return false;
      }
    });
  if (errors.length > 0) {
    throw new Error(`smoke: ${errors.length} errors logged (${processLog}), the first:\n${errors[0]}`);
  }
}

/**
 * With remote entries the registry loads its federated index in the background after it listens: no
 * scenario is measured while that load runs.
 */
async function waitForFederatedIndex(base: string): Promise<void> {
  const started = Date.now();
  for (;;) {
    const response = await fetch(`${base}/api/federation/status`);
    const status = (await response.json()) as { search_index?: { state: string; indexed: number } };
    if (status.search_index?.state === 'ready') {
      log(
        `federated search index loaded (${status.search_index.indexed} rows), ready ${((Date.now() - started) / 1000).toFixed(1)} s after /readyz`,
      );
      return;
    }
    if (Date.now() - started > 600_000)
      throw new Error('the federated search index was not ready in 10 minutes');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const wanted = (name: string) => options.only === undefined || options.only.has(name);
  fs.mkdirSync(OUT, { recursive: true });
  if (options.only?.has('sybil') === true) {
    const agentsGiven = process.argv.includes('--agents');
    await runSybilBench(OUT, log, agentsGiven ? options.agents : undefined);
    if (options.only.size === 1) return;
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const processLog = path.join(OUT, `${options.db}-${stamp}-processes.log`);
  const box = machine();
  log(
    `machine: ${box.cpu}, ${box.cores} cores, ${box.memoryGiB} GiB, node ${box.node}, kernel ${box.kernel}`,
  );
  log(
    `database: ${options.db}, ${options.agents} agents, ${options.remote} remote entries, ${options.duration} s per run, ${options.connections} connections` +
      (options.registryNodeFlags.length > 0
        ? `; registry started with ${options.registryNodeFlags.join(' ')}`
        : ''),
  );
  const started = Date.now();
  buildIfNeeded();

  const port = Number(process.env.BENCH_PORT ?? 18080);
  const ports = { registry: port, baseline: port + 1, hook: port + 2, floor: port + 3 };
  const publicUrl = `http://localhost:${port}`;
  const base = `http://127.0.0.1:${port}`;
  let database: BenchDatabase | undefined;
  const children: ChildProcess[] = [];
  const cleanup = async () => {
    for (const child of children) await stop(child).catch(() => undefined);
    await database?.drop().catch((error: unknown) => log(`could not drop the database: ${String(error)}`));
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));

  try {
    // ------------------------------------------------------------------ seed
    const prepared = await prepareDatabase(
      options,
      { didWebDomain: `localhost%3A${port}`, batch: 500, remote: options.remote },
      (created) => {
        database = created;
      },
    );
    database = prepared.database;
    const { seeded } = prepared;
    const sampleDids = Array.from(
      { length: 20_000 },
      () => seeded.dids[crypto.randomInt(seeded.dids.length)] as string,
    );

    // ------------------------------------------------------------------ registry
    const profileDir = path.join(OUT, `profile-${options.db}-${stamp}`);
    const server = await startRegistry(
      {
        databaseUrl: database.url,
        port,
        publicUrl,
        agents: options.agents,
        processLog,
        nodeFlags: options.registryNodeFlags,
        ...(options.cpuProf ? { cpuProfileDir: profileDir } : {}),
      },
      children,
    );
    const pid = server.pid as number;
    if (options.remote > 0) await waitForFederatedIndex(base);
    const rssAtStart = statusKb(pid, 'VmRSS');

    // ------------------------------------------------------------------ scenarios
    const context: ScenarioContext = {
      base,
      publicUrl,
      pid,
      ports,
      options,
      wanted,
      database,
      seededDids: seeded.dids,
      sampleDids,
      children,
      processLog,
    };
    const rows: Row[] = await getProfileScenario(context);
    const withActors = { ...context, actors: await registerActors(context) };
    for (const scenario of SCENARIOS) rows.push(...(await scenario(withActors)));

    const peakRssKb = statusKb(pid, 'VmHWM');
    const rssEndKb = statusKb(pid, 'VmRSS');
    const rssEndAnonKb = statusKb(pid, 'RssAnon');
    const rssEndFileKb = statusKb(pid, 'RssFile');
    const databaseBytes = await database.sizeBytes();
    await stop(server);

    // ------------------------------------------------------------------ report
    if (options.smoke) {
      if (options.only === undefined) assertSmokeRows(rows, options.db);
      assertNothingLoggedAsError(processLog);
    }
    const report = renderReport(rows, {
      options,
      box,
      seeded,
      seedSeconds: prepared.seedSeconds,
      seedSource: prepared.source,
      settleSeconds: prepared.settleSeconds,
      peakRssKb,
      rssEndKb,
      rssEndAnonKb,
      rssEndFileKb,
      rssAtStart,
      elapsed: (Date.now() - started) / 1000,
      databaseBytes,
    });
    // A smoke run's figures are too small and short to mean anything: its report only goes to the file.
    if (options.smoke) log(`smoke: ${rows.length} runs, every answer 2xx or expected, no mismatch`);
    else console.log(report);
    const jsonFile = writeRawFigures(path.join(OUT, `${options.db}-${stamp}`), rows, report, {
      options,
      box,
      seedSeconds: prepared.seedSeconds,
      seedSource: prepared.source,
      settleSeconds: prepared.settleSeconds,
      peakRssKb,
      databaseBytes,
    });
    log(`raw figures: ${path.relative(ROOT, jsonFile)}; process logs: ${path.relative(ROOT, processLog)}`);
    if (options.cpuProf) {
      for (const file of fs.readdirSync(profileDir)) {
        console.log(summariseProfile(path.join(profileDir, file), 30));
      }
    }
  } finally {
    await cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
