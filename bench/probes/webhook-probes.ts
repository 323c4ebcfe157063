/**
 * What probing webhook agents costs the registry: N webhook agents (seeded, then pointed at local webhook
 * servers in a child process: bench/webhook-server.ts answers every request 200 at once), probed by the
 * registry's own prober (packages/server src, the production composition root, SQLite file) in rounds
 * run back to back with the operator's bounds (PROBE_MAX_PER_TICK, PROBE_MAX_CONCURRENT). Prints probes
 * per second of capacity, registry CPU per probe (SQL included: SQLite runs in process), what the default
 * interval needs of it, heap and RSS, and open sockets at the end.
 *
 *   node --import tsx bench/probes/webhook-probes.ts [--agents 100000] [--servers 4] [--per-tick 2000]
 *     [--concurrent 64] [--rounds <all agents once>]
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { seedRegistry } from '../seed.js';
import { scriptArgs } from './script-args.js';

const args = scriptArgs();
const agents = args.number('--agents', 100_000);
const servers = args.number('--servers', 4);
const perTick = args.number('--per-tick', 2000);
const concurrent = args.number('--concurrent', 64);
const intervalSeconds = 300;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-probes-'));
const file = path.join(dir, 'registry.db');
const seedStart = performance.now();
await seedRegistry({ database: { kind: 'sqlite', path: file }, agents, didWebDomain: 'localhost%3A8080' });
console.log(`seeded ${agents} agents in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);

// The webhook servers run in a child process: their CPU is not the registry's.
const basePort = 39_000 + Math.floor(Math.random() * 1000);
const serverScript = fileURLToPath(new URL('../webhook-server.ts', import.meta.url));
const children = await Promise.all(
  Array.from({ length: servers }, async (_, index) => {
    const child = fork(serverScript, [String(basePort + index)], { execArgv: ['--import', 'tsx'] });
    await new Promise<void>((resolve) => child.once('message', () => resolve()));
    return child;
  }),
);

const { startRegistry } = await import('@agent-registry/testkit/in-process');
const registry = await startRegistry(
  {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    PROBE_INTERVAL_SECONDS: String(intervalSeconds),
    PROBE_MAX_PER_TICK: String(perTick),
    PROBE_MAX_CONCURRENT: String(concurrent),
  },
  { database: { url: `sqlite:${file}`, file, drop: async () => {} }, manualProbes: true },
);
const { db } = registry.ctx.database;
// Every agent a webhook agent, spread over the servers (each agent still gets its own lane).
await sql`update agents set invocation_enabled = 1, delivery_mode = 'webhook',
  webhook_secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  webhook_url = 'http://127.0.0.1:' || (${sql.lit(basePort)} + (rowid % ${sql.lit(servers)})) || '/hook'`.execute(
  db,
);

const heapBefore = process.memoryUsage();
let peakRss = heapBefore.rss;
let peakHeap = heapBefore.heapUsed;
const sample = setInterval(() => {
  const usage = process.memoryUsage();
  peakRss = Math.max(peakRss, usage.rss);
  peakHeap = Math.max(peakHeap, usage.heapUsed);
}, 50);

const cpuStart = process.cpuUsage();
const started = performance.now();
let rounds = 0;
const answered = async () =>
  Number(
    (
      await db
        .selectFrom('webhook_probes')
        .select(sql<number>`count(*)`.as('n'))
        .where('last_probed_at', 'is not', null)
        .where('last_failed_at', 'is', null)
        .executeTakeFirstOrThrow()
    ).n,
  );
const maxRounds = args.number('--rounds', Math.ceil(agents / perTick) + 2);
let lastCount = -1;
while (rounds < maxRounds) {
  await registry.ctx.probes.tick();
  await registry.ctx.probes.drain();
  rounds++;
  const count = await answered();
  if (rounds % 10 === 0) console.log(`round ${rounds}: ${count} answered`);
  // Every probed agent answered once: the next round has nothing due.
  if (count === lastCount) break;
  lastCount = count;
}
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuStart);
clearInterval(sample);
const probed = await answered();
const failed = Number(
  (
    await db
      .selectFrom('webhook_probes')
      .select(sql<number>`count(*)`.as('n'))
      .where('last_failed_at', 'is not', null)
      .executeTakeFirstOrThrow()
  ).n,
);
const cpuMs = (cpu.user + cpu.system) / 1000;
const perProbeUs = (cpuMs * 1000) / Math.max(1, probed + failed);
const needed = agents / intervalSeconds;
const online = await registry.ctx.availability.counts();
console.log(
  JSON.stringify(
    {
      agents,
      servers,
      perTick,
      concurrent,
      rounds,
      probed,
      failed,
      seconds: Number(seconds.toFixed(1)),
      probesPerSecondCapacity: Math.round((probed + failed) / seconds),
      registryCpuMs: Math.round(cpuMs),
      cpuPerProbeUs: Math.round(perProbeUs),
      defaultIntervalNeedsPerSecond: Math.round(needed),
      defaultIntervalCpuShare: Number(((needed * perProbeUs) / 1e6).toFixed(3)),
      heapUsedBeforeMb: Math.round(heapBefore.heapUsed / 2 ** 20),
      peakHeapUsedMb: Math.round(peakHeap / 2 ** 20),
      rssBeforeMb: Math.round(heapBefore.rss / 2 ** 20),
      peakRssMb: Math.round(peakRss / 2 ** 20),
      availability: online,
    },
    null,
    2,
  ),
);

await registry.close();
for (const child of children) child.kill();
fs.rmSync(dir, { recursive: true, force: true });
