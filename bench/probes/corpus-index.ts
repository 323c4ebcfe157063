/**
 * The bench corpus in an in-process SearchIndex (no HTTP, no database), and a search URL of the
 * bench as the index query the registry would make of it: what index-shapes.ts and gc-probe.ts share.
 */
import { prng, syntheticProfile } from '../corpus.js';
import { SearchIndex, fullTextTerms, searchKey, type IndexQuery } from '@agent-registry/search-index';

/** Loads `count` corpus agents; `loadSeconds` is the index's own time (not the corpus's). */
export function corpusIndex(
  count: number,
  didOf: (n: number) => string = (n) => `did:web:x:agent:${n.toString(16).padStart(8, '0')}`,
): { index: SearchIndex; loadSeconds: number } {
  const random = prng(20261122);
  const index = new SearchIndex();
  let loading = 0;
  index.beginLoad();
  for (let n = 0; n < count; n += 1000) {
    const batch = [];
    for (let k = n; k < Math.min(n + 1000, count); k++) {
      const profile = syntheticProfile(random, k);
      const reputation = random() < 0.4 ? Math.round(random() * 10000) / 100 : 0;
      batch.push({
        did: didOf(k),
        name: profile.name,
        description: profile.description,
        capabilities: JSON.stringify(profile.capabilities),
        tags: JSON.stringify(profile.tags),
        status: 'active',
        reputation_score: reputation,
        // Derived, not drawn, so the corpus stays the one earlier runs measured.
        average_rating: reputation === 0 ? 0 : Math.round(100 + reputation * 9) / 100,
        total_reviews: reputation === 0 ? 0 : 1 + (k % 20),
        created_at: 1.7e12 - Math.floor(random() * 730 * 86400000),
      });
    }
    const started = performance.now();
    index.loadBatch(batch);
    loading += performance.now() - started;
  }
  const started = performance.now();
  index.endLoad();
  loading += performance.now() - started;
  return { index, loadSeconds: loading / 1000 };
}

/** A bench search path (`/api/agents/search?...`) as an index query. */
export function indexQueryOf(path: string): IndexQuery {
  const params = new URL(path, 'http://x').searchParams;
  const q = params.get('q');
  const capability = params.get('capability');
  const tags = params.get('tags');
  const minimum = params.get('min_reputation');
  return {
    terms: q ? fullTextTerms(q) : undefined,
    capability: capability ? searchKey(capability) : undefined,
    tags: tags ? tags.split(',').map(searchKey) : undefined,
    minReputation: minimum ? Number(minimum) : undefined,
    sort: (params.get('sort') ?? (q ? 'relevance' : 'reputation')) as IndexQuery['sort'],
    order: params.get('order') === 'asc' ? 'asc' : 'desc',
    limit: 20,
    offset: Number(params.get('offset') ?? 0),
  };
}

/** p50, p99 and max of a list of times, as printed by the in-process tools. */
export function percentiles(times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (fraction: number) => (sorted[Math.floor(sorted.length * fraction)] as number).toFixed(3);
  return `p50 ${at(0.5)} p99 ${at(0.99)} max ${(sorted.at(-1) as number).toFixed(3)}`;
}
