/**
 * The database part of an Ed25519 registration alone: the registry's own store function through its
 * SQLite group commit, on a seeded database, `--in-flight` registrations at a time (as concurrent
 * requests make them), without HTTP or crypto. Prints the process's CPU per registration
 * (`process.cpuUsage`, the WAL checkpointer thread included) per round, and each SQL statement's CPU per
 * registration in one more round (user + system time around each better-sqlite3 call, so a commit's WAL
 * write counts).
 *
 *   node --import tsx bench/probes/register-db.ts [--agents 20000] [--registrations 3000] [--rounds 3]
 *        [--in-flight 10]
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  insertAgentIn as insertRegisteredAgent,
  openDatabase,
  transactionRunner,
  type RegisteredAgentRow,
} from '@agent-registry/testkit/server-internals';
import { webDid } from '@agent-registry/protocol';
import { registeredAgentRow } from '@agent-registry/testkit/agent-rows';
import { prng, registrationProfile } from '../corpus.js';
import { seedRegistry } from '../seed.js';
import { scriptArgs } from './script-args.js';

const args = scriptArgs();
const option = args.number;
const agents = option('--agents', 20_000);
const registrations = option('--registrations', 3_000);
const rounds = option('--rounds', 3);
const inFlight = option('--in-flight', 10);

/** CPU (user + system) per SQL text, µs, and calls; filled by the wrapped statement methods. */
const statements = new Map<string, { us: number; calls: number }>();
let timing = false;

/** Wraps better-sqlite3's statement methods (one prototype for every statement) with CPU timing. */
function timeStatements(): void {
  const probe = new SqliteDatabase(':memory:');
  const prototype = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, unknown>;
  probe.close();
  for (const method of ['run', 'all', 'get'] as const) {
    const original = prototype[method] as (this: SqliteDatabase.Statement, ...rest: unknown[]) => unknown;
    prototype[method] = function timed(this: SqliteDatabase.Statement, ...rest: unknown[]) {
      if (!timing) return original.apply(this, rest);
      const before = process.cpuUsage();
      try {
        return original.apply(this, rest);
      } finally {
        const spent = process.cpuUsage(before);
        // Multi-row VALUES lists differ only in length: one line for all of them.
        const key = this.source.replace(/\s+/g, ' ').replace(/(\(\?(, \?)*\))(, \(\?(, \?)*\))+/g, '$1, ...');
        const entry = statements.get(key) ?? { us: 0, calls: 0 };
        entry.us += spent.user + spent.system;
        entry.calls += 1;
        statements.set(key, entry);
      }
    };
  }
}

function agentRow(random: () => number, n: number, now: number): RegisteredAgentRow {
  const profile = registrationProfile(random, n);
  const publicKey = crypto.randomBytes(32).toString('hex');
  return registeredAgentRow(webDid('localhost%3A8080', crypto.randomBytes(16).toString('hex')), {
    public_key: publicKey,
    key_id: `ed25519:${publicKey}`,
    name: profile.name,
    description: profile.description,
    capabilities: JSON.stringify(profile.capabilities),
    tags: JSON.stringify(profile.tags),
    created_at: now,
    updated_at: now,
  });
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-register-db-'));
  const file = path.join(dir, 'registry.db');
  try {
    await seedRegistry({
      database: { kind: 'sqlite', path: file },
      agents,
      didWebDomain: 'localhost%3A8080',
    });
    timeStatements();
    const handle = openDatabase({ kind: 'sqlite', path: file });
    const writes = transactionRunner(handle.db, 'sqlite');
    const random = prng(99);
    let n = agents;
    const registerMany = async (count: number) => {
      const rows = Array.from({ length: count }, () => agentRow(random, n++, Date.now()));
      let next = 0;
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          for (let row = rows[next++]; row !== undefined; row = rows[next++]) {
            const current = row;
            await writes.run((trx) => insertRegisteredAgent(trx, current));
          }
        }),
      );
    };
    await registerMany(Math.round(registrations / 3));
    for (let round = 0; round < rounds; round++) {
      const before = process.cpuUsage();
      await registerMany(registrations);
      const spent = process.cpuUsage(before);
      console.log(
        `round ${round + 1}: ${((spent.user + spent.system) / registrations).toFixed(1)} µs of process CPU per registration (largest group ${writes.largestGroup})`,
      );
    }
    // One more round with every statement timed (the timing's own cost stays out of the rounds above).
    timing = true;
    await registerMany(registrations);
    timing = false;
    const total = registrations;
    console.log('\n| statement | calls per registration | CPU µs per registration |');
    console.log('| --- | ---: | ---: |');
    let sum = 0;
    for (const [text, entry] of [...statements].sort((a, b) => b[1].us - a[1].us)) {
      sum += entry.us / total;
      console.log(
        `| \`${text.slice(0, 150)}\` | ${(entry.calls / total).toFixed(2)} | ${(entry.us / total).toFixed(1)} |`,
      );
    }
    console.log(`| all statements | | ${sum.toFixed(1)} |`);
    await handle.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
