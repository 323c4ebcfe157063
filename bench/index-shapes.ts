/**
 * The search index's own cost per search shape, in process (no HTTP, no database): loads `N`
 * synthetic agents from the bench corpus into a SearchIndex, runs every URL of every shape of
 * scenarios/search.ts against it, and prints p50, p99 and max per shape. What grows with the registry
 * is the index's work; the HTTP and page-read cost around it does not.
 *   node --import tsx bench/index-shapes.ts 1000000
 */
import { prng, SEARCH_QUERIES, syntheticProfile } from './corpus.js';
import { searchShapes } from './scenarios/search.js';
import { SearchIndex } from '../packages/server/src/search-index/search-index.js';
import { fullTextTerms, searchKey } from '../packages/server/src/search-index/text.js';
const N = Number(process.argv[2] ?? 100000);
const random = prng(20261122);
const index = new SearchIndex();
index.beginLoad();
for (let n = 0; n < N; n += 1000) {
  const batch = [];
  for (let k = n; k < n + 1000; k++) {
    const p = syntheticProfile(random, k);
    batch.push({
      did: `did:web:x:agent:${k.toString(16).padStart(8, '0')}`,
      name: p.name,
      description: p.description,
      capabilities: JSON.stringify(p.capabilities),
      tags: JSON.stringify(p.tags),
      status: 'active',
      reputation_score: random() < 0.4 ? Math.round(random() * 10000) / 100 : 0,
      created_at: 1.7e12 - Math.floor(random() * 730 * 86400000),
    });
  }
  index.loadBatch(batch);
}
index.endLoad();
const memory = process.memoryUsage();
console.log(
  `${N} agents: index loaded, heap ${(memory.heapUsed / 2 ** 20).toFixed(0)} MB, rss ${(memory.rss / 2 ** 20).toFixed(0)} MB`,
);
for (const shape of searchShapes('agent', false)) {
  const times: number[] = [];
  const cpuTimes: number[] = [];
  for (const path of shape.paths) {
    const u = new URL(path, 'http://x');
    const p = u.searchParams;
    const q = p.get('q');
    const sort = (p.get('sort') ?? (q ? 'relevance' : 'reputation')) as 'relevance';
    const query = {
      terms: q ? fullTextTerms(q) : undefined,
      capability: p.get('capability') ? searchKey(p.get('capability')!) : undefined,
      tags: p.get('tags') ? p.get('tags')!.split(',').map(searchKey) : undefined,
      minReputation: p.get('min_reputation') ? Number(p.get('min_reputation')) : undefined,
      sort,
      order: p.get('order') as 'asc',
      limit: 20,
      offset: Number(p.get('offset') ?? 0),
    };
    const cpuBefore = process.cpuUsage();
    const s = performance.now();
    index.search(query);
    times.push(performance.now() - s);
    const cpu = process.cpuUsage(cpuBefore);
    cpuTimes.push((cpu.user + cpu.system) / 1000);
  }
  times.sort((a, b) => a - b);
  cpuTimes.sort((a, b) => a - b);
  console.log(
    shape.name.padEnd(40),
    'p50',
    times[Math.floor(times.length / 2)]!.toFixed(3),
    'p99',
    times[Math.floor(times.length * 0.99)]!.toFixed(3),
    'max',
    times[times.length - 1]!.toFixed(3),
    '| cpu p50',
    cpuTimes[Math.floor(cpuTimes.length / 2)]!.toFixed(3),
    'p99',
    cpuTimes[Math.floor(cpuTimes.length * 0.99)]!.toFixed(3),
  );
}

// Cursor pages 2-6 of the bench's cursor shape: the broadest word and the first 12 queries, by relevance.
{
  const times: number[] = [];
  for (let round = 0; round < 4; round += 1) {
    for (const q of ['agent', ...SEARCH_QUERIES.slice(0, 12)]) {
      const base = {
        terms: fullTextTerms(q),
        sort: 'relevance' as const,
        order: 'desc' as const,
        limit: 20,
        offset: 0,
      };
      let page = index.search(base);
      for (let n = 0; n < 5 && page.more && page.last !== undefined; n += 1) {
        const s = performance.now();
        page = index.search({ ...base, after: page.last });
        times.push(performance.now() - s);
      }
    }
  }
  times.sort((a, b) => a - b);
  console.log(
    'search q, pages 2-6 by cursor'.padEnd(40),
    'p50',
    times[Math.floor(times.length / 2)]!.toFixed(3),
    'p99',
    times[Math.floor(times.length * 0.99)]!.toFixed(3),
    'max',
    times[times.length - 1]!.toFixed(3),
  );
}
