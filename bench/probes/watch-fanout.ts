/**
 * One changed agent watched by N subscribers: how fast the registry turns the change into N signed
 * Standard Webhooks deliveries and sends them (packages/server src, the production composition root,
 * SQLite file; the deliveries go to bench/webhook-server.ts in child processes, which answer 200 at once).
 * Each subscriber is a different agent (its own delivery lane), as N agents each watching once. Rounds
 * run back to back (capacity); the default schedule sends at most WATCH_MAX_PER_TICK per WATCH_TICK_MS
 * per node, printed beside it.
 *
 *   node --import tsx bench/probes/watch-fanout.ts [--subscribers 10000] [--servers 4] [--per-tick 500]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { agentPath, bearer } from '@agent-registry/testkit';
import { scriptArgs } from './script-args.js';

const args = scriptArgs();
const subscribers = args.number('--subscribers', 10_000);
const servers = args.number('--servers', 4);
const perTick = args.number('--per-tick', 500);
const tickMs = 1000;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'watch-fanout-'));
const file = path.join(dir, 'registry.db');
const basePort = 42_000 + Math.floor(Math.random() * 1000);
const serverScript = fileURLToPath(new URL('../webhook-server.ts', import.meta.url));
const children: ChildProcess[] = await Promise.all(
  Array.from({ length: servers }, async (_, index) => {
    const child = fork(serverScript, [String(basePort + index)], { execArgv: ['--import', 'tsx'] });
    await new Promise<void>((resolve) => child.once('message', () => resolve()));
    return child;
  }),
);

const { startRegistry, register } = await import('@agent-registry/testkit/in-process');
const registry = await startRegistry(
  {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WATCH_MAX_PER_TARGET: String(Math.max(subscribers, 1)),
    WATCH_MAX_PER_TICK: String(perTick),
  },
  { database: { url: `sqlite:${file}`, file, drop: async () => {} }, manualWatches: true },
);
const { db } = registry.ctx.database;
const target = await register(registry);
const now = Date.now();
const rows = Array.from({ length: subscribers }, (_, index) => ({
  id: `wat_${randomUUID().replaceAll('-', '')}`,
  owner_did: `did:web:localhost%3A8080:agent:${randomBytes(16).toString('hex')}`,
  target: target.did,
  url: `http://127.0.0.1:${basePort + (index % servers)}/watch`,
  secret: `whsec_${randomBytes(24).toString('base64')}`,
  events: '["agent.updated"]',
  created_at: now,
  deleted_at: null,
}));
for (let start = 0; start < rows.length; start += 500)
  await db
    .insertInto('watches')
    .values(rows.slice(start, start + 500))
    .execute();
// Changes before now are not announced: the follower starts at the head.
await registry.ctx.watchJobs.runOnce();

const pending = async () =>
  Number(
    (
      await db
        .selectFrom('watch_deliveries')
        .select(sql<number>`count(*)`.as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
const before = process.memoryUsage();
let peakRss = before.rss;
const sample = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 50);
const cpuStart = process.cpuUsage();
const started = performance.now();
const updated = await registry.app.inject({
  method: 'PUT',
  url: agentPath(target.did),
  headers: bearer(target.token),
  payload: { description: 'Changed under 10,000 watches' },
});
if (updated.statusCode !== 200) throw new Error(updated.body);
let queuedAt = 0;
let rounds = 0;
for (;;) {
  await registry.ctx.watchJobs.runOnce();
  rounds++;
  if (queuedAt === 0) queuedAt = performance.now();
  const left = await pending();
  if (rounds % 5 === 0) console.log(`round ${rounds}: ${left} deliveries left`);
  if (left === 0) break;
}
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuStart);
clearInterval(sample);
const delivered = (
  await Promise.all(
    children.map(
      (child) =>
        new Promise<number>((resolve) => {
          child.once('message', (message: { delivered?: number }) => resolve(message.delivered ?? 0));
          child.send({ type: 'stop' });
        }),
    ),
  )
).reduce((sum, count) => sum + count, 0);
const cpuMs = (cpu.user + cpu.system) / 1000;
console.log(
  JSON.stringify(
    {
      subscribers,
      servers,
      perTick,
      rounds,
      delivered,
      firstRoundMs: Math.round(queuedAt - started),
      seconds: Number(seconds.toFixed(2)),
      deliveriesPerSecondCapacity: Math.round(delivered / seconds),
      defaultScheduleBoundPerSecondPerNode: Math.round((perTick * 1000) / tickMs),
      registryCpuMs: Math.round(cpuMs),
      cpuPerDeliveryUs: Math.round((cpuMs * 1000) / Math.max(1, delivered)),
      rssBeforeMb: Math.round(before.rss / 2 ** 20),
      peakRssMb: Math.round(peakRss / 2 ** 20),
    },
    null,
    2,
  ),
);
await registry.close();
fs.rmSync(dir, { recursive: true, force: true });
