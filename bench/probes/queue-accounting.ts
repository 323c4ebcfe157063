/**
 * Where a queue invocation's registry time goes, in process: the registry (packages/server src, the same
 * composition root as production) on a seeded SQLite file, driven through Fastify's `inject` (the whole
 * request pipeline without sockets) by an invoker and a queue worker: invoke, the worker's long poll,
 * accept, result. Prints CPU and wall time per invocation, and every SQL statement's time per invocation
 * (better-sqlite3 calls timed where they run), so the statements and the rest (HTTP pipeline, services,
 * validation hop) add up to the CPU figure. No sockets: the kernel's share of the real bench's added
 * latency is not here.
 *
 *   node --import tsx bench/probes/queue-accounting.ts [--agents 20000] [--invocations 3000] [--rounds 2]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { agentPath, bearer } from '@agent-registry/testkit';
import { seedRegistry } from '../seed.js';
import { scriptArgs } from './script-args.js';

const args = scriptArgs();
const option = args.number;
const agents = option('--agents', 20_000);
const invocations = option('--invocations', 3000);
const rounds = option('--rounds', 2);

/** Time spent in each statement (by its text), counted while `timing` is on. */
const statementTime = new Map<string, { calls: number; micros: number }>();
let timing = false;
type Prepare = (this: Database.Database, source: string) => Database.Statement;
const prototype = Database.prototype as unknown as { prepare: Prepare };
const prepare = prototype.prepare;
prototype.prepare = function timedPrepare(this: Database.Database, source: string) {
  const statement = prepare.call(this, source);
  const label = source.replace(/\s+/g, ' ').slice(0, 90);
  for (const method of ['all', 'get', 'run'] as const) {
    const run = statement[method].bind(statement) as (...parameters: unknown[]) => unknown;
    (statement as unknown as Record<string, unknown>)[method] = (...parameters: unknown[]) => {
      if (!timing) return run(...parameters);
      const start = process.hrtime.bigint();
      try {
        return run(...parameters);
      } finally {
        const entry = statementTime.get(label) ?? { calls: 0, micros: 0 };
        entry.calls += 1;
        entry.micros += Number(process.hrtime.bigint() - start) / 1000;
        statementTime.set(label, entry);
      }
    };
  }
  return statement;
};

const { startRegistry, register } = await import('@agent-registry/testkit/in-process');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queue-accounting-'));
const file = path.join(dir, 'registry.db');
const seedStart = performance.now();
await seedRegistry({ database: { kind: 'sqlite', path: file }, agents, didWebDomain: 'localhost%3A8080' });
console.log(`seeded ${agents} agents in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);
const registry = await startRegistry({}, { database: { url: `sqlite:${file}`, file, drop: async () => {} } });
const inject = (method: 'GET' | 'POST' | 'PUT', url: string, token: string, payload?: object) =>
  registry.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });

const caller = await register(registry);
const worker = await register(registry, undefined, {
  name: 'Queue worker',
  capabilities: [
    { type: 'echo', input_schema: { type: 'object', properties: { text: { type: 'string' } } } },
  ] as never,
});
await inject('PUT', agentPath(worker.did, '/invocation'), worker.token, {
  enabled: true,
  delivery_mode: 'queue',
});

async function invokeOnce(): Promise<void> {
  const invoked = inject('POST', '/api/invoke', caller.token, {
    target_did: worker.did,
    capability: 'echo',
    input: { text: 'hello' },
  });
  const polled = await inject('GET', '/api/agent/tasks?wait=5', worker.token);
  const task = polled.json<{ tasks: { task_id: string }[] }>().tasks[0];
  if (task === undefined) throw new Error(`the poll returned no task: ${polled.body}`);
  const id = encodeURIComponent(task.task_id);
  await inject('POST', `/api/agent/tasks/${id}/accept`, worker.token);
  await inject('POST', `/api/agent/tasks/${id}/result`, worker.token, { output: { text: 'hello' } });
  const answer = await invoked;
  if (answer.statusCode !== 200) throw new Error(`invoke answered ${answer.statusCode}: ${answer.body}`);
}

for (let warm = 0; warm < 500; warm += 1) await invokeOnce();
for (let round = 1; round <= rounds; round += 1) {
  statementTime.clear();
  timing = true;
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  for (let done = 0; done < invocations; done += 1) await invokeOnce();
  const wallMicros = ((performance.now() - start) * 1000) / invocations;
  const cpu = process.cpuUsage(cpuBefore);
  timing = false;
  const cpuMicros = (cpu.user + cpu.system) / invocations;
  const rows = [...statementTime].sort((a, b) => b[1].micros - a[1].micros);
  const sqlMicros = rows.reduce((sum, [, entry]) => sum + entry.micros, 0) / invocations;
  console.log(
    `\nround ${round}: ${invocations} invocations; per invocation: CPU ${cpuMicros.toFixed(0)} µs, wall ${wallMicros.toFixed(0)} µs; ` +
      `SQL statements ${sqlMicros.toFixed(0)} µs, the rest (Fastify, services, validation hop) ${(cpuMicros - sqlMicros).toFixed(0)} µs`,
  );
  console.log('| µs per invocation | calls per invocation | µs per call | statement |');
  console.log('| --: | --: | --: | --- |');
  for (const [label, entry] of rows) {
    console.log(
      `| ${(entry.micros / invocations).toFixed(1)} | ${(entry.calls / invocations).toFixed(2)} | ${(entry.micros / entry.calls).toFixed(1)} | \`${label}\` |`,
    );
  }
}
await registry.close();
fs.rmSync(dir, { recursive: true, force: true });
