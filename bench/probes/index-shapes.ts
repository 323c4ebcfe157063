/**
 * The search index's own cost per search shape, in process (no HTTP, no database): loads `N`
 * synthetic agents from the bench corpus into a SearchIndex, runs every URL of every shape of
 * scenarios/search.ts against it, then the cursor shape's pages 2-6, and prints p50, p99 and max per
 * shape. What grows with the registry is the index's work; the HTTP and page-read cost around it
 * does not.
 *   node --import tsx bench/probes/index-shapes.ts 1000000
 */
import { SEARCH_QUERIES } from '../corpus.js';
import { corpusIndex, indexQueryOf, percentiles } from './corpus-index.js';
import { searchShapes } from '../scenarios/search.js';
import { fullTextTerms } from '@agent-registry/search-index';

const N = Number(process.argv[2] ?? 100000);
const { index, loadSeconds } = corpusIndex(N);
const memory = process.memoryUsage();
console.log(
  `${N} agents: index loaded in ${loadSeconds.toFixed(1)} s, heap ${(memory.heapUsed / 2 ** 20).toFixed(0)} MB, rss ${(memory.rss / 2 ** 20).toFixed(0)} MB`,
);
for (const shape of searchShapes('agent', false)) {
  const times: number[] = [];
  const cpuTimes: number[] = [];
  for (const path of shape.paths) {
    const query = indexQueryOf(path);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    index.search(query);
    times.push(performance.now() - started);
    const cpu = process.cpuUsage(cpuBefore);
    cpuTimes.push((cpu.user + cpu.system) / 1000);
  }
  console.log(shape.name.padEnd(40), percentiles(times), '| cpu', percentiles(cpuTimes));
}

// Cursor pages 2-6 of the bench's cursor shape: the broadest word and the first 12 queries, by relevance.
const cursorTimes: number[] = [];
for (let round = 0; round < 4; round += 1) {
  for (const q of ['agent', ...SEARCH_QUERIES.slice(0, 12)]) {
    const first = {
      terms: fullTextTerms(q),
      sort: 'relevance',
      order: 'desc',
      limit: 20,
      offset: 0,
    } as const;
    let page = index.search(first);
    for (let n = 0; n < 5 && page.more && page.last !== undefined; n += 1) {
      const started = performance.now();
      page = index.search({ ...first, after: page.last });
      cursorTimes.push(performance.now() - started);
    }
  }
}
console.log('search-cursor (pages 2-6)'.padEnd(40), percentiles(cursorTimes));
