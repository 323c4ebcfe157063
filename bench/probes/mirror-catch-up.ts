/**
 * How long `agent-registry mirror` takes to catch up on a registry's whole transparency log:
 *
 *   npx tsx bench/probes/mirror-catch-up.ts [--agents 100000] [--db sqlite|postgres]
 *
 * Seeds `--agents` agents (one log entry each, through the change feed's stamp as bench/seed.ts
 * writes them), starts the built registry as its own process, then runs the built CLI as a user does:
 * a first catch-up with profiles (one GET per agent, checked against its leaf), a second one with
 * nothing new (reloading and re-hashing every verified leaf), and a first catch-up of the entries
 * only (`--no-profiles`) into another directory. Prints wall times and the size of the copy.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createDatabase } from '../database.js';
import { ROOT, buildIfNeeded, stop } from '../processes.js';
import { seedRegistry } from '../seed.js';
import { startRegistry } from '../servers.js';
import { scriptArgs } from './script-args.js';

const run = promisify(execFile);
const args = scriptArgs();
const agents = args.number('--agents', 100_000);
const kind = args.text('--db') === 'postgres' ? 'postgres' : 'sqlite';
const port = Number(process.env.BENCH_PORT ?? 18180);
const base = `http://127.0.0.1:${port}`;
const cli = path.join(ROOT, 'packages/cli/bin/agent-registry.js');

buildIfNeeded();
const database = await createDatabase(kind);
const children: ChildProcess[] = [];
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mirror-probe-'));
try {
  let started = Date.now();
  await seedRegistry({ database: database.config, agents, didWebDomain: `127.0.0.1%3A${port}`, batch: 500 });
  console.log(`seeded ${agents} agents on ${kind} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  started = Date.now();
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
  console.log(`registry ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const mirror = async (label: string, dir: string, ...extra: string[]) => {
    const begin = Date.now();
    const { stdout } = await run(
      process.execPath,
      [cli, 'mirror', dir, '--registry', base, '--json', ...extra],
      {
        maxBuffer: 1 << 24,
      },
    );
    const seconds = (Date.now() - begin) / 1000;
    const result = JSON.parse(stdout) as { tree_size: number; added: number; profiles_checked: number };
    const bytes = fs.statSync(path.join(dir, 'mirror.db')).size;
    console.log(
      `${label}: ${seconds.toFixed(1)} s, tree size ${result.tree_size}, ${result.added} entries added, ` +
        `${result.profiles_checked} profiles checked (${Math.round(result.added / seconds)} entries/s); mirror.db ${(bytes / 2 ** 20).toFixed(1)} MiB`,
    );
  };
  const full = path.join(work, 'full');
  await mirror('first catch-up with profiles', full);
  await mirror('second catch-up, nothing new', full);
  await mirror('first catch-up, entries only', path.join(work, 'entries'), '--no-profiles');
} finally {
  for (const child of children) await stop(child).catch(() => undefined);
  await database.drop();
  fs.rmSync(work, { recursive: true, force: true });
}
