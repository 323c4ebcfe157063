/**
 * Where the GET profile's CPU goes, server by server: the node:http baseline, the bare-Fastify floor
 * and the registry (packages/server/dist), one after the other on one seeded SQLite database, each for
 * a fixed number of requests at 10 connections. CPU per request is less sensitive to a busy machine
 * than requests per second (perf's instruction counters are not available on this VM).
 *
 *   node --import tsx bench/probes/get-accounting.ts [--agents 20000] [--requests 60000] [--no-prof]
 *                                             [--only baseline,Fastify,registry]
 *
 * Each server runs twice. Without a profiler: CPU per request from /proc, for the whole process and
 * for its main thread (/proc/<pid>/task/<pid>). With `--cpu-prof`: the main thread's samples after the
 * first request (start-up is not per request), grouped by layer (the innermost frame in a known package
 * or registry file). Each layer's row is its share of the samples times the main thread's measured CPU,
 * so the rows add up to the main thread's figure, and with the other threads' row to the process's
 * (the profiler's own overhead is spread in proportion, not added).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type autocannon from 'autocannon';
import { runLoad } from '../load.js';
import { cpuMs, ticksPerSecond } from '../proc.js';
import { seedRegistry } from '../seed.js';
import { scriptArgs } from './script-args.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const args = scriptArgs();
const option = args.number;
const agents = option('--agents', 20_000);
const requests = option('--requests', 60_000);
const warmup = Math.round(requests / 3);
const profiling = !args.has('--no-prof');
const onlyList = args.text('--only');
const only = onlyList === undefined ? undefined : new Set(onlyList.split(','));

/** A stack's layer: the innermost frame that belongs to a known package or to the registry's code. */
function layerOf(stack: ProfileNode[]): string {
  const leaf = stack[0] as ProfileNode;
  const name = leaf.callFrame.functionName;
  if (name === '(garbage collector)') return 'V8 garbage collector';
  if (name === '(program)') return 'V8 (program: compiled code outside JS frames)';
  if (
    name === 'writev' ||
    name === 'writeUtf8String' ||
    name === 'writeLatin1String' ||
    name === 'writeBuffer'
  )
    return 'socket write (libuv, kernel)';
  for (const node of stack) {
    const { url, functionName } = node.callFrame;
    if (url === '') continue;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
    if (pkg === 'kysely')
      return functionName === 'executeQuery' && url.includes('sqlite-driver')
        ? 'SQLite statement (better-sqlite3 native, called by the driver)'
        : 'Kysely (driver, executor, plugins)';
    if (pkg !== undefined) return pkg;
    if (
      url.includes('bench/profile-json') ||
      url.includes('bench/baseline') ||
      url.includes('bench/fastify-floor')
    )
      // The lookup closure (`async (did) => statement.get(did)`) is named `default` once transpiled.
      return functionName === 'default' && url.includes('bench/profile-json')
        ? 'SQLite statement (better-sqlite3 native)'
        : 'reference server code (row to JSON, handler)';
    // The registry runs from dist/; its sources run only in the reference servers (their profile builder).
    if (url.includes('/packages/server/src/')) return 'reference server code (row to JSON, handler)';
    if (url.includes('/packages/protocol/')) return 'registry: protocol (DID parsing)';
    if (url.includes('/packages/server/')) {
      const part = url.split('/packages/server/dist/')[1] ?? url;
      return `registry: ${part
        .split('/')
        .slice(0, part.startsWith('modules/') ? 3 : 2)
        .join('/')
        .replace(/\.js$/, '')}`;
    }
    if (url.startsWith('node:')) {
      const module = url.slice(5).replace(/^internal\//, '');
      if (/^(_http|http)/.test(module)) return 'node:http';
      if (/^(net|stream|streams|stream_base)/.test(module)) return 'node:net and streams';
      if (/^(process\/task_queues|timers|async_hooks)/.test(module)) return 'node: microtasks, timers';
      return `node:${module.split('/')[0]}`;
    }
  }
  return name === '(idle)' ? '(idle)' : `other native (${name})`;
}

function accountProfile(file: string, answered: number): Map<string, number> {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stackOf = (id: number): ProfileNode[] => {
    const stack: ProfileNode[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at))
      stack.push(byId.get(at) as ProfileNode);
    return stack;
  };
  const layers = new Map<string, number>();
  let serving = false;
  profile.samples.forEach((id, index) => {
    const stack = stackOf(id);
    if (!serving) {
      serving = stack.some((node) => node.callFrame.functionName === 'parserOnIncoming');
      if (!serving) return;
    }
    const layer = layerOf(stack);
    if (layer === '(idle)') return;
    layers.set(layer, (layers.get(layer) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  for (const [layer, us] of layers) layers.set(layer, us / answered);
  return layers;
}

function spawnServer(args: string[], env: Record<string, string>, profileDir?: string): ChildProcess {
  const flags =
    profileDir === undefined
      ? []
      : ['--cpu-prof', '--cpu-prof-interval', '200', `--cpu-prof-dir=${profileDir}`];
  return spawn(process.execPath, [...flags, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not answer`);
}

async function stopAndWait(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  await exited;
}

/** CPU time of one thread of a process (utime + stime), ms; the main thread's id is the process id. */
function threadCpuMs(pid: number, tid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond();
}

interface Measured {
  name: string;
  rps: number;
  /** Whole process and main thread CPU per request, µs (/proc), without the profiler. */
  cpuUs: number;
  mainUs: number;
  /** Main-thread layers, µs per request: the profile's shares of the measured main-thread CPU. */
  layers: Map<string, number>;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-accounting-'));
  const file = path.join(dir, 'registry.db');
  const port = Number(process.env.BENCH_PORT ?? 18180);
  const publicUrl = `http://localhost:${port}`;
  const base = `http://127.0.0.1:${port}`;
  const seeded = await seedRegistry({
    database: { kind: 'sqlite', path: file },
    agents,
    didWebDomain: `localhost%3A${port}`,
  });
  const paths = Array.from(
    { length: 20_000 },
    (_, i) => seeded.dids[(i * 7919) % seeded.dids.length] as string,
  ).map((did) => `/api/agents/${encodeURIComponent(did)}`);
  let next = 0;
  const load: autocannon.Request[] = [
    {
      method: 'GET',
      setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] as string }),
    },
  ];
  const url = `sqlite:${file}`;
  const servers = [
    {
      name: 'baseline (node:http)',
      args: ['--import', 'tsx', 'bench/baseline-server.ts', url, String(port), publicUrl],
    },
    {
      name: 'Fastify floor',
      args: ['--import', 'tsx', 'bench/fastify-floor-server.ts', url, String(port), publicUrl],
    },
    { name: 'registry', args: ['packages/server/dist/main.js'] },
  ].filter((server) => only === undefined || only.has(server.name.split(' ')[0] as string));
  const env = {
    DATABASE_URL: url,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: publicUrl,
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  };
  const results: Measured[] = [];
  for (const server of servers) {
    // Pass 1, no profiler: requests per second and CPU per request, whole process and main thread.
    const plain = spawnServer(server.args, env);
    const pid = plain.pid as number;
    await waitFor(`${base}${paths[0]}`);
    await runLoad({ url: base, connections: 10, amount: warmup, requests: load });
    const cpuBefore = cpuMs(pid);
    const mainBefore = threadCpuMs(pid, pid);
    const run = await runLoad({ url: base, connections: 10, amount: requests, requests: load });
    if (run.ok !== requests) throw new Error(`${server.name}: ${run.ok} of ${requests} answered 2xx`);
    const cpuUs = ((cpuMs(pid) - cpuBefore) * 1000) / requests;
    const mainUs = ((threadCpuMs(pid, pid) - mainBefore) * 1000) / requests;
    await stopAndWait(plain);
    // Pass 2, profiled: the shares of the main thread's time by layer.
    const layers = new Map<string, number>();
    if (profiling) {
      const profileDir = path.join(dir, `profile-${results.length}`);
      const profiled = spawnServer(server.args, env, profileDir);
      await waitFor(`${base}${paths[0]}`);
      await runLoad({ url: base, connections: 10, amount: warmup, requests: load });
      await runLoad({ url: base, connections: 10, amount: requests, requests: load });
      await stopAndWait(profiled);
      const profileFile = fs.readdirSync(profileDir).sort()[0] as string;
      const sampled = accountProfile(path.join(profileDir, profileFile), warmup + requests + 1);
      const total = [...sampled.values()].reduce((sum, us) => sum + us, 0);
      for (const [layer, us] of sampled) layers.set(layer, (us / total) * mainUs);
    }
    results.push({ name: server.name, rps: run.rps, cpuUs, mainUs, layers });
    console.log(
      `${server.name}: ${Math.round(run.rps)} req/s, CPU per request ${cpuUs.toFixed(1)} µs (main thread ${mainUs.toFixed(1)} µs)`,
    );
  }
  const last = results[results.length - 1] as Measured;
  const floor = results.find((result) => result.name === 'Fastify floor');
  const diff = floor !== undefined && floor !== last;
  const names = results.map((result) => result.name);
  console.log(
    `\n| Where the CPU goes (µs per request) | ${names.join(' | ')} |${diff ? ` ${last.name} - floor |` : ''}`,
  );
  console.log(`| --- |${' ---: |'.repeat(results.length + (diff ? 1 : 0))}`);
  const row = (label: string, get: (result: Measured) => number) =>
    console.log(
      `| ${label} | ${results.map((result) => get(result).toFixed(1)).join(' | ')} |${diff && floor !== undefined ? ` ${(get(last) - get(floor)).toFixed(1)} |` : ''}`,
    );
  if (profiling) {
    const layerNames = [...new Set(results.flatMap((result) => [...result.layers.keys()]))];
    const value = (result: Measured, layer: string) => result.layers.get(layer) ?? 0;
    const spread = (layer: string) =>
      Math.max(...results.map((result) => value(result, layer))) -
      (floor === undefined ? 0 : value(floor, layer));
    layerNames.sort((a, b) => spread(b) - spread(a));
    for (const layer of layerNames) {
      if (results.every((result) => value(result, layer) < 0.05)) continue;
      row(layer, (result) => value(result, layer));
    }
  }
  row('main thread (/proc)', (result) => result.mainUs);
  row('other threads (GC helpers, WAL checkpointer, libuv pool)', (result) => result.cpuUs - result.mainUs);
  row('**whole process (/proc)**', (result) => result.cpuUs);
  if (args.has('--keep')) console.log(`profiles kept in ${dir}`);
  else fs.rmSync(dir, { recursive: true, force: true });
}

await main();
