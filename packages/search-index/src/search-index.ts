import { AgentSlots } from './agent-slots.js';
import type { Bitmap, BitmapScope } from './bitmap.js';
import { withMatches } from './filter-matches.js';
import { countAtLeast, page, pick, scoredPage, sortedPage, tieredPage } from './paging.js';
import { bitSlicedRelevancePage } from './relevance-bit-sliced.js';
import type { Matches, RelevanceContext } from './relevance-context.js';
import { everyMatchPage } from './relevance-every-match.js';
import { oneWordTiers } from './relevance-field-levels.js';
import { levelListsPage } from './relevance-level-lists.js';
import { FIELDS, FIELD_WEIGHTS } from './text.js';
import { topK } from './top-k.js';
import { keepWhere } from './typed-arrays.js';
import type {
  IndexedAgent,
  IndexFilters,
  IndexPage,
  IndexQuery,
  IndexSort,
  RelevanceTuning,
} from './model.js';

export type {
  IndexedAgent,
  IndexFilters,
  IndexPage,
  IndexQuery,
  IndexSort,
  RankKey,
  RelevanceTuning,
} from './model.js';

const DEFAULT_TUNING: RelevanceTuning = {
  scoreEveryMatchMax: 4096,
  tierIntersectionsMax: 40,
  // Tiers are walked only for more matches than scoreEveryMatchMax, so a stem held fewer times never needs them.
  levelListsFrom: 4096,
};
/** Most words a relevance page walks tiers for (the tiers are combinations of one level per word). */
const TIERED_WORDS_MAX = 3;

/**
 * The search index of one registry process: the active agents' words (per field), capability types
 * and tags as compressed bitmaps of slot numbers, and two orders (reputation, creation) kept sorted
 * as agents change. It holds no text or profile: a search returns DIDs, and the caller reads those
 * rows from the database. Fed by the change feed (the server's search/search-follower.ts), so every node's index converges.
 *
 * A search intersects bitmaps for the filters (exact total: a bitmap's size), then takes the page in
 * order: by walking the sort order and testing membership, when matches are dense enough that the
 * page is found early, else by taking the matches out and keeping the best (a bounded heap).
 * Relevance: a word found in the name counts 10, in a capability or the tags 5, in the description 2,
 * summed over fields and words; ties go to the reputation order. Relevance pages with many matches
 * are taken tier by tier from per-word level lists (relevance-tiers.ts), so no match is scored one by
 * one and the page stops when it is full.
 *
 * The agents and their postings are kept in agent-slots.ts, the filters become bitmaps in
 * filter-matches.ts, and pages (orders, cursors, offsets) are taken in paging.ts; this class chooses
 * how each search is ranked.
 */
export class SearchIndex {
  /**
   * How many relevance pages each way has ranked since the index was made: tiers of level lists,
   * tiers of one word's field levels, the bit-sliced sum, or every match scored. The ways give the
   * same pages, so only this tells which one ran (the tests read it).
   */
  readonly relevanceRanking = { levelLists: 0, fieldLevels: 0, bitSliced: 0, everyMatch: 0 };
  private readonly tuning: RelevanceTuning;
  private readonly slots: AgentSlots;

  constructor(tuning: Partial<RelevanceTuning> = {}) {
    this.tuning = { ...DEFAULT_TUNING, ...tuning };
    this.slots = new AgentSlots(this.tuning.levelListsFrom);
  }

  get size(): number {
    return this.slots.live.size;
  }

  /** Adds, replaces or (when not active) removes an agent. */
  apply(agent: IndexedAgent): void {
    this.slots.apply(agent);
  }

  /** Bulk form of `apply` for a fresh index: orders are sorted once at the end. */
  load(agents: Iterable<IndexedAgent>): void {
    this.beginLoad();
    this.loadBatch(agents);
    this.endLoad();
  }

  /**
   * A fresh index loaded batch by batch (the follower reads the database in pages), so that no more
   * than a batch of rows is alive at once: the whole table as objects would grow the heap, and the
   * process's memory, far past what the index keeps.
   */
  beginLoad(): void {
    this.slots.beginLoad();
  }

  loadBatch(agents: Iterable<IndexedAgent>): void {
    this.slots.loadBatch(agents);
  }

  endLoad(): void {
    this.slots.endLoad();
  }

  search(query: IndexQuery): IndexPage {
    return withMatches(this.slots, query, (scope, found) => {
      if (query.sort !== 'relevance' || found.matches === undefined || found.fieldHits.length === 0)
        return sortedPage(this.slots, query, found.matches);
      return this.relevancePage(scope, query, { ...found, matches: found.matches });
    });
  }

  // --- the index's part of searches the database completes (the service record) ---------------

  /** How many agents match the filters. */
  count(filters: IndexFilters): number {
    return withMatches(this.slots, filters, (_, { matches }) =>
      countAtLeast(this.slots, matches, filters.minReputation),
    );
  }

  /**
   * Those of `dids` that match the filters: in the order given, or, with `sort`, in that order of the
   * index (the same order `search` pages through).
   */
  keepMatching(
    filters: IndexFilters,
    dids: readonly string[],
    sort?: { sort: IndexSort; order: 'asc' | 'desc' },
  ): string[] {
    const slots = this.slots;
    return withMatches(slots, filters, (_, { matches, fieldHits }) => {
      const kept: number[] = [];
      for (const did of dids) {
        const slot = slots.dids.slotOf(did);
        if (slot === undefined || (matches !== undefined && !matches.has(slot))) continue;
        if (filters.minReputation !== undefined && (slots.reputation[slot] as number) < filters.minReputation)
          continue;
        kept.push(slot);
      }
      if (sort !== undefined) kept.sort(this.comparator(sort.sort, sort.order, fieldHits, kept));
      return kept.map((slot) => slots.dids.get(slot));
    });
  }

  /** The first `count` agents that match the filters, in ascending DID order, leaving out `except`. */
  firstMatchingByDid(filters: IndexFilters, count: number, except: ReadonlySet<string>): string[] {
    const slots = this.slots;
    return withMatches(slots, filters, (_, { matches }) => {
      const minimum = filters.minReputation;
      const left = new Set<number>();
      for (const did of except) {
        const slot = slots.dids.slotOf(did);
        if (slot !== undefined) left.add(slot);
      }
      const eligible = keepWhere(
        (matches ?? slots.live).toUint32Array(slots.candidatesBuffer),
        (slot) => !left.has(slot) && (minimum === undefined || (slots.reputation[slot] as number) >= minimum),
      );
      return topK(eligible, count, (a, b) => slots.dids.compare(a, b)).map((slot) => slots.dids.get(slot));
    });
  }

  /** The order `search` pages in, for a few slots: relevance is scored for each of them alone. */
  private comparator(
    sort: IndexSort,
    order: 'asc' | 'desc',
    fieldHits: Bitmap[][],
    kept: readonly number[],
  ): (a: number, b: number) => number {
    const { byCreation, byReputation } = this.slots;
    const direction = order === 'asc' ? -1 : 1;
    if (sort === 'created_at') return (a, b) => direction * byCreation.compareSlots(a, b);
    if (sort === 'reputation' || fieldHits.length === 0)
      return (a, b) => direction * byReputation.compareSlots(a, b);
    const scores = new Map<number, number>();
    for (const slot of kept) {
      let score = 0;
      for (const hits of fieldHits) {
        hits.forEach((hit, field) => {
          if (hit.has(slot)) score += FIELD_WEIGHTS[FIELDS[field] as (typeof FIELDS)[number]];
        });
      }
      scores.set(slot, score);
    }
    // As in relevancePage: ties go to the better reputation in either direction.
    return (a, b) =>
      direction * ((scores.get(b) as number) - (scores.get(a) as number)) || byReputation.compareSlots(a, b);
  }

  // --- relevance ------------------------------------------------------------------------------

  private relevancePage(
    scope: BitmapScope,
    query: IndexQuery,
    found: Matches & { matches: Bitmap },
  ): IndexPage {
    const { matches, fieldHits } = found;
    const total = countAtLeast(this.slots, matches, query.minReputation);
    const skip = query.after === undefined ? query.offset : 0;
    const take = query.limit + 1;
    if (matches.size > this.tuning.scoreEveryMatchMax && fieldHits.length <= TIERED_WORDS_MAX) {
      const levelPage = levelListsPage(this.relevanceContext(), scope, query, found, total, skip, take);
      if (levelPage !== undefined) {
        this.relevanceRanking.levelLists += 1;
        return levelPage;
      }
    }
    const single = fieldHits.length === 1 ? fieldHits[0] : undefined;
    if (single !== undefined && matches.size > this.tuning.scoreEveryMatchMax) {
      this.relevanceRanking.fieldLevels += 1;
      const tiers = oneWordTiers(scope, query, matches, single);
      return tieredPage(this.slots, query, tiers, total, skip, take);
    }
    if (matches.size > this.tuning.scoreEveryMatchMax && query.minReputation === undefined) {
      this.relevanceRanking.bitSliced += 1;
      return bitSlicedRelevancePage(
        this.relevanceContext(),
        scope,
        query,
        matches,
        fieldHits,
        total,
        skip,
        take,
      );
    }
    this.relevanceRanking.everyMatch += 1;
    return everyMatchPage(this.relevanceContext(), scope, query, matches, fieldHits, total, skip, take);
  }

  /** What the relevance strategies read and call of the index, for the search under way. */
  private relevanceContext(): RelevanceContext {
    const slots = this.slots;
    return {
      tuning: this.tuning,
      levelLists: slots.levelLists,
      scores: slots.scores,
      reputation: slots.reputation,
      candidatesBuffer: slots.candidatesBuffer,
      hitsBuffer: slots.hitsBuffer,
      byReputation: slots.byReputation,
      pick: (options) => pick(slots, options),
      placeProbe: (key, score) => slots.placeProbe(key, score),
      page: (taken, query, total, scoreOf) => page(slots, taken, query, total, scoreOf),
      scoredPage: (taken, query, total) => scoredPage(slots, taken, query, total),
      tieredPage: (query, tiers, total, skip, take) => tieredPage(slots, query, tiers, total, skip, take),
    };
  }
}
