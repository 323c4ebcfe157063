/**
 * Where an Ed25519 registration's CPU goes: the registry (packages/server/dist) on a seeded SQLite
 * database, driven with pre-signed registrations at 10 connections, twice. Without a profiler: CPU per
 * registration from /proc (whole process, main thread, other threads) over a fixed number of
 * registrations, in `--rounds` rounds (the machine is shared: look at the spread). With `--cpu-prof`
 * (200 µs sampling): the main thread's samples while serving, grouped into parts (HTTP and Fastify, body
 * parse and validation, canonical JSON, signature check, token, database statements, commit...), each
 * part's share times the measured main-thread CPU, so the parts add up to the /proc figure.
 *
 *   node --import tsx bench/probes/register-accounting.ts [--agents 20000] [--registrations 6000]
 *        [--rounds 2] [--no-prof] [--keep] [--detail]
 *
 * `--detail` also prints the profile's heaviest (part, function, file) lines. BENCH_PORT sets the port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type autocannon from 'autocannon';
import { pregenerate } from '../client.js';
import { runLoad } from '../load.js';
import { cpuMs, ticksPerSecond } from '../proc.js';
import { ROOT, buildIfNeeded } from '../processes.js';
import { seedRegistry } from '../seed.js';
import { scriptArgs } from './script-args.js';

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
const registrations = option('--registrations', 6_000);
const rounds = option('--rounds', 2);
const warmup = Math.max(500, Math.round(registrations / 4));
const profiling = !args.has('--no-prof');
const CONNECTIONS = 10;

/** Registry code by file (dist path without .js), for the parts below. */
const REGISTRY_PARTS: [RegExp, string][] = [
  [/^auth\/tokens/, 'token (JWS, node:crypto Ed25519 sign)'],
  [/^(identity\/signatures|services\/signature-proof)/, 'signature check (node:crypto Ed25519 verify)'],
  [/^services\/registration/, 'registration service (checks, DID, row)'],
  [/^identity\/ed25519-key/, 'key check'],
  [/^db\/group-commit/, 'group commit (queue, savepoints)'],
  [/^db\/(connect|unavailability|direct|compiled)/, 'registry db layer (driver wrapper, statement cache)'],
  [/^db\//, 'registry db stores (building statements)'],
  [/^services\/(text-rules|profile-rules|schema-limits)/, 'text and profile rules'],
  [/^http\/json-depth/, 'body parse (JSON depth check)'],
  [/^app$/, 'body parse and preValidation hook (app.ts)'],
  [/^(http\/observe|telemetry)/, 'request observer, metrics, log'],
  [/^search\//, 'search index (catch-up)'],
];

/**
 * The part a stack's time belongs to: the innermost frame that names one. Native frames (no URL) are
 * charged to their JavaScript caller, so better-sqlite3's statement calls land on Kysely's driver or the
 * registry's db layer, and OpenSSL on the registry function that asked for it.
 */
function partOf(stack: ProfileNode[]): string {
  const leaf = stack[0] as ProfileNode;
  const name = leaf.callFrame.functionName;
  if (name === '(garbage collector)') return 'GC';
  if (name === '(program)') return 'V8 (program)';
  if (name === '(idle)') return '(idle)';
  if (['writev', 'writeUtf8String', 'writeLatin1String', 'writeBuffer'].includes(name))
    return 'socket write (libuv, kernel)';
  let crypto: string | undefined;
  for (const node of stack) {
    const { url, functionName } = node.callFrame;
    // Ajv's and fast-json-stringify's generated functions have no URL.
    if (url === '' && /^validate\d*$/.test(functionName)) return 'body schema validation (Ajv)';
    if (url === '') continue;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
    if (pkg === 'kysely') {
      return functionName === 'executeQuery' && url.includes('sqlite-driver')
        ? 'SQLite statements (better-sqlite3, via Kysely driver)'
        : 'Kysely (builder, compiler, executor, driver)';
    }
    if (pkg === 'better-sqlite3') return 'SQLite (better-sqlite3 JS wrapper)';
    if (pkg === 'canonicalize') return 'canonical JSON';
    if (pkg === 'ajv' || (pkg === 'fastify' && url.endsWith('/validation.js')))
      return 'body schema validation (Ajv)';
    if (pkg === 'secure-json-parse') return 'body parse (JSON)';
    if (pkg === 'fast-json-stringify') return 'response serialisation';
    if (pkg === 'uuid') return 'token (JWS, node:crypto Ed25519 sign)';
    if (crypto !== undefined && pkg !== undefined) return crypto;
    if (pkg === 'pino' || pkg === 'prom-client') return 'request observer, metrics, log';
    if (
      pkg === 'fastify' ||
      pkg === 'find-my-way' ||
      pkg === 'avvio' ||
      pkg === 'light-my-request' ||
      pkg === '@fastify/cors' ||
      pkg === 'toad-cache'
    )
      return 'Fastify (routing, hooks, reply)';
    if (pkg !== undefined) return `package ${pkg}`;
    if (url.includes('/packages/protocol/')) return 'protocol package (messages, canonical form)';
    if (url.includes('/packages/search-index/')) return 'search index (catch-up)';
    if (url.includes('/packages/server/')) {
      const file = (url.split('/packages/server/dist/')[1] ?? url).replace(/\.js$/, '');
      for (const [pattern, part] of REGISTRY_PARTS) if (pattern.test(file)) return part;
      return `registry ${file}`;
    }
    if (url.startsWith('node:')) {
      const module = url.slice(5).replace(/^internal\//, '');
      // OpenSSL and key objects: charged to the registry code that asked (signature, token, DID).
      if (module.startsWith('crypto/')) {
        crypto ??= 'node:crypto (other)';
        continue;
      }
      if (/^(_http|http)/.test(module)) return 'node:http (parser, response)';
      if (/^(net|stream|streams|stream_base)/.test(module)) return 'node:net and streams';
      if (/^(process\/task_queues|timers|async_hooks)/.test(module)) return 'node: microtasks, timers';
      return `node:${module.split('/')[0]}`;
    }
  }
  return crypto ?? `other native (${name})`;
}

interface Accounted {
  parts: Map<string, number>;
  /** (part, function, file) lines, for --detail. */
  lines: Map<string, number>;
}

function accountProfile(file: string): Accounted {
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
  const parts = new Map<string, number>();
  const lines = new Map<string, number>();
  let serving = false;
  profile.samples.forEach((id, index) => {
    const stack = stackOf(id);
    // Start-up (migrations, index load) is not per registration: count from the first request on.
    if (!serving) {
      serving = stack.some((node) => node.callFrame.functionName === 'parserOnIncoming');
      if (!serving) return;
    }
    const part = partOf(stack);
    if (part === '(idle)') return;
    const us = profile.timeDeltas[index] ?? 0;
    parts.set(part, (parts.get(part) ?? 0) + us);
    const leaf = stack.find((node) => node.callFrame.url !== '') ?? (stack[0] as ProfileNode);
    const where = `${part} | ${(stack[0] as ProfileNode).callFrame.functionName || '(anonymous)'} | ${leaf.callFrame.functionName} ${leaf.callFrame.url.replace(/^.*\/(node_modules|packages)\//, '')}`;
    lines.set(where, (lines.get(where) ?? 0) + us);
  });
  return { parts, lines };
}

function threadCpuMs(pid: number, tid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond();
}

function spawnRegistry(env: Record<string, string>, profileDir?: string): ChildProcess {
  const flags =
    profileDir === undefined
      ? []
      : ['--cpu-prof', '--cpu-prof-interval', '200', `--cpu-prof-dir=${profileDir}`];
  return spawn(process.execPath, [...flags, 'packages/server/dist/main.js'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
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

/** Registers `count` agents from `bodies` (taken from the front) and checks every one got 201. */
async function register(base: string, bodies: string[], count: number) {
  const batch = bodies.splice(0, count);
  let next = 0;
  const requests: autocannon.Request[] = [
    {
      method: 'POST',
      path: '/api/agents/register',
      headers: { 'content-type': 'application/json' },
      setupRequest: (request) => ({ ...request, body: batch[next++] as string }),
    },
  ];
  const run = await runLoad({ url: base, connections: CONNECTIONS, amount: count, requests });
  if (run.ok !== count) throw new Error(`${run.ok} of ${count} registrations answered 2xx`);
  return run;
}

async function main(): Promise<void> {
  buildIfNeeded();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-register-accounting-'));
  const file = path.join(dir, 'registry.db');
  const port = Number(process.env.BENCH_PORT ?? 18280);
  const publicUrl = `http://localhost:${port}`;
  const base = `http://127.0.0.1:${port}`;
  await seedRegistry({
    database: { kind: 'sqlite', path: file },
    agents,
    didWebDomain: `localhost%3A${port}`,
  });
  const needed = warmup + registrations * rounds + (profiling ? warmup + registrations : 0);
  const bodies = await pregenerate('ed25519', needed, 17, path.join(dir, 'keygen.log'));
  const env = {
    DATABASE_URL: `sqlite:${file}`,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: publicUrl,
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  };

  // Pass 1, no profiler: CPU per registration, whole process and main thread.
  const plain = spawnRegistry(env);
  const pid = plain.pid as number;
  await waitFor(`${base}/healthz`);
  await register(base, bodies, warmup);
  // A failed run (say, signed timestamps gone stale on a slow machine) must not leave it on the port.
  process.once('exit', () => plain.kill('SIGKILL'));
  const measured: { rps: number; cpuUs: number; mainUs: number }[] = [];
  for (let round = 0; round < rounds; round++) {
    const cpuBefore = cpuMs(pid);
    const mainBefore = threadCpuMs(pid, pid);
    const run = await register(base, bodies, registrations);
    const cpuUs = ((cpuMs(pid) - cpuBefore) * 1000) / registrations;
    const mainUs = ((threadCpuMs(pid, pid) - mainBefore) * 1000) / registrations;
    measured.push({ rps: run.rps, cpuUs, mainUs });
    console.log(
      `round ${round + 1}: ${Math.round(run.rps)} registrations/s, CPU per registration ${cpuUs.toFixed(1)} µs (main thread ${mainUs.toFixed(1)} µs), p50 ${run.p50.toFixed(2)} ms`,
    );
  }
  await stopAndWait(plain);
  const mainUs = measured.reduce((sum, round) => sum + round.mainUs, 0) / measured.length;
  const cpuUs = measured.reduce((sum, round) => sum + round.cpuUs, 0) / measured.length;

  if (profiling) {
    // Pass 2, profiled: the main thread's time by part, scaled to pass 1's main-thread CPU.
    const profileDir = path.join(dir, 'profile');
    const profiled = spawnRegistry(env, profileDir);
    process.once('exit', () => profiled.kill('SIGKILL'));
    await waitFor(`${base}/healthz`);
    await register(base, bodies, warmup);
    await register(base, bodies, registrations);
    await stopAndWait(profiled);
    const profileFile = fs.readdirSync(profileDir).sort()[0] as string;
    const { parts, lines } = accountProfile(path.join(profileDir, profileFile));
    const total = [...parts.values()].reduce((sum, us) => sum + us, 0);
    const scaled = (us: number) => (us / total) * mainUs;
    console.log('\n| Where the CPU goes (µs per registration) | registry |');
    console.log('| --- | ---: |');
    for (const [part, us] of [...parts].sort((a, b) => b[1] - a[1])) {
      if (scaled(us) >= 0.5) console.log(`| ${part} | ${scaled(us).toFixed(1)} |`);
    }
    if (args.has('--detail')) {
      console.log('\nHeaviest lines (part | leaf | first frame with a file), µs per registration:');
      for (const [line, us] of [...lines].sort((a, b) => b[1] - a[1]).slice(0, 60))
        console.log(`${scaled(us).toFixed(1).padStart(7)}  ${line}`);
    }
  }
  console.log(`| main thread (/proc) | ${mainUs.toFixed(1)} |`);
  console.log(
    `| other threads (WAL checkpointer, GC helpers, libuv pool) | ${(cpuUs - mainUs).toFixed(1)} |`,
  );
  console.log(`| **whole process (/proc)** | ${cpuUs.toFixed(1)} |`);
  if (args.has('--keep')) console.log(`database and profile kept in ${dir}`);
  else fs.rmSync(dir, { recursive: true, force: true });
}

await main();
