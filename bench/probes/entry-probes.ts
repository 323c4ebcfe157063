/**
 * What probing imported MCP servers costs the registry: N imported entries (an MCP Registry's servers,
 * written as the importer writes them), each pointing at one of a few real MCP servers in child processes
 * (bench/mcp-server.ts: the official SDK, stateless Streamable HTTP), probed by the registry's own entry
 * prober (packages/server src, the production composition root, SQLite file) in rounds run back to back
 * with the operator's bounds (FEDERATION_PROBE_MAX_PER_TICK, FEDERATION_PROBE_MAX_CONCURRENT). Each probe
 * is what production does: initialize, initialized, tools/list, the digest, the write and its log event.
 * Prints probes per second of capacity, registry CPU per probe, what the default interval needs of it,
 * heap and RSS.
 *
 *   node --import tsx bench/probes/entry-probes.ts [--entries 10000] [--servers 4] [--tools 8]
 *     [--per-tick 500] [--concurrent 32]
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { scriptArgs } from './script-args.js';

const args = scriptArgs();
const entries = args.number('--entries', 10_000);
const servers = args.number('--servers', 4);
const toolCount = args.number('--tools', 8);
const perTick = args.number('--per-tick', 500);
const concurrent = args.number('--concurrent', 32);
/** FEDERATION_PROBE_INTERVAL_SECONDS' default. */
const intervalSeconds = 15 * 60;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'entry-probes-'));
const file = path.join(dir, 'registry.db');

const basePort = 41_000 + Math.floor(Math.random() * 1000);
const serverScript = fileURLToPath(new URL('../mcp-server.ts', import.meta.url));
const children = await Promise.all(
  Array.from({ length: servers }, async (_, index) => {
    const child = fork(serverScript, [String(basePort + index), String(toolCount)], {
      execArgv: ['--import', 'tsx'],
    });
    await new Promise<void>((resolve) => child.once('message', () => resolve()));
    return child;
  }),
);

const { startRegistry } = await import('@agent-registry/testkit/in-process');
const { putRemoteEntry } =
  await import('../../packages/server/src/modules/federation/remote-entries-store.js');
const registry = await startRegistry(
  {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    FEDERATION_PROBE_INTERVAL_SECONDS: String(intervalSeconds),
    FEDERATION_PROBE_MAX_PER_TICK: String(perTick),
    FEDERATION_PROBE_MAX_CONCURRENT: String(concurrent),
  },
  {
    database: { url: `sqlite:${file}`, file, drop: async () => {} },
    manualProbes: true,
  },
);
const { db } = registry.ctx.database;
const base = 'http://bench-mcp-registry.example';
const seedStart = performance.now();
for (let index = 0; index < entries; index++) {
  const url = `http://127.0.0.1:${basePort + (index % servers)}/mcp/${index}`;
  await putRemoteEntry(
    db,
    {
      id: `mcp:${base}#io.example/server-${index}`,
      source_id: `mcp:${base}`,
      kind: 'imported',
      did: null,
      name: `Server ${index}`,
      description: 'An imported MCP server',
      capabilities: '[]',
      tags: '["mcp"]',
      endpoints: JSON.stringify([{ type: 'mcp', url }]),
      home_registry: base,
      provenance: JSON.stringify({
        kind: 'imported',
        home_registry: base,
        source_url: `${base}/v0.1/servers/server-${index}`,
        format: 'mcp-registry',
        verification: 'unsigned',
        fetched_at: Date.now(),
      }),
    },
    Date.now(),
  );
}
console.log(`wrote ${entries} imported entries in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);

const before = process.memoryUsage();
let peakRss = before.rss;
let peakHeap = before.heapUsed;
const sample = setInterval(() => {
  const usage = process.memoryUsage();
  peakRss = Math.max(peakRss, usage.rss);
  peakHeap = Math.max(peakHeap, usage.heapUsed);
}, 50);

const count = async (status?: string) =>
  Number(
    (
      await db
        .selectFrom('entry_probes')
        .select(sql<number>`count(*)`.as('n'))
        .$if(status === undefined, (query) => query.where('status', 'is not', null))
        .$if(status !== undefined, (query) => query.where('status', '=', status as 'answers'))
        .executeTakeFirstOrThrow()
    ).n,
  );

const cpuStart = process.cpuUsage();
const started = performance.now();
let rounds = 0;
let last = -1;
for (;;) {
  await registry.ctx.entryProbes.tick();
  await registry.ctx.entryProbes.drain();
  rounds++;
  const probed = await count();
  if (rounds % 5 === 0) console.log(`round ${rounds}: ${probed} probed`);
  if (probed === last || probed >= entries) break;
  last = probed;
}
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuStart);
clearInterval(sample);
const probed = await count();
const answering = await count('answers');
const digests = Number(
  (
    await db
      .selectFrom('entry_probes')
      .select(sql<number>`count(distinct tools_digest)`.as('n'))
      .executeTakeFirstOrThrow()
  ).n,
);
const cpuMs = (cpu.user + cpu.system) / 1000;
const perProbeUs = (cpuMs * 1000) / Math.max(1, probed);
const needed = entries / intervalSeconds;
console.log(
  JSON.stringify(
    {
      entries,
      servers,
      tools: toolCount,
      perTick,
      concurrent,
      rounds,
      probed,
      answering,
      distinctDigests: digests,
      seconds: Number(seconds.toFixed(1)),
      probesPerSecondCapacity: Math.round(probed / seconds),
      registryCpuMs: Math.round(cpuMs),
      cpuPerProbeUs: Math.round(perProbeUs),
      defaultIntervalNeedsPerSecond: Number(needed.toFixed(1)),
      defaultIntervalCpuShare: Number(((needed * perProbeUs) / 1e6).toFixed(4)),
      heapUsedBeforeMb: Math.round(before.heapUsed / 2 ** 20),
      peakHeapUsedMb: Math.round(peakHeap / 2 ** 20),
      rssBeforeMb: Math.round(before.rss / 2 ** 20),
      peakRssMb: Math.round(peakRss / 2 ** 20),
    },
    null,
    2,
  ),
);

await registry.close();
for (const child of children) child.kill();
fs.rmSync(dir, { recursive: true, force: true });
