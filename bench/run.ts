/**
 * npm run bench [-- --db postgres] [--agents 100000] [--duration 10] [--connections 10] [--cpu-prof]
 *                [--only get,search,...]
 *
 * `--only sybil` runs only the Sybil simulation of reputation v1 against v2 (bench/sybil.ts), in
 * process on SQLite; `--agents` then sets its honest agents (default 100).
 *
 * Builds the server if its build is stale, seeds a fresh database with `--agents` agents and their
 * reviews through the server's own store functions, measures a bare node:http baseline answering the
 * same GET-by-DID, then starts the registry as its own process (node packages/server/dist/main.js) and
 * drives every scenario with autocannon from this process. Prints a table, one BUDGET line per budget,
 * and writes the raw figures to bench/out/. See bench/RESULTS.md for what the figures mean.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type autocannon from 'autocannon';
import pg from 'pg';
import { CAPABILITY_TYPES, SEARCH_QUERIES } from './corpus.js';
import { ed25519Identity, ed25519RegistrationBody, registrationBodies } from './keys.js';
import { mergeLoads, percentile, runLoad, type LoadResult } from './load.js';
import { cpuMs, machine, postgresCpuByPid, postgresCpuSince, statusKb } from './proc.js';
import { seedRegistry } from './seed.js';
import { summariseProfile } from './profile-summary.js';
import { runSybilBench } from './sybil.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'bench', 'out');

// ---------------------------------------------------------------------------------------------- options

interface Options {
  db: 'sqlite' | 'postgres';
  agents: number;
  duration: number;
  connections: number;
  cpuProf: boolean;
  only: Set<string> | undefined;
  warmup: number;
}

function parseOptions(argv: string[]): Options {
  const options: Options = {
    db: 'sqlite',
    agents: 100_000,
    duration: 10,
    connections: 10,
    cpuProf: false,
    only: undefined,
    warmup: 2,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--db') {
      const db = value();
      if (db !== 'sqlite' && db !== 'postgres') throw new Error('--db is sqlite or postgres');
      options.db = db;
    } else if (arg === '--agents') options.agents = Number(value());
    else if (arg === '--duration') options.duration = Number(value());
    else if (arg === '--connections') options.connections = Number(value());
    else if (arg === '--warmup') options.warmup = Number(value());
    else if (arg === '--cpu-prof') options.cpuProf = true;
    else if (arg === '--only') options.only = new Set(value().split(','));
    else throw new Error(`unknown option ${arg}`);
  }
  return options;
}

// -------------------------------------------------------------------------------------------- processes

const log = (line: string): void => console.log(`[bench] ${line}`);

function spawnNode(args: string[], env: Record<string, string>, logFile: string, ipc = false): ChildProcess {
  const out = fs.openSync(logFile, 'a');
  return spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ipc ? ['ignore', out, out, 'ipc'] : ['ignore', out, out],
  });
}

const tsx = (file: string): string[] => ['--import', 'tsx', path.join(ROOT, 'bench', file)];

async function waitForHttp(url: string, child: ChildProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited with ${child.exitCode}`);
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status < 500) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

function waitForMessage<T>(child: ChildProcess, type: string, timeoutMs = 120_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(new Error(`no ${type} message from child ${child.pid} within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (message: { type?: string }) => {
      if (message.type !== type) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(message as T);
    };
    child.on('message', onMessage);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited (${code}) before sending ${type}`));
    });
  });
}

async function stop(child: ChildProcess, timeoutMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(timer);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------- build

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

function buildIfNeeded(): void {
  const main = path.join(ROOT, 'packages/server/dist/main.js');
  const source = path.join(ROOT, 'packages/server/src');
  if (fs.existsSync(main) && fs.statSync(main).mtimeMs >= newestMtime(source)) {
    log('server build is up to date');
    return;
  }
  log('building the server (npm run build)');
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
}

// ---------------------------------------------------------------------------------------------- database

interface BenchDatabase {
  url: string;
  config:
    | { kind: 'sqlite'; path: string }
    | {
        kind: 'postgres';
        url: string;
        poolSize: number;
        statementTimeoutMs: number;
        connectTimeoutMs: number;
      };
  drop(): Promise<void>;
}

const POSTGRES_ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function createDatabase(kind: 'sqlite' | 'postgres'): Promise<BenchDatabase> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-bench-'));
    const file = path.join(dir, 'registry.db');
    return {
      url: `sqlite:${file}`,
      config: { kind: 'sqlite', path: file },
      drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `registry_bench_${crypto.randomBytes(5).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    config: {
      kind: 'postgres',
      url: url.toString(),
      poolSize: 10,
      statementTimeoutMs: 60_000,
      connectTimeoutMs: 10_000,
    },
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

// ---------------------------------------------------------------------------------------------- client

interface Json {
  [key: string]: unknown;
}

async function call(
  base: string,
  method: string,
  url: string,
  body?: unknown,
  token?: string,
): Promise<{ status: number; json: Json }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${base}${url}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, json: text === '' ? {} : (JSON.parse(text) as Json) };
}

async function expectStatus(
  label: string,
  promise: Promise<{ status: number; json: Json }>,
  status: number,
): Promise<Json> {
  const reply = await promise;
  if (reply.status !== status) throw new Error(`${label}: ${reply.status} ${JSON.stringify(reply.json)}`);
  return reply.json;
}

interface Actor {
  did: string;
  token: string;
}

async function registerActor(base: string, name: string, capabilities: Json[]): Promise<Actor> {
  const body = ed25519RegistrationBody(
    ed25519Identity(),
    { name, description: `${name} (benchmark actor)`, capabilities: capabilities as never, tags: ['bench'] },
    Date.now(),
  );
  const json = await expectStatus(`register ${name}`, call(base, 'POST', '/api/agents/register', body), 201);
  return { did: json.did as string, token: json.token as string };
}

/** Signed registration bodies for a run, made by one child process per core before it starts. */
/** The child's exit code, or 'timeout' if it has not exited within `timeoutMs`. */
function exitWithin(child: ChildProcess, timeoutMs: number): Promise<number | 'timeout'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code ?? -1);
    });
  });
}

async function pregenerate(
  keyType: 'ed25519' | 'secp256k1',
  count: number,
  seed: number,
  logFile: string,
): Promise<string[]> {
  const timestamp = Date.now();
  const processes = Math.max(1, Math.min(os.availableParallelism(), 4));
  const share = Math.ceil(count / processes);
  const parts = await Promise.all(
    Array.from({ length: processes }, async (_, index) => {
      const partSeed = seed + index * 1_000_003;
      const file = path.join(os.tmpdir(), `registry-bench-bodies-${process.pid}-${index}.json`);
      const child = spawnNode(
        tsx('keygen-worker.ts').concat([keyType, String(share), String(timestamp), String(partSeed), file]),
        {},
        logFile,
      );
      const exited = await exitWithin(child, 60_000);
      if (exited !== 0) {
        // A child once stalled at start-up (never reproduced alone); the run goes on without it.
        child.kill('SIGKILL');
        log(`key generator ${child.pid} did not finish (${exited}); generating its share here`);
        return registrationBodies(keyType, share, timestamp, partSeed);
      }
      const bodies = JSON.parse(fs.readFileSync(file, 'utf8')) as string[];
      fs.rmSync(file, { force: true });
      return bodies;
    }),
  );
  return parts.flat().slice(0, count);
}

// ---------------------------------------------------------------------------------------------- scenarios

interface Row {
  name: string;
  label: string;
  target: 'baseline' | 'floor' | 'registry';
  connections: number;
  load: LoadResult;
  /** Server CPU over the measured run(s), ms. */
  cpuTotal: number;
  /** Server CPU (utime + stime) per completed request, ms. */
  cpuPerRequest: number;
  /** Server CPU time over wall time: 100% is one core busy. */
  cpuPercent: number;
  /** PostgreSQL processes' CPU per completed request, ms (PostgreSQL runs only). */
  dbCpuPerRequest?: number;
  note?: string;
  extra?: Record<string, number>;
}

interface ScenarioSpec {
  name: string;
  label: string;
  connections: number;
  load: Omit<Parameters<typeof runLoad>[0], 'connections' | 'url'>;
  warmup?: Omit<Parameters<typeof runLoad>[0], 'connections' | 'url'> | false;
  note?: string;
  /** Called between the warm-up and the measured run (e.g. to forget warm-up samples). */
  beforeMeasure?: () => void;
}

async function measure(
  base: string,
  pid: number,
  target: Row['target'],
  spec: ScenarioSpec,
  options: Options,
): Promise<Row> {
  if (spec.warmup !== false) {
    await runLoad({
      url: base,
      connections: spec.connections,
      ...(spec.warmup ?? spec.load),
      duration: options.warmup,
    });
  }
  spec.beforeMeasure?.();
  const cpuBefore = cpuMs(pid);
  const dbBefore = options.db === 'postgres' ? postgresCpuByPid() : new Map<number, number>();
  const load = await runLoad({
    url: base,
    connections: spec.connections,
    duration: options.duration,
    ...spec.load,
  });
  const cpu = cpuMs(pid) - cpuBefore;
  const row: Row = {
    name: spec.name,
    label: spec.label,
    target,
    connections: spec.connections,
    load,
    cpuTotal: cpu,
    cpuPerRequest: cpu / Math.max(1, load.ok),
    cpuPercent: (cpu / (load.seconds * 1000)) * 100,
  };
  if (options.db === 'postgres') row.dbCpuPerRequest = postgresCpuSince(dbBefore) / Math.max(1, load.ok);
  if (spec.note !== undefined) row.note = spec.note;
  const bad = load.non2xx + load.errors;
  log(
    `${spec.label}: ${load.rps.toFixed(0)} req/s, p50 ${load.p50.toFixed(2)} ms, p99 ${load.p99.toFixed(2)} ms, ` +
      `server CPU ${row.cpuPerRequest.toFixed(3)} ms/req (${row.cpuPercent.toFixed(0)}%), ` +
      `RSS ${(statusKb(pid, 'VmRSS') / 1024).toFixed(0)} MB (peak so far ${(statusKb(pid, 'VmHWM') / 1024).toFixed(0)} MB)` +
      (bad > 0 ? `, ${bad} non-2xx/errors ${JSON.stringify(load.statuses)}` : ''),
  );
  return row;
}

/** The rounds of one scenario as one row: requests, seconds and CPU add up. */
function mergeRows(name: string, label: string, rounds: readonly Row[]): Row {
  const first = rounds[0];
  if (first === undefined) throw new Error(`no rounds of ${name}`);
  const load = mergeLoads(rounds.map((row) => row.load));
  const cpuTotal = rounds.reduce((sum, row) => sum + row.cpuTotal, 0);
  const row: Row = {
    ...first,
    name,
    label: `${label} (${rounds.length} rounds)`,
    load,
    cpuTotal,
    cpuPerRequest: cpuTotal / Math.max(1, load.ok),
    cpuPercent: (cpuTotal / (load.seconds * 1000)) * 100,
  };
  const dbCpu = rounds
    .map((round) => (round.dbCpuPerRequest ?? 0) * round.load.ok)
    .reduce((a, b) => a + b, 0);
  if (first.dbCpuPerRequest !== undefined) row.dbCpuPerRequest = dbCpu / Math.max(1, load.ok);
  return row;
}

/** A GET of each path in turn, shared by all connections so they do not read the same rows in step. */
function cycling(paths: readonly string[], headers?: Record<string, string>): autocannon.Request[] {
  let next = 0;
  return [
    {
      method: 'GET',
      ...(headers === undefined ? {} : { headers }),
      setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] as string }),
    },
  ];
}

// ---------------------------------------------------------------------------------------------- main

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
  const serverLog = path.join(OUT, `${options.db}-${stamp}-processes.log`);
  const box = machine();
  log(
    `machine: ${box.cpu}, ${box.cores} cores, ${box.memoryGiB} GiB, node ${box.node}, kernel ${box.kernel}`,
  );
  log(
    `database: ${options.db}, ${options.agents} agents, ${options.duration} s per run, ${options.connections} connections`,
  );
  const started = Date.now();

  buildIfNeeded();

  const port = Number(process.env.BENCH_PORT ?? 18080);
  const baselinePort = port + 1;
  const hookPort = port + 2;
  const publicUrl = `http://localhost:${port}`;
  const base = `http://127.0.0.1:${port}`;
  const baselineBase = `http://127.0.0.1:${baselinePort}`;
  const database = await createDatabase(options.db);
  const children: ChildProcess[] = [];
  const cleanup = async () => {
    for (const child of children) await stop(child).catch(() => undefined);
    await database.drop().catch((error: unknown) => log(`could not drop the database: ${String(error)}`));
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));

  try {
    const seedStart = Date.now();
    const seeded = await seedRegistry({
      database: database.config,
      agents: options.agents,
      didWebDomain: `localhost%3A${port}`,
      batch: 500,
      log,
    });
    const seedSeconds = (Date.now() - seedStart) / 1000;
    const rows: Row[] = [];
    const random = (n: number) => crypto.randomInt(n);
    const sampleDids = Array.from(
      { length: 20_000 },
      () => seeded.dids[random(seeded.dids.length)] as string,
    );
    const profilePaths = sampleDids.map((did) => `/api/agents/${encodeURIComponent(did)}`);

    // ------------------------------------------------------------------ servers
    const floorPort = port + 3;
    const floorBase = `http://127.0.0.1:${floorPort}`;
    const reference = (file: string, referencePort: number): ChildProcess => {
      const child = spawnNode(
        tsx(file).concat([database.url, String(referencePort), publicUrl]),
        {},
        serverLog,
      );
      children.push(child);
      return child;
    };
    const baseline = wanted('get') ? reference('baseline-server.ts', baselinePort) : undefined;
    const floor = wanted('get') ? reference('fastify-floor-server.ts', floorPort) : undefined;
    const serverArgs = [path.join(ROOT, 'packages/server/dist/main.js')];
    const profileDir = path.join(OUT, `profile-${options.db}-${stamp}`);
    if (options.cpuProf) serverArgs.unshift('--cpu-prof', `--cpu-prof-dir=${profileDir}`);
    const server = spawnNode(
      serverArgs,
      {
        DATABASE_URL: database.url,
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_URL: publicUrl,
        LOG_LEVEL: 'warn',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        REVIEW_RATE_LIMIT: '100000',
        NODE_ENV: 'production',
      },
      serverLog,
    );
    children.push(server);
    const pid = server.pid as number;
    await waitForHttp(`${base}/readyz`, server);
    const rssAtStart = statusKb(pid, 'VmRSS');

    // ------------------------------------------------------------------ GET profile, side by side
    if (baseline !== undefined && floor !== undefined) {
      await waitForHttp(`${baselineBase}/api/agents/none`, baseline);
      await waitForHttp(`${floorBase}/api/agents/none`, floor);
      const answers = await Promise.all(
        [base, baselineBase, floorBase].map(async (origin) =>
          JSON.stringify((await call(origin, 'GET', profilePaths[0] as string)).json),
        ),
      );
      if (answers[1] !== answers[0] || answers[2] !== answers[0]) {
        throw new Error(`the reference servers' JSON differs from the registry's:\n${answers.join('\n')}`);
      }
      log('baseline, Fastify floor and registry answer the same JSON for the same DID');
      // Two rounds, interleaved, so a slow patch of the machine does not land on one server only.
      const targets: { target: Row['target']; origin: string; pid: number; name: string; label: string }[] = [
        {
          target: 'baseline',
          origin: baselineBase,
          pid: baseline.pid as number,
          name: 'baseline-get',
          label: 'baseline GET profile (node:http)',
        },
        {
          target: 'floor',
          origin: floorBase,
          pid: floor.pid as number,
          name: 'floor-get',
          label: 'Fastify floor GET profile (bare Fastify)',
        },
        { target: 'registry', origin: base, pid, name: 'get', label: 'GET profile' },
      ];
      const rounds = new Map<string, Row[]>();
      for (let round = 0; round < 2; round++) {
        for (const item of targets) {
          const row = await measure(
            item.origin,
            item.pid,
            item.target,
            {
              name: item.name,
              label: `${item.label}, round ${round + 1}`,
              connections: options.connections,
              load: { requests: cycling(profilePaths) },
              ...(round === 0 ? {} : { warmup: false as const }),
            },
            options,
          );
          rounds.set(item.name, [...(rounds.get(item.name) ?? []), row]);
        }
      }
      for (const item of targets) rows.push(mergeRows(item.name, item.label, rounds.get(item.name) ?? []));
      await stop(baseline);
      await stop(floor);
    }

    // Actors, registered over HTTP like any client: an invoker, a queue agent, a webhook agent, reviewers.
    const echo = {
      type: 'echo',
      description: 'Answers with its input',
      input_schema: { type: 'object', properties: { n: { type: 'number' } } },
    };
    const invoker = await registerActor(base, 'Bench invoker', [{ type: 'general' }]);
    const queueAgent = await registerActor(base, 'Bench queue agent', [echo]);
    const hookAgent = await registerActor(base, 'Bench webhook agent', [echo]);
    await expectStatus(
      'queue mode',
      call(
        base,
        'PUT',
        `/api/agents/${encodeURIComponent(queueAgent.did)}/invocation`,
        { enabled: true, delivery_mode: 'queue' },
        queueAgent.token,
      ),
      200,
    );
    const hook = spawnNode(tsx('webhook-server.ts').concat([String(hookPort)]), {}, serverLog, true);
    children.push(hook);
    await waitForMessage(hook, 'ready');
    await expectStatus(
      'webhook mode',
      call(
        base,
        'PUT',
        `/api/agents/${encodeURIComponent(hookAgent.did)}/invocation`,
        { enabled: true, delivery_mode: 'webhook', webhook_url: `http://127.0.0.1:${hookPort}/hook` },
        hookAgent.token,
      ),
      200,
    );
    const firstTask = await expectStatus(
      'first invocation',
      call(
        base,
        'POST',
        '/api/invoke',
        { target_did: hookAgent.did, capability: 'echo', input: { n: 1 } },
        invoker.token,
      ),
      200,
    );
    const taskId = firstTask.task_id as string;

    if (wanted('auth-get')) {
      rows.push(
        await measure(
          base,
          pid,
          'registry',
          {
            name: 'auth-get',
            label: 'authenticated GET /api/tasks/{id}',
            connections: options.connections,
            load: {
              requests: cycling([`/api/tasks/${taskId}`], { authorization: `Bearer ${invoker.token}` }),
            },
          },
          options,
        ),
      );
    }

    // Search: popular capabilities (each matches 2-10% of agents), sorted by reputation, 20 a page;
    // full-text queries alone; and full text combined with a capability filter (relevance order).
    const topCapabilities = CAPABILITY_TYPES.slice(0, 12);
    const capabilityPaths = topCapabilities.flatMap((capability) =>
      ['reputation', 'created_at'].map(
        (sort) => `/api/agents/search?capability=${encodeURIComponent(capability)}&sort=${sort}&limit=20`,
      ),
    );
    const queryPaths = SEARCH_QUERIES.map((q) => `/api/agents/search?q=${encodeURIComponent(q)}&limit=20`);
    const queryCapabilityPaths = SEARCH_QUERIES.map(
      (q, index) =>
        `/api/agents/search?q=${encodeURIComponent(q)}&capability=${encodeURIComponent(topCapabilities[index % topCapabilities.length] as string)}&limit=20`,
    );
    const searches: [string, string, string[]][] = [
      ['search-capability', 'search capability + sort, limit 20', capabilityPaths],
      ['search-q', 'search q, limit 20', queryPaths],
      ['search-q-capability', 'search q + capability, limit 20', queryCapabilityPaths],
    ];
    for (const [name, label, paths] of searches) {
      if (!wanted('search') && !wanted(name)) continue;
      rows.push(
        await measure(
          base,
          pid,
          'registry',
          { name, label, connections: options.connections, load: { requests: cycling(paths) } },
          options,
        ),
      );
      rows.push(
        await measure(
          base,
          pid,
          'registry',
          {
            name: `${name}-1`,
            label: `${label} (1 connection)`,
            connections: 1,
            load: { requests: cycling(paths) },
            warmup: false,
          },
          options,
        ),
      );
    }

    // Web pages: the same services as the API plus HTML rendering. Home (totals + top agents), a full-text
    // search page, an agent page (profile, reputation, 10 reviews, DID document), the statistics page.
    const pagePaths: [string, string, string[]][] = [
      ['page-home', 'page / (totals, top 20 agents)', ['/']],
      [
        'page-search',
        'page /?q= (full text, 20 a page)',
        SEARCH_QUERIES.map((q) => `/?q=${encodeURIComponent(q)}`),
      ],
      ['page-agent', 'page /agents/{did}', sampleDids.map((did) => `/agents/${encodeURIComponent(did)}`)],
      ['page-stats', 'page /stats', ['/stats']],
    ];
    // The API calls each page is built on, at 1 connection: the difference is the page's own cost.
    const pageApis: Record<string, string[]> = {
      'page-home': ['/api/agents/search?limit=20'],
      'page-search': SEARCH_QUERIES.map((q) => `/api/agents/search?q=${encodeURIComponent(q)}&limit=20`),
      'page-agent': sampleDids.flatMap((did) => [
        `/api/agents/${encodeURIComponent(did)}`,
        `/api/agents/${encodeURIComponent(did)}/reputation`,
        `/api/agents/${encodeURIComponent(did)}/reviews?limit=10`,
      ]),
    };
    for (const [name, label, paths] of pagePaths) {
      if (!wanted('pages') && !wanted(name)) continue;
      const api = pageApis[name];
      if (api !== undefined) {
        rows.push(
          await measure(
            base,
            pid,
            'registry',
            {
              name: `${name}-api-1`,
              label: `  its API call${name === 'page-agent' ? 's (profile, reputation, reviews: 3 requests)' : ''} (1 connection)`,
              connections: 1,
              load: { requests: cycling(api) },
            },
            options,
          ),
        );
      }
      const requests = cycling(paths, { accept: 'text/html' });
      rows.push(
        await measure(
          base,
          pid,
          'registry',
          { name, label, connections: options.connections, load: { requests } },
          options,
        ),
      );
      rows.push(
        await measure(
          base,
          pid,
          'registry',
          {
            name: `${name}-1`,
            label: `${label} (1 connection)`,
            connections: 1,
            load: { requests },
            warmup: false,
          },
          options,
        ),
      );
    }

    // Queue invocation: autocannon invokes, a worker process long-polls, accepts and reports.
    if (wanted('queue')) {
      const worker = spawnNode(tsx('queue-worker.ts').concat([base, queueAgent.token]), {}, serverLog, true);
      children.push(worker);
      await waitForMessage(worker, 'ready');
      for (const connections of [1, options.connections]) {
        const added: number[] = [];
        let workerMs: number | undefined;
        const invokeRequests: autocannon.Request[] = [
          {
            method: 'POST',
            path: '/api/invoke',
            headers: { authorization: `Bearer ${invoker.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              target_did: queueAgent.did,
              capability: 'echo',
              input: { n: 1 },
              timeout_ms: 10_000,
            }),
            onResponse: (status, body) => {
              workerMs =
                status === 200
                  ? (JSON.parse(body) as { output: { worker_ms: number } }).output.worker_ms
                  : undefined;
            },
          },
        ];
        const row = await measure(
          base,
          pid,
          'registry',
          {
            name: connections === 1 ? 'queue-1' : 'queue',
            label: `queue invocation round trip (${connections} invoker connection${connections === 1 ? '' : 's'})`,
            connections,
            load: {
              requests: invokeRequests,
              onLatency: (ms, status) => {
                if (status === 200 && workerMs !== undefined) added.push(ms - workerMs);
                workerMs = undefined;
              },
            },
            note: 'CPU per invocation covers its 4 requests (invoke, poll, accept, result)',
            beforeMeasure: () => {
              added.length = 0;
            },
          },
          options,
        );
        added.sort((a, b) => a - b);
        row.extra = { addedP50: percentile(added, 50), addedP99: percentile(added, 99) };
        log(
          `  added latency: p50 ${row.extra.addedP50?.toFixed(2)} ms, p99 ${row.extra.addedP99?.toFixed(2)} ms`,
        );
        rows.push(row);
      }
      worker.send({ type: 'stop' });
      const stats = await waitForMessage<Record<string, number>>(worker, 'stats');
      log(`  worker: ${JSON.stringify(stats)}`);
      const queueRows = rows.filter((row) => row.name.startsWith('queue'));
      for (const row of queueRows) row.extra = { ...row.extra, acceptP50: stats.acceptP50 as number };
    }

    if (wanted('webhook')) {
      rows.push(
        await measure(
          base,
          pid,
          'registry',
          {
            name: 'webhook',
            label: 'webhook invocation round trip',
            connections: options.connections,
            load: {
              method: 'POST',
              headers: { authorization: `Bearer ${invoker.token}`, 'content-type': 'application/json' },
              body: JSON.stringify({
                target_did: hookAgent.did,
                capability: 'echo',
                input: { n: 1 },
                timeout_ms: 10_000,
              }),
              requests: [{ method: 'POST', path: '/api/invoke' }],
            },
          },
          options,
        ),
      );
    }

    // The protocol faces: one invocation of the webhook agent as POST /api/invoke, as the MCP tool
    // invoke_agent (stateless POST /mcp, tools/call) and as A2A SendMessage, taking turns on one
    // connection in one run, so load from elsewhere on the machine hits all three alike. Each sample
    // is filed under the face that answered it; the difference of the p50s is the face's overhead.
    if (wanted('faces')) {
      const input = { target_did: hookAgent.did, capability: 'echo', input: { n: 1 }, timeout_ms: 10_000 };
      const auth = { authorization: `Bearer ${invoker.token}`, 'content-type': 'application/json' };
      const samples: Record<'rest' | 'mcp' | 'a2a', number[]> = { rest: [], mcp: [], a2a: [] };
      let answered: keyof typeof samples | undefined;
      let wrongAnswers = 0;
      const expect = (face: keyof typeof samples, marker: string) => (status: number, body: string) => {
        answered = face;
        if (status !== 200 || !body.includes(marker)) wrongAnswers++;
      };
      const requests: autocannon.Request[] = [
        {
          method: 'POST',
          path: '/api/invoke',
          headers: auth,
          body: JSON.stringify(input),
          onResponse: expect('rest', '"status":"completed"'),
        },
        {
          method: 'POST',
          path: '/mcp',
          headers: {
            ...auth,
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-11-25',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'invoke_agent', arguments: input },
          }),
          onResponse: expect('mcp', '"structuredContent"'),
        },
        {
          method: 'POST',
          path: `/a2a/${encodeURIComponent(hookAgent.did)}/`,
          headers: { ...auth, 'a2a-version': '1.0' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'SendMessage',
            params: {
              message: { messageId: 'bench', role: 'ROLE_USER', parts: [{ data: { n: 1 } }] },
              metadata: { capability: 'echo', timeout_ms: 10_000 },
            },
          }),
          onResponse: expect('a2a', 'TASK_STATE_COMPLETED'),
        },
      ];
      const row = await measure(
        base,
        pid,
        'registry',
        {
          name: 'faces-1',
          label: 'invoke webhook agent: REST, MCP invoke_agent, A2A SendMessage in turn',
          connections: 1,
          load: {
            requests,
            onLatency: (ms) => {
              if (answered !== undefined) samples[answered].push(ms);
              answered = undefined;
            },
          },
          note: 'req/s and CPU are for the three kinds together',
          beforeMeasure: () => {
            for (const list of Object.values(samples)) list.length = 0;
            wrongAnswers = 0;
          },
        },
        options,
      );
      if (wrongAnswers > 0) throw new Error(`${wrongAnswers} face invocations did not complete`);
      const extra: Record<string, number> = {};
      for (const [face, list] of Object.entries(samples)) {
        list.sort((a, b) => a - b);
        extra[`${face}P50`] = percentile(list, 50);
        extra[`${face}P99`] = percentile(list, 99);
        extra[`${face}Count`] = list.length;
      }
      row.extra = extra;
      log(
        `  p50 ms: REST ${extra.restP50?.toFixed(2)}, MCP ${extra.mcpP50?.toFixed(2)}, A2A ${extra.a2aP50?.toFixed(2)}`,
      );
      rows.push(row);
    }

    if (options.db === 'sqlite' && wanted('review')) {
      // Many reviewers, each target reviewed once per reviewer: (n * 7919) mod N is a permutation.
      const reviewers: Actor[] = [];
      for (let i = 0; i < 100; i++)
        reviewers.push(await registerActor(base, `Bench reviewer ${i}`, [{ type: 'general' }]));
      const targets = seeded.dids;
      let n = 0;
      const reviewRequests: autocannon.Request[] = [
        {
          method: 'POST',
          path: '/api/reviews',
          setupRequest: (request) => {
            const reviewer = reviewers[n % reviewers.length] as Actor;
            const target = targets[(n * 7919) % targets.length] as string;
            n++;
            return {
              ...request,
              headers: { authorization: `Bearer ${reviewer.token}`, 'content-type': 'application/json' },
              body: JSON.stringify({
                target_did: target,
                rating: (100 + (n % 901)) / 100,
                comment: `Benchmark review ${n}`,
              }),
            };
          },
        },
      ];
      rows.push(
        await measure(
          base,
          pid,
          'registry',
          {
            name: 'review',
            label: 'review submission',
            connections: options.connections,
            load: { requests: reviewRequests },
            note: '404s are reviews of the 2% deactivated seed agents',
          },
          options,
        ),
      );
    }

    if (options.db === 'sqlite' && wanted('register')) {
      for (const [keyType, count, warm] of [
        ['ed25519', 30_000, 2_000],
        ['secp256k1', 4_000, 300],
      ] as const) {
        const genStart = Date.now();
        const bodies = await pregenerate(keyType, count + warm, keyType === 'ed25519' ? 11 : 13, serverLog);
        log(
          `pre-signed ${bodies.length} ${keyType} registrations in ${((Date.now() - genStart) / 1000).toFixed(1)} s`,
        );
        let next = 0;
        const registerRequests: autocannon.Request[] = [
          {
            method: 'POST',
            path: '/api/agents/register',
            headers: { 'content-type': 'application/json' },
            setupRequest: (request) => ({ ...request, body: bodies[next++] as string }),
          },
        ];
        await runLoad({
          url: base,
          connections: options.connections,
          amount: warm,
          requests: registerRequests,
        });
        rows.push(
          await measure(
            base,
            pid,
            'registry',
            {
              name: `register-${keyType}`,
              label: `registration ${keyType}`,
              connections: options.connections,
              load: { amount: count, requests: registerRequests },
              warmup: false,
              note: `${count} pre-signed bodies`,
            },
            options,
          ),
        );
      }
    }

    const peakRssKb = statusKb(pid, 'VmHWM');
    const rssEndKb = statusKb(pid, 'VmRSS');
    hook.send({ type: 'stop' });
    await stop(server);
    await stop(hook);

    // ------------------------------------------------------------------ report
    const elapsed = (Date.now() - started) / 1000;
    const report = renderReport(rows, {
      options,
      box,
      seeded,
      seedSeconds,
      peakRssKb,
      rssEndKb,
      rssAtStart,
      elapsed,
    });
    console.log(report);
    const jsonFile = path.join(OUT, `${options.db}-${stamp}.json`);
    fs.writeFileSync(
      jsonFile,
      JSON.stringify(
        {
          options: { ...options, only: options.only && [...options.only] },
          box,
          seedSeconds,
          peakRssKb,
          rows: rows.map((row) => ({ ...row, load: { ...row.load, latencies: undefined } })),
        },
        null,
        2,
      ),
    );
    fs.writeFileSync(path.join(OUT, `${options.db}-${stamp}.txt`), report);
    log(`raw figures: ${path.relative(ROOT, jsonFile)}; process logs: ${path.relative(ROOT, serverLog)}`);
    if (options.cpuProf) {
      for (const file of fs.readdirSync(profileDir)) {
        console.log(summariseProfile(path.join(profileDir, file), 30));
      }
    }
  } finally {
    await cleanup();
  }
}

// ---------------------------------------------------------------------------------------------- report

interface ReportContext {
  options: Options;
  box: ReturnType<typeof machine>;
  seeded: Awaited<ReturnType<typeof seedRegistry>>;
  seedSeconds: number;
  peakRssKb: number;
  rssEndKb: number;
  rssAtStart: number;
  elapsed: number;
}

function renderReport(rows: Row[], context: ReportContext): string {
  const { options, box, seeded } = context;
  const find = (name: string) => rows.find((row) => row.name === name);
  const baseline = find('baseline-get');
  const lines: string[] = [];
  lines.push('');
  lines.push(
    `## ${options.db === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, ${options.agents.toLocaleString('en-US')} agents`,
  );
  lines.push('');
  lines.push(
    `Machine: ${box.cpu}, ${box.cores} cores, ${box.memoryGiB} GiB, Node ${box.node}, Linux ${box.kernel}.`,
  );
  lines.push(
    `Seed: ${options.agents.toLocaleString('en-US')} agents in ${seeded.agentsSeconds.toFixed(1)} s, ` +
      `${seeded.reviews.toLocaleString('en-US')} reviews (${seeded.verifiedReviews.toLocaleString('en-US')} verified) of ` +
      `${seeded.reviewedAgents.toLocaleString('en-US')} agents in ${seeded.reviewsSeconds.toFixed(1)} s. ` +
      `Runs: ${options.warmup} s warm-up, then ${options.duration} s (registrations: a fixed number of pre-signed bodies).`,
  );
  lines.push('');
  const dbColumn = options.db === 'postgres';
  lines.push(
    `| Scenario | Conns | req/s | p50 ms | p99 ms | Server CPU ms/req | Server CPU % |${dbColumn ? ' PostgreSQL CPU ms/req |' : ''} Non-2xx | vs baseline |`,
  );
  lines.push(`| --- | --: | --: | --: | --: | --: | --: |${dbColumn ? ' --: |' : ''} --: | --: |`);
  for (const row of rows) {
    const ratio =
      (row.name === 'get' || row.name === 'floor-get') && baseline !== undefined
        ? `${((row.load.rps / baseline.load.rps) * 100).toFixed(0)}% req/s, ${(row.cpuPerRequest / baseline.cpuPerRequest).toFixed(1)}x CPU`
        : '';
    lines.push(
      `| ${row.label} | ${row.connections} | ${row.load.rps.toFixed(0)} | ${row.load.p50.toFixed(2)} | ${row.load.p99.toFixed(2)} | ` +
        `${row.cpuPerRequest.toFixed(3)} | ${row.cpuPercent.toFixed(0)} |${dbColumn ? ` ${row.dbCpuPerRequest?.toFixed(3) ?? ''} |` : ''} ` +
        `${row.load.non2xx + row.load.errors} | ${ratio} |`,
    );
  }
  const queueRows = rows.filter((row) => row.extra?.addedP50 !== undefined);
  if (queueRows.length > 0) {
    lines.push('');
    lines.push(
      "Queue invocation added latency = invoke round trip (autocannon) minus the worker's own time (poll answer in hand -> result sent, less its accept call, which is the registry's time):",
    );
    for (const row of queueRows) {
      lines.push(
        `- ${row.label}: p50 ${row.extra?.addedP50?.toFixed(2)} ms, p99 ${row.extra?.addedP99?.toFixed(2)} ms ` +
          `(round trip p50 ${row.load.p50.toFixed(2)} ms, p99 ${row.load.p99.toFixed(2)} ms; worker's accept call p50 ${row.extra?.acceptP50?.toFixed(2)} ms)`,
      );
    }
  }
  const faceRow = rows.find((row) => row.name === 'faces-1');
  if (faceRow?.extra?.restP50 !== undefined) {
    const e = faceRow.extra;
    lines.push('');
    lines.push(
      'Invocation through each face (the same webhook agent; calls taking turns on one connection):',
    );
    for (const [face, label] of [
      ['rest', 'POST /api/invoke'],
      ['mcp', 'MCP tools/call invoke_agent'],
      ['a2a', 'A2A SendMessage'],
    ] as const) {
      lines.push(
        `- ${label}: p50 ${e[`${face}P50`]?.toFixed(2)} ms, p99 ${e[`${face}P99`]?.toFixed(2)} ms (${e[`${face}Count`]} calls)`,
      );
    }
  }
  lines.push('');
  lines.push(
    `Server memory: peak RSS (VmHWM) ${(context.peakRssKb / 1024).toFixed(0)} MB; RSS after start ${(context.rssAtStart / 1024).toFixed(0)} MB, at the end ${(context.rssEndKb / 1024).toFixed(0)} MB.`,
  );
  lines.push(`Whole run: ${(context.elapsed / 60).toFixed(1)} min.`);
  lines.push('');
  lines.push(...budgets(rows, context));
  return lines.join('\n');
}

function budgets(rows: Row[], context: ReportContext): string[] {
  const find = (name: string) => rows.find((row) => row.name === name);
  const out: string[] = [];
  // The budgets are set for the default SQLite deployment; PostgreSQL figures are marked as such.
  const suffix = context.options.db === 'postgres' ? ' (postgres)' : '';
  const line = (name: string, measured: string, target: string, pass: boolean) =>
    out.push(`BUDGET ${name}${suffix}: ${measured} (target ${target}) ${pass ? 'PASS' : 'FALLS SHORT'}`);
  const get = find('get');
  const baseline = find('baseline-get');
  if (get !== undefined && baseline !== undefined) {
    const ratio = (get.load.rps / baseline.load.rps) * 100;
    line(
      'get-profile-vs-baseline',
      `${ratio.toFixed(1)}% of baseline req/s (${get.load.rps.toFixed(0)} vs ${baseline.load.rps.toFixed(0)})`,
      '>= 80%',
      ratio >= 80,
    );
  }
  const auth = find('auth-get');
  if (auth !== undefined && get !== undefined) {
    const ratio = (auth.load.rps / get.load.rps) * 100;
    line(
      'authenticated-get-vs-get',
      `${ratio.toFixed(1)}% of GET profile req/s (${auth.load.rps.toFixed(0)} vs ${get.load.rps.toFixed(0)})`,
      '>= 70%',
      ratio >= 70,
    );
  }
  // Search latency is judged on one connection: with ten, a search also waits for nine others on the
  // single-threaded server (that p99 is in the table and the line, for reference).
  for (const name of ['search-capability', 'search-q', 'search-q-capability']) {
    const single = find(`${name}-1`);
    const loaded = find(name);
    if (single !== undefined)
      line(
        `${name}-p99`,
        `${single.load.p99.toFixed(1)} ms at 1 connection (${loaded?.load.p99.toFixed(1) ?? '-'} ms at ${loaded?.connections ?? '-'})`,
        '<= 20 ms',
        single.load.p99 <= 20,
      );
  }
  // "A few milliseconds of server time" per page: judged on one connection, so no queueing is counted.
  for (const name of ['page-home', 'page-search', 'page-agent', 'page-stats']) {
    const single = find(`${name}-1`);
    if (single !== undefined)
      line(
        `${name}-p50`,
        `${single.load.p50.toFixed(2)} ms p50, ${single.load.p99.toFixed(2)} ms p99, ${single.cpuPerRequest.toFixed(2)} ms server CPU at 1 connection`,
        'p50 <= 5 ms',
        single.load.p50 <= 5,
      );
  }
  const register = find('register-ed25519');
  if (register !== undefined)
    line('register-ed25519', `${register.load.rps.toFixed(0)}/s`, '>= 2500/s', register.load.rps >= 2500);
  const queue = find('queue-1');
  if (queue?.extra?.addedP50 !== undefined) {
    line(
      'queue-added-latency-p50',
      `${queue.extra.addedP50.toFixed(2)} ms (1 invoker connection)`,
      '<= 2 ms',
      queue.extra.addedP50 <= 2,
    );
  }
  const faces = find('faces-1')?.extra;
  if (faces?.restP50 !== undefined) {
    for (const [face, label] of [
      ['mcp', 'mcp-invoke-overhead-p50'],
      ['a2a', 'a2a-send-overhead-p50'],
    ] as const) {
      const p50 = faces[`${face}P50`] as number;
      const overhead = p50 - faces.restP50;
      line(
        label,
        `${overhead.toFixed(2)} ms over POST /api/invoke (p50 ${p50.toFixed(2)} vs ${faces.restP50.toFixed(2)} ms, ` +
          `${faces[`${face}Count`]} and ${faces.restCount} calls taking turns on one connection)`,
        '<= 1 ms',
        overhead <= 1,
      );
    }
  }
  const rssMb = context.peakRssKb / 1024;
  line(
    'server-peak-rss',
    `${rssMb.toFixed(0)} MB at ${context.options.agents.toLocaleString('en-US')} agents`,
    '<= 200 MB',
    rssMb <= 200,
  );
  return out;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
