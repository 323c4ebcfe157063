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
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type autocannon from 'autocannon';
import { SEARCH_QUERIES } from './corpus.js';
import { call, expectStatus, pregenerate, registerActor, type Actor } from './client.js';
import { createDatabase } from './database.js';
import { percentile, runLoad } from './load.js';
import { cycling, measure, mergeRows, type Row } from './measure.js';
import { parseOptions } from './options.js';
import {
  OUT,
  ROOT,
  buildIfNeeded,
  log,
  spawnNode,
  stop,
  tsx,
  waitForHttp,
  waitForMessage,
} from './processes.js';
import { machine, statusKb } from './proc.js';
import { renderReport } from './report.js';
import { searchScenarios } from './scenarios/search.js';
import { seedRegistry } from './seed.js';
import { commitCounter } from './commit-counter.js';
import { summariseProfile } from './profile-summary.js';
import { runSybilBench } from './sybil.js';

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
    // The node loads its search index before it listens: about 4 s per 100,000 agents.
    await waitForHttp(`${base}/readyz`, server, Math.max(30_000, options.agents / 2));
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

    // Search: every shape of issue 16, each sort, at 1 and 10 connections (bench/scenarios/search.ts).
    rows.push(...(await searchScenarios({ base, pid, options, wanted })));

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
        const commits = options.db === 'postgres' ? await commitCounter(database.url) : undefined;
        await commits?.start();
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
        const counted = await commits?.stop();
        if (counted !== undefined) {
          row.extra.commitsPerInvocation = counted.perInvocation;
          log(
            `  commits: ${counted.perInvocation.toFixed(2)} write transactions per invocation (${counted.writeTransactions} for ${counted.invocations} tasks)`,
          );
        }
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
    const databaseBytes = await database.sizeBytes();
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
      databaseBytes,
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
          databaseBytes,
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

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
