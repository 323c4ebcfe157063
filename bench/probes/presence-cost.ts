/**
 * What presence (availability of queue agents) costs with many workers polling: the registry
 * (packages/server src, the production composition root) on a seeded SQLite file with `--workers` queue
 * agents, each with a long poll in progress and polling again in a loop, as `--polls` polls spread over
 * the workers. Prints presence's CPU per poll (the in-memory note every poll makes), the database rows
 * and statements a flush writes and its time, and so the extra writes per second at the flush interval;
 * then a whole poll's CPU through the HTTP pipeline (`GET /api/agent/tasks?wait=0`, in-process inject)
 * for scale.
 *
 *   node --import tsx bench/probes/presence-cost.ts [--workers 10000] [--polls 1000000]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { agentPath, bearer } from '@agent-registry/testkit';
import { seedRegistry } from '../seed.js';
import { scriptArgs } from './script-args.js';

const args = scriptArgs();
const workers = args.number('--workers', 10_000);
const polls = args.number('--polls', 1_000_000);

/** Statements that write presence, counted while `counting` is on. */
let counting = false;
const writes = { statements: 0 };
type Prepare = (this: Database.Database, source: string) => Database.Statement;
const prototype = Database.prototype as unknown as { prepare: Prepare };
const prepare = prototype.prepare;
prototype.prepare = function countedPrepare(this: Database.Database, source: string) {
  const statement = prepare.call(this, source);
  if (!/^insert into "agent_presence/i.test(source.trim())) return statement;
  const run = statement.run.bind(statement) as (...parameters: unknown[]) => Database.RunResult;
  (statement as unknown as { run: typeof run }).run = (...parameters: unknown[]) => {
    if (counting) writes.statements++;
    return run(...parameters);
  };
  return statement;
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-cost-'));
const file = path.join(dir, 'registry.db');
await seedRegistry({
  database: { kind: 'sqlite', path: file },
  agents: workers,
  didWebDomain: 'localhost%3A8080',
});
const { startRegistry, register } = await import('@agent-registry/testkit/in-process');
const registry = await startRegistry({}, { database: { url: `sqlite:${file}`, file, drop: async () => {} } });
const { availability, database } = registry.ctx;
const dids = (await database.db.selectFrom('agents').select('did').execute()).map((row) => row.did);

// First polls: each worker's first poll is a change of state, written at once.
let cpu = process.cpuUsage();
let wall = performance.now();
counting = true;
for (const did of dids) {
  availability.pollStarted(did);
  await availability.seen(did);
}
counting = false;
const firstCpu = process.cpuUsage(cpu);
const first = {
  workers: dids.length,
  statements: writes.statements,
  ms: Math.round(performance.now() - wall),
  cpuUsPerFirstPoll: Math.round((firstCpu.user + firstCpu.system) / dids.length),
};
writes.statements = 0;

// Polls in a loop: the in-memory note only.
cpu = process.cpuUsage();
wall = performance.now();
for (let i = 0; i < polls; i++) await availability.seen(dids[i % dids.length]!);
const loopCpu = process.cpuUsage(cpu);
const cpuNsPerPoll = ((loopCpu.user + loopCpu.system) * 1000) / polls;

// One flush: every worker (each has a poll in progress), as every flush interval.
const flushes: { ms: number; cpuMs: number; statements: number }[] = [];
for (let round = 0; round < 3; round++) {
  writes.statements = 0;
  counting = true;
  cpu = process.cpuUsage();
  wall = performance.now();
  await availability.flush();
  const flushCpu = process.cpuUsage(cpu);
  counting = false;
  flushes.push({
    ms: Math.round(performance.now() - wall),
    cpuMs: Math.round((flushCpu.user + flushCpu.system) / 1000),
    statements: writes.statements,
  });
}

// A whole poll through the HTTP pipeline, for scale.
const worker = await register(registry);
await registry.app.inject({
  method: 'PUT',
  url: agentPath(worker.did, '/invocation'),
  headers: bearer(worker.token),
  payload: { enabled: true, delivery_mode: 'queue' },
});
const httpPolls = 3000;
for (let i = 0; i < 300; i++)
  await registry.app.inject({ method: 'GET', url: '/api/agent/tasks?wait=0', headers: bearer(worker.token) });
cpu = process.cpuUsage();
for (let i = 0; i < httpPolls; i++)
  await registry.app.inject({ method: 'GET', url: '/api/agent/tasks?wait=0', headers: bearer(worker.token) });
const httpCpu = process.cpuUsage(cpu);

const flushSeconds = 10;
console.log(
  JSON.stringify(
    {
      workers: dids.length,
      firstPolls: first,
      pollsInLoop: polls,
      presenceCpuNsPerPoll: Math.round(cpuNsPerPoll),
      flushEvery10s: flushes,
      rowsPerFlush: {
        agent_presence: dids.length,
        agent_presence_slots: 'new slots only (at most one per agent per 5 min)',
      },
      extraWriteStatementsPerSecond: Number(
        (flushes[flushes.length - 1]!.statements / flushSeconds).toFixed(1),
      ),
      extraRowsPerSecond: dids.length / flushSeconds,
      flushCpuShare: Number((flushes[flushes.length - 1]!.cpuMs / (flushSeconds * 1000)).toFixed(4)),
      wholePollCpuUsViaInject: Math.round((httpCpu.user + httpCpu.system) / httpPolls),
    },
    null,
    2,
  ),
);
await registry.close();
fs.rmSync(dir, { recursive: true, force: true });
