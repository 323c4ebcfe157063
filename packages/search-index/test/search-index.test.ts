import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentIndexEntries } from '../src/agent-entries.js';
import {
  SearchIndex,
  type IndexedAgent,
  type IndexQuery,
  type RankKey,
  type RelevanceTuning,
} from '../src/search-index.js';
import { FIELDS, FIELD_WEIGHTS, indexWords, stemWord } from '../src/text.js';

/**
 * The index against a brute-force reference that scores and sorts every agent: same matches, same
 * exact totals, same pages by offset and by cursor, through inserts, updates and removals. The corpus
 * is large enough (6,000 agents, one word in nearly all) to take every path: level-by-level relevance,
 * bit-sliced relevance for several words, scoring every match, walking an order and taking matches out of a bitmap.
 */

const WORDS = [
  'data',
  'translate',
  'python',
  'finance',
  'image',
  'speech',
  'legal',
  'search',
  'weather',
  'chess',
];
const CAPABILITIES = ['translation', 'data_analysis', 'image_generation', 'code_review', 'summarization'];
const TAGS = ['fr', 'de', 'python', 'finance', 'fast', 'beta'];

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

function pickSome<T>(next: () => number, items: readonly T[], most: number): T[] {
  const count = Math.floor(next() * (most + 1));
  return [...new Set(Array.from({ length: count }, () => items[Math.floor(next() * items.length)] as T))];
}

function makeAgent(next: () => number, index: number): IndexedAgent {
  const word = () => WORDS[Math.floor(next() * WORDS.length)] as string;
  // "data" is in nearly every description: the broad one-word query of the bench.
  const description = next() < 0.8 ? `data ${word()} ${word()}` : `${word()} tools`;
  const capabilities = pickSome(next, CAPABILITIES, 2).map((type) => ({
    type,
    description: next() < 0.5 ? `${word()} service` : undefined,
  }));
  if (capabilities.length === 0) capabilities.push({ type: 'general', description: undefined });
  return {
    did: `did:web:example.com:agent:${index.toString(16).padStart(6, '0')}`,
    // A word of its own per agent (as in the bench corpus): thousands of one-agent posting lists.
    name: `${word()} ${next() < 0.3 ? word() : 'agent'} ${index.toString(36)}`,
    description,
    capabilities: JSON.stringify(capabilities),
    tags: JSON.stringify(pickSome(next, TAGS, 3)),
    status: 'active',
    // Few distinct values, so ties are common and the tie-breaks are exercised.
    reputation_score: Math.floor(next() * 6) * 10,
    created_at: 1_700_000_000_000 + Math.floor(next() * 500) * 1000,
    // Also few values: equal scores are common, and the rating and review-count tie-breaks decide.
    average_rating: 1 + Math.floor(next() * 4) * 3,
    total_reviews: Math.floor(next() * 3),
  };
}

/** Everything the index promises, computed the slow way. */
class Reference {
  readonly agents = new Map<string, IndexedAgent>();

  apply(agent: IndexedAgent): void {
    if (agent.status === 'active') this.agents.set(agent.did, agent);
    else this.agents.delete(agent.did);
  }

  search(query: IndexQuery): { dids: string[]; total: number; scores: Map<string, number> } {
    const words = query.terms?.map(stemWord) ?? [];
    const scores = new Map<string, number>();
    const matches: IndexedAgent[] = [];
    for (const agent of this.agents.values()) {
      const entries = agentIndexEntries(agent);
      if (query.capability !== undefined && !entries.capabilityTypes.includes(query.capability)) continue;
      if (query.tags !== undefined && !query.tags.some((tag) => entries.tags.includes(tag))) continue;
      if (query.minReputation !== undefined && agent.reputation_score < query.minReputation) continue;
      const fields = FIELDS.map((field) => indexWords(entries.document[field]));
      let score = 0;
      let matched = true;
      words.forEach((word, index) => {
        const last = index === words.length - 1;
        let hit = false;
        fields.forEach((stems, field) => {
          if (stems.some((stem) => (last ? stem.startsWith(word) : stem === word))) {
            hit = true;
            score += FIELD_WEIGHTS[FIELDS[field] as (typeof FIELDS)[number]];
          }
        });
        if (!hit) matched = false;
      });
      if (!matched) continue;
      scores.set(agent.did, score);
      matches.push(agent);
    }
    const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    const byReputation = (a: IndexedAgent, b: IndexedAgent) =>
      b.reputation_score - a.reputation_score ||
      b.average_rating - a.average_rating ||
      b.total_reviews - a.total_reviews ||
      b.created_at - a.created_at ||
      text(b.did, a.did);
    const byCreation = (a: IndexedAgent, b: IndexedAgent) =>
      b.created_at - a.created_at || text(b.did, a.did);
    const direction = query.order === 'asc' ? -1 : 1;
    const compare =
      query.sort === 'relevance'
        ? (a: IndexedAgent, b: IndexedAgent) =>
            direction * ((scores.get(b.did) ?? 0) - (scores.get(a.did) ?? 0)) || byReputation(a, b)
        : query.sort === 'created_at'
          ? (a: IndexedAgent, b: IndexedAgent) => direction * byCreation(a, b)
          : (a: IndexedAgent, b: IndexedAgent) => direction * byReputation(a, b);
    return { dids: matches.sort(compare).map((agent) => agent.did), total: matches.length, scores };
  }
}

function buildCorpus(
  count: number,
  seed: number,
  tuning: Partial<RelevanceTuning> = {},
): { index: SearchIndex; reference: Reference; next: () => number } {
  const next = random(seed);
  const index = new SearchIndex(tuning);
  const reference = new Reference();
  const agents = Array.from({ length: count }, (_, position) => makeAgent(next, position));
  index.load(agents);
  for (const agent of agents) reference.apply(agent);
  return { index, reference, next };
}

const QUERIES: Omit<IndexQuery, 'sort' | 'order' | 'limit' | 'offset'>[] = [
  {},
  { terms: ['data'] },
  { terms: ['dat'] },
  { terms: ['translations'] },
  { terms: ['python', 'data'] },
  { terms: ['data', 'agent'] },
  // Several words with many matches: relevance summed as bitmaps (bit-sliced scores).
  { terms: ['data', 'd'] },
  { terms: ['data', 'a'] },
  { capability: 'translation' },
  { tags: ['fr', 'beta'] },
  { minReputation: 30 },
  // Few qualify: pages of another order take the reputation order's head out instead of walking.
  { minReputation: 50 },
  { terms: ['data'], capability: 'data_analysis' },
  { terms: ['data'], tags: ['python'] },
  { terms: ['data'], minReputation: 40 },
  { terms: ['chess'], capability: 'code_review', tags: ['fast'] },
  { terms: ['nothingmatches'] },
  { terms: ['a'] },
  { terms: ['data', '1'] },
  { terms: ['1a'] },
  { terms: ['agent', 'q'], tags: ['fr'] },
];

/** Queries of several whole words (each one stem), the kind whose relevance pages walk tiers. */
const MULTI_WORD_QUERIES: Omit<IndexQuery, 'sort' | 'order' | 'limit' | 'offset'>[] = [
  { terms: ['data', 'legal'] },
  { terms: ['legal', 'data'] },
  { terms: ['python', 'data'] },
  { terms: ['data', 'python', 'legal'] },
  { terms: ['data', 'agent', 'tools'] },
  { terms: ['data', 'translate'], capability: 'translation' },
  { terms: ['data', 'finance'], tags: ['finance', 'fast'] },
  { terms: ['data', 'speech'], minReputation: 20 },
  { terms: ['data', 'image', 'speech'], tags: ['beta'], minReputation: 10 },
  // Two words with one stem: each counts, so the stem's level counts twice.
  { terms: ['translate', 'translations'] },
];

/** Random inserts, reputation moves, word changes and deactivations, applied to both. */
function churn(index: SearchIndex, reference: Reference, next: () => number, steps: number): void {
  const dids = [...reference.agents.keys()];
  for (let step = 0; step < steps; step += 1) {
    const roll = next();
    let agent: IndexedAgent;
    if (roll < 0.3) {
      agent = makeAgent(next, 100_000 + step);
      dids.push(agent.did);
    } else {
      const did = dids[Math.floor(next() * dids.length)] as string;
      const current = reference.agents.get(did) ?? makeAgent(next, 200_000 + step);
      if (roll < 0.6)
        agent = {
          ...current,
          did,
          reputation_score: Math.floor(next() * 6) * 10,
          average_rating: 1 + Math.floor(next() * 4) * 3,
          total_reviews: current.total_reviews + 1,
        };
      else if (roll < 0.85)
        agent = { ...makeAgent(next, 300_000 + step), did, created_at: current.created_at };
      else agent = { ...current, did, status: 'deactivated' };
    }
    index.apply(agent);
    reference.apply(agent);
  }
}

function everySearch(): IndexQuery[] {
  const searches: IndexQuery[] = [];
  for (const base of QUERIES) {
    const sorts: IndexQuery['sort'][] =
      base.terms === undefined ? ['reputation', 'created_at'] : ['relevance', 'reputation', 'created_at'];
    for (const sort of sorts) {
      for (const order of ['desc', 'asc'] as const) {
        searches.push({ ...base, sort, order, limit: 20, offset: 0 });
      }
    }
  }
  return searches;
}

function assertSameAsReference(index: SearchIndex, reference: Reference, query: IndexQuery): void {
  const expected = reference.search(query);
  const label = JSON.stringify(query);
  for (const offset of [0, 20, 137, 4100]) {
    const page = index.search({ ...query, offset });
    assert.equal(page.total, expected.total, `total of ${label}`);
    assert.deepEqual(
      page.dids,
      expected.dids.slice(offset, offset + query.limit),
      `page at ${offset} of ${label}`,
    );
    assert.equal(page.more, offset + query.limit < expected.total, `more at ${offset} of ${label}`);
  }
  // Cursor paging through the first 300 matches gives the same sequence.
  const paged: string[] = [];
  let after: RankKey | undefined;
  for (let pages = 0; pages < 15; pages += 1) {
    const page = index.search({ ...query, offset: 0, after });
    paged.push(...page.dids);
    if (!page.more || page.last === undefined) break;
    after = page.last;
  }
  assert.deepEqual(paged, expected.dids.slice(0, paged.length), `cursor pages of ${label}`);
  assert.equal(paged.length, Math.min(expected.total, 300), `cursor pages of ${label} reach the end or 300`);
}

describe('search index (against a brute-force reference)', () => {
  test('every search shape, sort and order: totals, offset pages and cursor pages agree', () => {
    const { index, reference } = buildCorpus(6000, 7);
    assert.ok(
      reference.search({ terms: ['data'], sort: 'relevance', order: 'desc', limit: 1, offset: 0 }).total >
        4096,
    );
    assert.ok(
      reference.search({ terms: ['data', 'd'], sort: 'relevance', order: 'desc', limit: 1, offset: 0 })
        .total > 4096,
    );
    for (const query of everySearch()) assertSameAsReference(index, reference, query);
  });

  test('inserts, updates (reputation moves, words change) and removals are searched exactly', () => {
    const { index, reference, next } = buildCorpus(1500, 11);
    churn(index, reference, next, 600);
    assert.equal(index.size, reference.agents.size);
    for (const query of everySearch()) assertSameAsReference(index, reference, query);
  });

  test('several words ranked tier by tier from the level lists, through changes, with every filter', () => {
    // A low threshold sends every multi-word relevance page with more than 32 matches to the tiers; a
    // low budget sends some of them on to the bit-sliced sum, before the walk or part way through it.
    for (const tierIntersectionsMax of [40, 2]) {
      // Stems get level lists from 8 holders on: many cross that as agents register.
      const { index, reference, next } = buildCorpus(1500, 23, {
        scoreEveryMatchMax: 32,
        tierIntersectionsMax,
        levelListsFrom: 8,
      });
      const searchAll = () => {
        for (const base of MULTI_WORD_QUERIES) {
          for (const order of ['desc', 'asc'] as const) {
            assertSameAsReference(index, reference, {
              ...base,
              sort: 'relevance',
              order,
              limit: 20,
              offset: 0,
            });
          }
        }
      };
      // Right after the bulk load (its stems tracked at the end of it), then after changes.
      searchAll();
      assert.ok(index.relevanceRanking.levelLists > 0, 'pages ranked from level lists after the load');
      const afterLoad = index.relevanceRanking.levelLists;
      churn(index, reference, next, 400);
      searchAll();
      assert.ok(index.relevanceRanking.levelLists > afterLoad, 'pages ranked from level lists after changes');
      if (tierIntersectionsMax === 2)
        assert.ok(index.relevanceRanking.bitSliced > 0, 'a small budget sends pages to the bit-sliced sum');
    }
  });

  test("a last word that begins several stems is ranked from its fields, not from one stem's levels", () => {
    const index = new SearchIndex({ scoreEveryMatchMax: 0, levelListsFrom: 1 });
    const reference = new Reference();
    const words = ['trace', 'track', 'tracking tools', 'data'];
    for (let n = 0; n < 60; n += 1) {
      const agent: IndexedAgent = {
        did: `did:web:example.com:agent:t${n}`,
        name: `${words[n % 4] as string} ${n}`,
        description: `${words[(n >> 2) % 4] as string} data`,
        capabilities: JSON.stringify([{ type: 'general', description: words[(n >> 4) % 4] }]),
        tags: JSON.stringify(n % 3 === 0 ? ['trace'] : []),
        status: 'active',
        reputation_score: n % 7,
        average_rating: n % 3,
        total_reviews: n % 2,
        created_at: 1_700_000_000_000 + n,
      };
      index.apply(agent);
      reference.apply(agent);
    }
    for (const terms of [['trac'], ['data', 'trac'], ['trace'], ['data', 'track']]) {
      for (const order of ['desc', 'asc'] as const) {
        assertSameAsReference(index, reference, { terms, sort: 'relevance', order, limit: 20, offset: 0 });
      }
    }
    assert.ok(index.relevanceRanking.fieldLevels > 0, "['trac'] is ranked by its fields' levels");
    assert.ok(index.relevanceRanking.levelLists > 0, "['trace'] is ranked from its level lists");
  });

  test('a bulk load gives level lists to every stem held often enough, the last one seen included', () => {
    const index = new SearchIndex({ scoreEveryMatchMax: 0, levelListsFrom: 5 });
    const agent = (n: number, name: string): IndexedAgent => ({
      did: `did:web:example.com:agent:z${n}`,
      name,
      description: 'data tools',
      capabilities: JSON.stringify([{ type: 'general' }]),
      tags: '[]',
      status: 'active',
      reputation_score: n,
      average_rating: 0,
      total_reviews: 0,
      created_at: 1_700_000_000_000 + n,
    });
    // "zebra" is the last stem the load sees, and ten agents hold it.
    index.load(Array.from({ length: 20 }, (_, n) => agent(n, n < 10 ? 'data agent' : 'zebra data')));
    const page = index.search({ terms: ['zebra'], sort: 'relevance', order: 'desc', limit: 20, offset: 0 });
    assert.equal(page.total, 10);
    assert.equal(index.relevanceRanking.levelLists, 1, 'ranked from the level lists of the last stem');
  });

  test('a load is only for a new index: one that held agents, even all removed since, refuses it', () => {
    const { index, reference } = buildCorpus(10, 5);
    for (const did of reference.agents.keys()) {
      index.apply({ ...(reference.agents.get(did) as IndexedAgent), status: 'deactivated' });
    }
    assert.equal(index.size, 0);
    assert.throws(() => index.load([]), /a load is for a new index/);
  });

  test('the level lists follow an agent whose words move between fields', () => {
    const index = new SearchIndex({ scoreEveryMatchMax: 0, levelListsFrom: 2 });
    const reference = new Reference();
    const agent = (index: number, name: string, description: string, tags: string[]): IndexedAgent => ({
      did: `did:web:example.com:agent:${index}`,
      name,
      description,
      capabilities: JSON.stringify([{ type: 'general' }]),
      tags: JSON.stringify(tags),
      status: 'active',
      reputation_score: index,
      average_rating: 0,
      total_reviews: 0,
      created_at: 1_700_000_000_000 + index,
    });
    const moves = [
      agent(1, 'legal data', 'legal data tools', ['legal']),
      agent(2, 'data helper', 'legal tools', []),
      agent(3, 'other', 'legal data', ['data']),
      // Agent 1's words leave the name and the tags: its levels drop; agent 2's rise.
      agent(1, 'other', 'legal data', []),
      agent(2, 'legal data', 'legal data', ['legal', 'data']),
      { ...agent(3, 'other', 'legal data', ['data']), status: 'deactivated' },
    ];
    for (const move of moves) {
      index.apply(move);
      reference.apply(move);
      for (const order of ['desc', 'asc'] as const) {
        const query: IndexQuery = {
          terms: ['legal', 'data'],
          sort: 'relevance',
          order,
          limit: 20,
          offset: 0,
        };
        assert.deepEqual(index.search(query).dids, reference.search(query).dids, JSON.stringify(move));
      }
    }
    assert.ok(index.relevanceRanking.levelLists > 0, 'stems tracked as agents were applied');
  });

  test('the index part of service-record searches: counts, matching subsets in either order, first by DID', () => {
    const { index, reference, next } = buildCorpus(3000, 19);
    const all = [...reference.agents.keys()];
    // A record held by some agents (as the database would name them), plus DIDs the index never saw.
    const measured = [...all.filter(() => next() < 0.2), 'did:web:example.com:agent:unknown'];
    for (const base of QUERIES) {
      const label = JSON.stringify(base);
      const expected = reference.search({ ...base, sort: 'reputation', order: 'desc', limit: 1, offset: 0 });
      assert.equal(index.count(base), expected.total, `count of ${label}`);
      const matching = new Set(expected.dids);
      assert.deepEqual(
        index.keepMatching(base, measured),
        measured.filter((did) => matching.has(did)),
        `kept in the given order: ${label}`,
      );
      const sorts: IndexQuery['sort'][] =
        base.terms === undefined ? ['reputation', 'created_at'] : ['relevance', 'reputation', 'created_at'];
      for (const sort of sorts) {
        for (const order of ['desc', 'asc'] as const) {
          const full = reference.search({ ...base, sort, order, limit: 1, offset: 0 }).dids;
          const inMeasured = new Set(measured);
          assert.deepEqual(
            index.keepMatching(base, measured, { sort, order }),
            full.filter((did) => inMeasured.has(did)),
            `kept in ${sort} ${order}: ${label}`,
          );
        }
      }
      const except = new Set(measured);
      const byDid = expected.dids.filter((did) => !except.has(did)).sort();
      for (const count of [1, 25, 4000]) {
        assert.deepEqual(
          index.firstMatchingByDid(base, count, except),
          byDid.slice(0, count),
          `first ${count} by DID: ${label}`,
        );
      }
    }
  });

  test('a cursor keeps its place while agents are inserted before and after it', () => {
    const { index, reference, next } = buildCorpus(800, 3);
    const query: IndexQuery = { terms: ['data'], sort: 'relevance', order: 'desc', limit: 25, offset: 0 };
    const before = new Set(reference.search(query).dids);
    const seen: string[] = [];
    let after: RankKey | undefined;
    for (let page = 0; ; page += 1) {
      const result = index.search({ ...query, after });
      seen.push(...result.dids);
      // New agents land everywhere in the order, including before the cursor.
      for (let added = 0; added < 10; added += 1) {
        const agent = makeAgent(next, 500_000 + page * 10 + added);
        index.apply(agent);
        reference.apply(agent);
      }
      if (!result.more || result.last === undefined) break;
      after = result.last;
    }
    assert.equal(new Set(seen).size, seen.length, 'no agent twice');
    for (const did of before) assert.ok(seen.includes(did), `${did}, there from the start, was not skipped`);
  });
});
