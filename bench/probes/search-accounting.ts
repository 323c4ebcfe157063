/**
 * CPU per search through the registry's own Fastify app (`inject`: no sockets, no load generator), shape
 * by shape, in one process on a copy of a kept SQLite seed. Far less noisy than requests per second on a
 * 2-core machine that also runs the load generator, so it is the A/B tool for a change to the search
 * path: run it on both commits, interleaved.
 *   node --import tsx bench/probes/search-accounting.ts <seed.db> [--rounds 5] [--per-shape 600]
 * (the seed: a file that `npm run bench -- --keep-database <dir>` kept, with its manifest beside it;
 * the file is copied, never written).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp, createContext, loadConfig } from '@agent-registry/testkit/server-internals';
import { searchShapes } from '../scenarios/search.js';
import { readManifest } from '../seeded-database.js';
import { scriptArgs } from './script-args.js';

const args = scriptArgs();
const seed = process.argv[2];
if (seed === undefined || !fs.existsSync(seed)) throw new Error('give the path of a kept SQLite seed');
const rounds = args.number('--rounds', 5);
const perShape = args.number('--per-shape', 600);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'search-accounting-'));
const file = path.join(dir, 'registry.db');
fs.copyFileSync(seed, file);
fs.chmodSync(file, 0o600);
// The seed's did:web DIDs name the host they were minted for: the registry must serve that origin.
const manifest = readManifest(seed.replace(/\.db$/, '.json'));
if (manifest === undefined) throw new Error(`no manifest beside the seed ${seed}`);
const didWeb = manifest.seeded.dids.find((did) => did.startsWith('did:web:'));
if (didWeb === undefined) throw new Error('the seed manifest lists no did:web agent');
const host = decodeURIComponent(didWeb.split(':')[2] as string);
const config = loadConfig({
  DATABASE_URL: `sqlite:${file}`,
  PUBLIC_URL: `http://${host}`,
  LOG_LEVEL: 'warn',
});
const ctx = await createContext(config);
const app = await buildApp(ctx);
await app.ready();

const shapes = searchShapes('agent', false);
const cpuUs = new Map<string, number[]>();
// Round 0 warms up (the JIT, the statement cache, the load's garbage) and is not counted.
for (let round = 0; round <= rounds; round += 1) {
  for (const shape of shapes) {
    const cpuBefore = process.cpuUsage();
    for (let i = 0; i < perShape; i += 1) {
      const response = await app.inject({
        method: 'GET',
        url: shape.paths[i % shape.paths.length] as string,
      });
      if (response.statusCode !== 200)
        throw new Error(`${shape.name}: ${response.statusCode} ${response.body}`);
    }
    const cpu = process.cpuUsage(cpuBefore);
    if (round === 0) continue;
    const list = cpuUs.get(shape.name) ?? [];
    list.push((cpu.user + cpu.system) / perShape);
    cpuUs.set(shape.name, list);
  }
}
// The least of the rounds is the figure to compare: what a noisy neighbour adds is never negative.
for (const [name, list] of cpuUs) {
  const sorted = [...list].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] as number;
  console.log(
    `${name.padEnd(34)} µs per search: least ${(sorted[0] as number).toFixed(0)}, median ${median.toFixed(0)} (rounds ${list.map((us) => us.toFixed(0)).join(', ')})`,
  );
}
await app.close();
await ctx.close();
fs.rmSync(dir, { recursive: true, force: true });
