/**
 * The transparency log's costs that no scenario of `npm run bench` measures:
 *
 *   npx tsx bench/probes/transparency-log.ts [--entries 1000000] [--checkpoints 2000]
 *
 * 1. Building a node's tree from the log's records (what a node does at start): derives each leaf from
 *    a synthetic record, hashes it and appends it, for `--entries` entries; prints the time and the
 *    growth of the heap and of the resident set (no database read: that is the records query's cost).
 * 2. `GET /log/checkpoint` on an in-process registry (SQLite, Fastify inject, no sockets) holding a
 *    few hundred changes: p50 and p95 over `--checkpoints` requests.
 */
import { performance } from 'node:perf_hooks';
import { startRegistry, register } from '@agent-registry/testkit/in-process';
import { MerkleTree, leafData, leafHash } from '@agent-registry/testkit/server-internals';
import { scriptArgs } from './script-args.js';

const args = scriptArgs();
const entries = args.number('--entries', 1_000_000);
const checkpoints = args.number('--checkpoints', 2000);

function record(i: number): string {
  return JSON.stringify({
    did: `did:web:registry.example:agents:${i.toString(36).padStart(8, '0')}`,
    name: `Agent ${i}`,
    description: 'Translates English to French, with a description of ordinary length for a profile.',
    avatar: null,
    website: null,
    public_key: 'z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK',
    key_type: 'ed25519',
    chain_id: null,
    capabilities: '[{"type":"translation","description":"English to French","tags":["en","fr"]}]',
    tags: '["language","fr"]',
    status: 'active',
    invocation_enabled: 0,
    delivery_mode: 'none',
    average_rating: 0,
    reputation_score: 0,
    total_reviews: 0,
    created_at: 1767225600000 + i,
    updated_at: 1767225600000 + i,
  });
}

global.gc?.();
const heapBefore = process.memoryUsage().heapUsed;
const rssBefore = process.memoryUsage().rss;
const buffersBefore = process.memoryUsage().arrayBuffers;
const started = performance.now();
const tree = new MerkleTree();
for (let i = 0; i < entries; i += 1) {
  tree.append(leafHash(leafData(i + 1, 'register', record(i), 'https://registry.example')));
}
const buildMs = performance.now() - started;
global.gc?.();
const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
const rssMb = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
const buffersMb = (process.memoryUsage().arrayBuffers - buffersBefore) / 2 ** 20;
const rootStarted = performance.now();
tree.root(tree.size);
const rootMs = performance.now() - rootStarted;
console.log(
  `tree of ${entries} entries: built in ${(buildMs / 1000).toFixed(1)} s (${Math.round(entries / (buildMs / 1000))} entries/s), heap +${heapMb.toFixed(0)} MiB, array buffers +${buffersMb.toFixed(0)} MiB, rss +${rssMb.toFixed(0)} MiB; root in ${rootMs.toFixed(2)} ms`,
);

const registry = await startRegistry();
try {
  for (let i = 0; i < 200; i += 1) await register(registry);
  const times: number[] = [];
  for (let i = 0; i < checkpoints; i += 1) {
    const t = performance.now();
    const response = await registry.app.inject({ method: 'GET', url: '/log/checkpoint' });
    times.push(performance.now() - t);
    if (response.statusCode !== 200) throw new Error(response.body);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => (times[Math.floor(q * (times.length - 1))] ?? 0).toFixed(3);
  console.log(
    `GET /log/checkpoint (in-process, 200+ entries): p50 ${at(0.5)} ms, p95 ${at(0.95)} ms over ${checkpoints}`,
  );
} finally {
  await registry.close();
}
