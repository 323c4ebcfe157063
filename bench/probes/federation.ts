/**
 * What federation costs (docs/federation.md), in three parts, each on SQLite:
 *
 *   npx tsx bench/probes/federation.ts search [--agents 100000] [--remote 100000] [--per-shape 400]
 *   npx tsx bench/probes/federation.ts mcp-import [--servers 10000]
 *   npx tsx bench/probes/federation.ts follow [--agents 100000] [--changes 1000]
 *
 * search: seeds local agents as bench/seed.ts does and writes remote entries straight into
 * remote_entries (as an importer would leave them), starts the built registry as its own process and
 * runs every search shape of bench/scenarios/search.ts one request at a time (1 connection), with
 * scope=federated and with scope=local; prints p50/p99 per shape.
 * mcp-import: a local fake MCP Registry (the documented ServerList shapes) serving `--servers` servers;
 * a registry in this process imports them (FEDERATION_MCP_REGISTRIES); prints the wall time of the
 * first full import, of a second round with nothing new, and the process's RSS and heap.
 * follow: seeds a peer with `--agents` agents (one log entry each), starts it as its own process; a
 * registry in this process follows it (FEDERATION_PEERS): the first full copy, then `--changes` new
 * registrations at the peer and the round that copies them, then one change alone.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { ChildProcess } from 'node:child_process';
import {
  createContext,
  loadConfig,
  migrateToLatest,
  openDatabase,
} from '@agent-registry/testkit/server-internals';
import { createDatabase } from '../database.js';
import { buildIfNeeded, stop } from '../processes.js';
import { seedRegistry } from '../seed.js';
import { startRegistry } from '../servers.js';
import { prng, registrationProfile, syntheticProfile } from '../corpus.js';
import { ed25519Identity, ed25519RegistrationBody } from '../keys.js';
import { searchShapes } from '../scenarios/search.js';
import { scriptArgs } from './script-args.js';

const args = scriptArgs();
const part = process.argv[2];
const port = Number(process.env.BENCH_PORT ?? 18190);
const base = `http://127.0.0.1:${port}`;
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** Peak RSS of this process while `work` runs, sampled every 50 ms. */
async function withPeakRss<T>(work: () => Promise<T>): Promise<{ value: T; peak: number }> {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 50);
  try {
    const value = await work();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { value, peak };
  } finally {
    clearInterval(timer);
  }
}

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;

async function searchPart(): Promise<void> {
  const agents = args.number('--agents', 100_000);
  const remote = args.number('--remote', 100_000);
  const perShape = args.number('--per-shape', 400);
  const database = await createDatabase('sqlite');
  const children: ChildProcess[] = [];
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'federation-probe-'));
  try {
    let started = Date.now();
    await seedRegistry({
      database: database.config,
      agents,
      didWebDomain: `127.0.0.1%3A${port}`,
      batch: 500,
      remote,
    });
    console.log(
      `seeded ${agents} local agents and ${remote} remote entries in ${seconds(Date.now() - started)}`,
    );
    await startRegistry(
      {
        databaseUrl: database.url,
        port,
        publicUrl: base,
        agents,
        processLog: path.join(work, 'registry.log'),
        nodeFlags: [],
      },
      children,
    );
    started = Date.now();
    const first = await fetch(`${base}/api/agents/search?scope=federated&limit=1`);
    const total = ((await first.json()) as { total: number }).total;
    console.log(
      `first federated search after start (waits for the load at start if unfinished): ${seconds(Date.now() - started)}, total ${total}`,
    );
    const shapes = searchShapes('agent', false);
    for (const scope of ['federated', 'local']) {
      for (const shape of shapes) {
        const latencies: number[] = [];
        // The first fifth warms up and is not counted.
        const warm = Math.floor(perShape / 5);
        for (let i = 0; i < perShape + warm; i += 1) {
          const url = `${base}${shape.paths[i % shape.paths.length] as string}&scope=${scope}`;
          const begin = performance.now();
          const response = await fetch(url);
          await response.arrayBuffer();
          const took = performance.now() - begin;
          if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
          if (i >= warm) latencies.push(took);
        }
        latencies.sort((a, b) => a - b);
        console.log(
          `${scope.padEnd(9)} ${shape.name.padEnd(34)} p50 ${percentile(latencies, 50).toFixed(2)} ms, p99 ${percentile(latencies, 99).toFixed(2)} ms`,
        );
      }
    }
  } finally {
    for (const child of children) await stop(child).catch(() => undefined);
    await database.drop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** A local MCP Registry speaking GET /v0.1/servers as its published OpenAPI documents it. */
function fakeMcpRegistry(count: number): http.Server {
  const stamp = (n: number) => new Date(Date.UTC(2025, 10, 1) + n * 1000).toISOString();
  const random = prng(7);
  const servers = Array.from({ length: count }, (_, n) => {
    const profile = syntheticProfile(random, n);
    return {
      server: {
        $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json',
        name: `io.example/server-${n}`,
        title: profile.name,
        description: profile.description.slice(0, 100),
        version: '1.0.0',
        remotes: [{ type: 'streamable-http', url: `https://mcp.example/s${n}` }],
      },
      _meta: {
        'io.modelcontextprotocol.registry/official': {
          status: 'active',
          publishedAt: stamp(n),
          updatedAt: stamp(n),
          isLatest: true,
        },
      },
    };
  });
  return http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    const since = url.searchParams.get('updated_since');
    const limit = Number(url.searchParams.get('limit') ?? '30');
    const start = Number(url.searchParams.get('cursor') ?? '0');
    const matching =
      since === null
        ? servers
        : servers.filter((item) => item._meta['io.modelcontextprotocol.registry/official'].updatedAt > since);
    const page = matching.slice(start, start + limit);
    const next = start + limit < matching.length ? String(start + limit) : undefined;
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        servers: page,
        metadata: { count: page.length, ...(next === undefined ? {} : { nextCursor: next }) },
      }),
    );
  });
}

async function mcpImportPart(): Promise<void> {
  const count = args.number('--servers', 10_000);
  const fake = fakeMcpRegistry(count);
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  const registry = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  const database = await createDatabase('sqlite');
  try {
    const handle = openDatabase(database.config);
    await migrateToLatest(handle.db);
    await handle.close();
    global.gc?.();
    const before = process.memoryUsage();
    console.log(`before: rss ${mib(before.rss)}, heap ${mib(before.heapUsed)}`);
    const started = Date.now();
    const { value: ctx, peak } = await withPeakRss(async () => {
      // The first round starts with the context (federation-jobs.ts); refresh() runs after it, so it
      // returns when the first full import and one more round (nothing new) are done.
      const ctx = await createContext(
        loadConfig({
          DATABASE_URL: database.url,
          PUBLIC_URL: base,
          LOG_LEVEL: 'warn',
          FEDERATION_MCP_REGISTRIES: registry,
          FEDERATION_REFRESH_SECONDS: '86400',
          WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        }),
      );
      await ctx.federation.refresh();
      return ctx;
    });
    const took = Date.now() - started;
    const status = await ctx.federation.status();
    const again = Date.now();
    await ctx.federation.refresh();
    const second = Date.now() - again;
    global.gc?.();
    const after = process.memoryUsage();
    console.log(
      `imported ${status.sources[0]?.entries} of ${count} servers in ${seconds(took)} (first round and one with nothing new; ` +
        `${Math.round(count / (took / 1000))} servers/s); state ${status.sources[0]?.state}`,
    );
    console.log(`a round with nothing new: ${second} ms`);
    console.log(
      `memory: peak rss ${mib(peak)} (+${mib(peak - before.rss)}), after: rss ${mib(after.rss)}, heap ${mib(after.heapUsed)} (+${mib(after.heapUsed - before.heapUsed)})`,
    );
    console.log(`database: ${mib(await database.sizeBytes())}`);
    await ctx.close();
  } finally {
    fake.closeAllConnections();
    fake.close();
    await database.drop();
  }
}

async function followPart(): Promise<void> {
  const agents = args.number('--agents', 100_000);
  const changes = args.number('--changes', 1000);
  const peerDb = await createDatabase('sqlite');
  const followerDb = await createDatabase('sqlite');
  const children: ChildProcess[] = [];
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'federation-follow-'));
  try {
    let started = Date.now();
    await seedRegistry({ database: peerDb.config, agents, didWebDomain: `127.0.0.1%3A${port}`, batch: 500 });
    console.log(`seeded the peer with ${agents} agents in ${seconds(Date.now() - started)}`);
    await startRegistry(
      {
        databaseUrl: peerDb.url,
        port,
        publicUrl: base,
        agents,
        processLog: path.join(work, 'peer.log'),
        nodeFlags: [],
      },
      children,
    );
    const handle = openDatabase(followerDb.config);
    await migrateToLatest(handle.db);
    await handle.close();
    const before = process.memoryUsage.rss();
    started = Date.now();
    const { value: ctx, peak } = await withPeakRss(async () => {
      const ctx = await createContext(
        loadConfig({
          DATABASE_URL: followerDb.url,
          PUBLIC_URL: 'http://follower.example',
          LOG_LEVEL: 'warn',
          FEDERATION_PEERS: base,
          FEDERATION_REFRESH_SECONDS: '86400',
          WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        }),
      );
      await ctx.federation.refresh();
      return ctx;
    });
    const firstCopy = Date.now() - started;
    const status = await ctx.federation.status();
    console.log(
      `first full copy: ${status.sources[0]?.entries} entries in ${seconds(firstCopy)} ` +
        `(${Math.round(agents / (firstCopy / 1000))} agents/s; state ${status.sources[0]?.state}, ${status.sources[0]?.last_error ?? 'no error'}); ` +
        `peak rss ${mib(peak)} (+${mib(peak - before)}); follower database ${mib(await followerDb.sizeBytes())}`,
    );
    const register = async (count: number, from: number) => {
      const random = prng(from);
      for (let n = 0; n < count; n += 1) {
        const body = ed25519RegistrationBody(
          ed25519Identity(),
          registrationProfile(random, from + n),
          Date.now(),
        );
        const response = await fetch(`${base}/api/agents/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        if (response.status !== 201)
          throw new Error(`registration: ${response.status} ${await response.text()}`);
      }
    };
    for (const [label, count] of [
      [`${changes} changes`, changes],
      ['1 change', 1],
      ['nothing new', 0],
    ] as const) {
      await register(count, agents + 10 * count);
      const begin = Date.now();
      await ctx.federation.refresh();
      const took = Date.now() - begin;
      const now = await ctx.federation.status();
      console.log(
        `round with ${label}: ${took} ms${count > 0 ? ` (${(took / count).toFixed(2)} ms per change)` : ''}; entries ${now.sources[0]?.entries}, state ${now.sources[0]?.state}`,
      );
    }
    await ctx.close();
  } finally {
    for (const child of children) await stop(child).catch(() => undefined);
    await peerDb.drop();
    await followerDb.drop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

buildIfNeeded();
if (part === 'search') await searchPart();
else if (part === 'mcp-import') await mcpImportPart();
else if (part === 'follow') await followPart();
else throw new Error('give the part to run: search, mcp-import or follow');
