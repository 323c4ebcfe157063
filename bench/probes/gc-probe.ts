/**
 * What the garbage collector costs around the search index, in process: loads N corpus agents,
 * then runs the bench's search URLs in a loop with some request-like garbage beside each, and
 * prints every kind of collection's count, total and largest pause.
 *   node --expose-gc --import tsx bench/probes/gc-probe.ts 1000000 [searches]
 * EXTRA_STRINGS=1000000 keeps that many more DID-like strings alive (what a string per agent costs
 * each young-generation collection); SPACES=1 prints V8's heap spaces after the load; NO_OBSERVER=1
 * leaves the GC observer out (to read `--trace-gc` alone).
 */
import { PerformanceObserver, constants } from 'node:perf_hooks';
import v8 from 'node:v8';
import { corpusIndex, indexQueryOf, percentiles } from './corpus-index.js';
import { searchShapes } from '../scenarios/search.js';

const N = Number(process.argv[2] ?? 100000);
const ITERATIONS = Number(process.argv[3] ?? 20000);
const { index, loadSeconds } = corpusIndex(
  N,
  (k) => `did:web:localhost%3A3999:agents:${k.toString(16).padStart(8, '0')}${'x'.repeat(20)}`,
);
const extra: string[] = [];
for (let k = 0; k < Number(process.env.EXTRA_STRINGS ?? 0); k++)
  extra.push(`did:web:localhost%3A3999:agents:${k.toString(16).padStart(32, '0')}`);
const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
gc?.();
const heap = v8.getHeapStatistics();
if (process.env.SPACES)
  for (const s of v8.getHeapSpaceStatistics())
    console.log(
      s.space_name,
      (s.space_size / 2 ** 20).toFixed(1),
      'MB size',
      (s.space_used_size / 2 ** 20).toFixed(1),
      'MB used',
    );
console.log(
  `${N} agents: loaded in ${loadSeconds.toFixed(1)} s, heap used ${(heap.used_heap_size / 2 ** 20).toFixed(0)} MB, external ${(heap.external_memory / 2 ** 20).toFixed(0)} MB, rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB`,
);

const queries = searchShapes('agent', false).flatMap((shape) => shape.paths.map(indexQueryOf));

const pauses = new Map<string, number[]>();
const kinds: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental step',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = kinds[(entry as unknown as { detail: { kind: number } }).detail.kind] ?? 'other';
    const list = pauses.get(kind) ?? [];
    list.push(entry.duration);
    pauses.set(kind, list);
  }
});
if (!process.env.NO_OBSERVER) observer.observe({ entryTypes: ['gc'] });

// Request-like garbage: a parsed query, a page of 20 row objects and their JSON, kept until the next.
let previous: unknown;
const times: number[] = [];
const started = performance.now();
let i = 0;
function batch(): void {
  const end = Math.min(i + 500, ITERATIONS);
  for (; i < end; i += 1) {
    const query = queries[i % queries.length]!;
    const t = performance.now();
    const page = index.search(query);
    const rows = page.dids.map((did) => ({
      did,
      name: `agent ${did}`,
      capabilities: [{ type: 'x', description: did.repeat(8) }],
      tags: ['a', 'b'],
    }));
    previous = JSON.stringify({ agents: rows, total: page.total });
    times.push(performance.now() - t);
  }
  if (i < ITERATIONS) setImmediate(batch);
  else setTimeout(report, 100);
}
function report(): void {
  observer.disconnect();
  console.log(
    `${ITERATIONS} searches in ${((performance.now() - started) / 1000).toFixed(1)} s; search+page ${percentiles(times)} ms`,
  );
  for (const [kind, list] of pauses) {
    if (list.length === 0) continue;
    list.sort((a, b) => a - b);
    const total = list.reduce((sum, d) => sum + d, 0);
    console.log(
      `${kind.padEnd(18)} ${String(list.length).padStart(6)}  total ${total.toFixed(0).padStart(6)} ms  p50 ${list[list.length >> 1]!.toFixed(2)}  max ${list.at(-1)!.toFixed(2)} ms`,
    );
  }
  void previous;
  void extra.length;
}
batch();
