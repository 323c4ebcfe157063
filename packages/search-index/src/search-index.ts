import { agentIndexEntries } from './agent-entries.js';
import { StringTable, PROBE_SLOT } from './string-table.js';
import { Bitmap, BitmapScope } from './bitmap.js';
import { CAPABILITY_SPACE, PostingLists, SlotPostingIds, TAG_SPACE } from './postings.js';
import { SortedOrder } from './sorted-order.js';
import { FIELDS, FIELD_WEIGHTS, indexWords, stemWord } from './text.js';
import { topK, topKByKey } from './top-k.js';
import { Vocabulary } from './vocabulary.js';
import { keepWhere, withRoom } from './typed-arrays.js';
import type { Tier } from './relevance-tiers.js';
import type { Matches, PickOptions, RelevanceContext } from './relevance-context.js';
import { bitSlicedRelevancePage } from './relevance-bit-sliced.js';
import { everyMatchPage } from './relevance-every-match.js';
import { oneWordTiers } from './relevance-field-levels.js';
import { levelListsPage } from './relevance-level-lists.js';
import { WordLevelLists } from './word-level-lists.js';

/** What the index needs of an agent row (agents table columns). */
export interface IndexedAgent {
  did: string;
  name: string;
  description: string | null;
  /** JSON text, as stored. */
  capabilities: string;
  /** JSON text, as stored. */
  tags: string;
  status: string;
  reputation_score: number;
  /** Break ties of the reputation order, so that equal scores put the better rated, then the more reviewed, first. */
  average_rating: number;
  total_reviews: number;
  created_at: number;
}

export type IndexSort = 'relevance' | 'reputation' | 'created_at';

/** Where a page ended: the keys of its last agent, so the next page starts strictly after it. */
export interface RankKey {
  did: string;
  reputation: number;
  averageRating: number;
  totalReviews: number;
  createdAt: number;
  /** Relevance score (relevance order only). */
  score: number;
}

export interface IndexQuery {
  /** Query words as fullTextTerms gives them; every one must match, the last also as a prefix. */
  terms?: readonly string[];
  /** Capability type in search-key form. */
  capability?: string;
  /** Any of these tags, in search-key form. */
  tags?: readonly string[];
  minReputation?: number;
  sort: IndexSort;
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
  /** Keyset paging: start after this agent (offset is then 0). */
  after?: RankKey;
}

/** The filters of a search that the index holds: what matches, without an order or a page. */
export type IndexFilters = Pick<IndexQuery, 'terms' | 'capability' | 'tags' | 'minReputation'>;

export interface IndexPage {
  dids: string[];
  total: number;
  /** Keys of the page's last agent. */
  last?: RankKey;
  /** Whether agents follow the page. */
  more: boolean;
}

/** Slot 0 is never an agent: it holds a cursor's keys so that comparators can place the cursor. */
const PROBE = PROBE_SLOT;
/** Where a search's way of ranking by relevance changes; tests lower them to take every way on a small corpus. */
export interface RelevanceTuning {
  /** Above this many matches, relevance is ranked tier by tier (or summed as bitmaps) instead of scoring every match. */
  scoreEveryMatchMax: number;
  /** Most intersections a page makes walking tiers of several words before it sums every match instead. */
  tierIntersectionsMax: number;
  /** How many times (summed over fields) a stem is held before the index keeps its level lists. */
  levelListsFrom: number;
}

const DEFAULT_TUNING: RelevanceTuning = {
  scoreEveryMatchMax: 4096,
  tierIntersectionsMax: 40,
  // Tiers are walked only for more matches than scoreEveryMatchMax, so a stem held fewer times never needs them.
  levelListsFrom: 4096,
};
/** Most words a relevance page walks tiers for (the tiers are combinations of one level per word). */
const TIERED_WORDS_MAX = 3;
/** Relative cost of testing one slot during a walk against taking one candidate out of a bitmap. */
const WALK_STEP_COST = 4;

/**
 * The search index of one registry process: the active agents' words (per field), capability types
 * and tags as compressed bitmaps of slot numbers, and two orders (reputation, creation) kept sorted
 * as agents change. It holds no text or profile: a search returns DIDs, and the caller reads those
 * rows from the database. Fed by the change feed (the server's search/follower.ts), so every node's index converges.
 *
 * A search intersects bitmaps for the filters (exact total: a bitmap's size), then takes the page in
 * order: by walking the sort order and testing membership, when matches are dense enough that the
 * page is found early, else by taking the matches out and keeping the best (a bounded heap).
 * Relevance: a word found in the name counts 10, in a capability or the tags 5, in the description 2,
 * summed over fields and words; ties go to the reputation order. Relevance pages with many matches
 * are taken tier by tier from per-word level lists (relevance-tiers.ts), so no match is scored one by
 * one and the page stops when it is full.
 */
export class SearchIndex {
  /**
   * How many relevance pages each way has ranked since the index was made: tiers of level lists,
   * tiers of one word's field levels, the bit-sliced sum, or every match scored. The ways give the
   * same pages, so only this tells which one ran (the tests read it).
   */
  readonly relevanceRanking = { levelLists: 0, fieldLevels: 0, bitSliced: 0, everyMatch: 0 };
  private readonly tuning: RelevanceTuning;
  private readonly levelLists: WordLevelLists;

  private capacity = 1024;
  private readonly dids = new StringTable();
  private reputation = new Float64Array(this.capacity);
  private averageRating = new Float64Array(this.capacity);
  private totalReviews = new Float64Array(this.capacity);
  private createdAt = new Float64Array(this.capacity);
  private scores = new Int32Array(this.capacity);
  private readonly postingsOfSlot = new SlotPostingIds();
  /** Reused for taking matches out of bitmaps, so a search allocates no large arrays. */
  private candidatesBuffer = new Uint32Array(1024);
  private hitsBuffer = new Uint32Array(1024);
  private readonly free: number[] = [];
  private nextSlot = 1;
  private readonly live = new Bitmap();
  /** While a bulk load runs: the slots loaded, made live at its end. */
  private loading = false;
  private loaded: number[] = [];

  private readonly postings = new PostingLists();
  private readonly vocabulary = new Vocabulary();

  private readonly byReputation = new SortedOrder(
    (a, b) =>
      (this.reputation[b] as number) - (this.reputation[a] as number) ||
      (this.averageRating[b] as number) - (this.averageRating[a] as number) ||
      (this.totalReviews[b] as number) - (this.totalReviews[a] as number) ||
      (this.createdAt[b] as number) - (this.createdAt[a] as number) ||
      this.dids.compare(b, a),
  );
  private readonly byCreation = new SortedOrder(
    (a, b) => (this.createdAt[b] as number) - (this.createdAt[a] as number) || this.dids.compare(b, a),
  );

  constructor(tuning: Partial<RelevanceTuning> = {}) {
    this.tuning = { ...DEFAULT_TUNING, ...tuning };
    this.levelLists = new WordLevelLists(this.postings, this.tuning.levelListsFrom);
  }

  get size(): number {
    return this.live.size;
  }

  /** Adds, replaces or (when not active) removes an agent. */
  apply(agent: IndexedAgent): void {
    const existing = this.dids.slotOf(agent.did);
    if (existing !== undefined) this.removeSlot(existing);
    if (agent.status !== 'active') return;
    const slot = this.allocate(agent.did);
    this.reputation[slot] = agent.reputation_score;
    this.averageRating[slot] = agent.average_rating;
    this.totalReviews[slot] = agent.total_reviews;
    this.createdAt[slot] = Number(agent.created_at);
    const ids = this.postingIdsOf(agent);
    for (const id of ids) this.postings.add(id, slot);
    this.postingsOfSlot.set(slot, ids);
    this.levelLists.added(slot, ids);
    this.live.add(slot);
    this.byReputation.insert(slot);
    this.byCreation.insert(slot);
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
    // Never held an agent: the level lists of stems once tracked would not be rebuilt by a load.
    if (this.nextSlot !== PROBE + 1 || this.loading)
      throw new Error('search index: a load is for a new index');
    this.loading = true;
    this.postings.beginBulk();
    this.vocabulary.beginBulk();
  }

  loadBatch(agents: Iterable<IndexedAgent>): void {
    if (!this.loading) throw new Error('search index: loadBatch() outside beginLoad()/endLoad()');
    for (const agent of agents) {
      if (agent.status !== 'active' || this.dids.has(agent.did)) continue;
      const slot = this.allocate(agent.did);
      this.reputation[slot] = agent.reputation_score;
      this.averageRating[slot] = agent.average_rating;
      this.totalReviews[slot] = agent.total_reviews;
      this.createdAt[slot] = Number(agent.created_at);
      const ids = this.postingIdsOf(agent);
      for (const id of ids) this.postings.add(id, slot);
      this.postingsOfSlot.set(slot, ids);
      this.loaded.push(slot);
    }
  }

  endLoad(): void {
    this.postings.endBulk();
    this.vocabulary.endBulk();
    this.levelLists.loaded(this.vocabulary.size);
    this.live.addMany(Uint32Array.from(this.loaded));
    this.loaded = [];
    this.loading = false;
    const slots = Int32Array.from(this.live.toUint32Array());
    this.byReputation.reset(slots);
    this.byCreation.reset(slots);
  }

  search(query: IndexQuery): IndexPage {
    return this.withMatches(query, (scope, found) => {
      if (query.sort !== 'relevance' || found.matches === undefined || found.fieldHits.length === 0)
        return this.sortedPage(query, found.matches);
      return this.relevancePage(scope, query, { ...found, matches: found.matches });
    });
  }

  // --- the index's part of searches the database completes (the service record) ---------------

  /** How many agents match the filters. */
  count(filters: IndexFilters): number {
    return this.withMatches(filters, (_, { matches }) => this.countAtLeast(matches, filters.minReputation));
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
    return this.withMatches(filters, (_, { matches, fieldHits }) => {
      const kept: number[] = [];
      for (const did of dids) {
        const slot = this.dids.slotOf(did);
        if (slot === undefined || (matches !== undefined && !matches.has(slot))) continue;
        if (filters.minReputation !== undefined && (this.reputation[slot] as number) < filters.minReputation)
          continue;
        kept.push(slot);
      }
      if (sort !== undefined) kept.sort(this.comparator(sort.sort, sort.order, fieldHits, kept));
      return kept.map((slot) => this.dids.get(slot));
    });
  }

  /** The first `count` agents that match the filters, in ascending DID order, leaving out `except`. */
  firstMatchingByDid(filters: IndexFilters, count: number, except: ReadonlySet<string>): string[] {
    return this.withMatches(filters, (_, { matches }) => {
      const minimum = filters.minReputation;
      const left = new Set<number>();
      for (const did of except) {
        const slot = this.dids.slotOf(did);
        if (slot !== undefined) left.add(slot);
      }
      const eligible = keepWhere(
        (matches ?? this.live).toUint32Array(this.candidatesBuffer),
        (slot) => !left.has(slot) && (minimum === undefined || (this.reputation[slot] as number) >= minimum),
      );
      return topK(eligible, count, (a, b) => this.dids.compare(a, b)).map((slot) => this.dids.get(slot));
    });
  }

  /** The order `search` pages in, for a few slots: relevance is scored for each of them alone. */
  private comparator(
    sort: IndexSort,
    order: 'asc' | 'desc',
    fieldHits: Bitmap[][],
    slots: readonly number[],
  ): (a: number, b: number) => number {
    const direction = order === 'asc' ? -1 : 1;
    if (sort === 'created_at') return (a, b) => direction * this.byCreation.compareSlots(a, b);
    if (sort === 'reputation' || fieldHits.length === 0)
      return (a, b) => direction * this.byReputation.compareSlots(a, b);
    const scores = new Map<number, number>();
    for (const slot of slots) {
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
      direction * ((scores.get(b) as number) - (scores.get(a) as number)) ||
      this.byReputation.compareSlots(a, b);
  }

  /** Runs `use` with the filters' matches; the bitmaps it computed are freed when it returns. */
  private withMatches<T>(filters: IndexFilters, use: (scope: BitmapScope, matches: Matches) => T): T {
    const scope = new BitmapScope();
    try {
      return use(scope, this.matchesIn(scope, filters));
    } finally {
      scope.dispose();
    }
  }

  private matchesIn(scope: BitmapScope, filters: IndexFilters): Matches {
    const words = filters.terms?.map(stemWord);
    const sets: Bitmap[] = [];
    if (filters.capability !== undefined)
      sets.push(this.postings.term(scope, CAPABILITY_SPACE, filters.capability));
    if (filters.tags !== undefined) sets.push(this.postings.anyTerm(scope, TAG_SPACE, filters.tags));
    const filtered = sets.length > 0;
    if (words === undefined || words.length === 0) {
      const matches = filtered ? scope.intersectAll(sets) : undefined;
      return { matches, fieldHits: [], stemIds: [], filtered };
    }
    // Every word but the last is one stem; the last is a prefix, and may begin several.
    const begun = this.vocabulary.withPrefix(words[words.length - 1] as string);
    const stemIds = words.map((word, index) =>
      index < words.length - 1 ? this.vocabulary.idOf(word) : begun.length === 1 ? begun[0] : undefined,
    );
    const fieldHits = words.map((word, index) =>
      index === words.length - 1 ? this.anyStemFieldHits(scope, begun) : this.wordFieldHits(scope, word),
    );
    const matches = scope.intersectAll([...fieldHits.map((hits) => scope.orMany(hits)), ...sets]);
    return { matches, fieldHits, stemIds, filtered };
  }

  // --- pages ---------------------------------------------------------------------------------

  private sortedPage(query: IndexQuery, matches: Bitmap | undefined): IndexPage {
    const order = query.sort === 'created_at' ? this.byCreation : this.byReputation;
    const total = this.countAtLeast(matches, query.minReputation);
    const after = query.after === undefined ? undefined : this.placeProbe(query.after, 0);
    const taken = this.pick({
      matches,
      order,
      reverse: query.order === 'asc',
      skip: query.after === undefined ? query.offset : 0,
      take: query.limit + 1,
      after,
      minReputation: query.minReputation,
      stopBelowMinimum: query.sort === 'reputation',
    });
    return this.page(taken, query, total, () => 0);
  }

  private relevancePage(
    scope: BitmapScope,
    query: IndexQuery,
    found: Matches & { matches: Bitmap },
  ): IndexPage {
    const { matches, fieldHits } = found;
    const total = this.countAtLeast(matches, query.minReputation);
    const skip = query.after === undefined ? query.offset : 0;
    const take = query.limit + 1;
    if (matches.size > this.tuning.scoreEveryMatchMax && fieldHits.length <= TIERED_WORDS_MAX) {
      const page = levelListsPage(this.relevanceContext(), scope, query, found, total, skip, take);
      if (page !== undefined) {
        this.relevanceRanking.levelLists += 1;
        return page;
      }
    }
    const single = fieldHits.length === 1 ? fieldHits[0] : undefined;
    if (single !== undefined && matches.size > this.tuning.scoreEveryMatchMax) {
      this.relevanceRanking.fieldLevels += 1;
      return this.tieredPage(query, oneWordTiers(scope, query, matches, single), total, skip, take);
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
    return {
      tuning: this.tuning,
      levelLists: this.levelLists,
      scores: this.scores,
      reputation: this.reputation,
      candidatesBuffer: this.candidatesBuffer,
      hitsBuffer: this.hitsBuffer,
      byReputation: this.byReputation,
      pick: (options) => this.pick(options),
      placeProbe: (key, score) => this.placeProbe(key, score),
      page: (taken, query, total, scoreOf) => this.page(taken, query, total, scoreOf),
      scoredPage: (taken, query, total) => this.scoredPage(taken, query, total),
      tieredPage: (query, tiers, total, skip, take) => this.tieredPage(query, tiers, total, skip, take),
    };
  }

  /**
   * A relevance page from tiers in page order: each tier in reputation order, until the page is
   * full. A cursor skips the tiers before its own and starts after its agent in its own.
   */
  private tieredPage(query: IndexQuery, tiers: Tier[], total: number, skip: number, take: number): IndexPage {
    const taken: { slot: number; score: number }[] = [];
    let remainingSkip = skip;
    const cursor = query.after;
    for (const tier of tiers) {
      if (taken.length >= take) break;
      const score = tier.score;
      if (cursor !== undefined && (query.order === 'asc' ? score < cursor.score : score > cursor.score))
        continue;
      const members = tier.members();
      const after =
        cursor !== undefined && cursor.score === score ? this.placeProbe(cursor, score) : undefined;
      const picked = this.pick({
        matches: members,
        order: this.byReputation,
        reverse: false,
        skip: remainingSkip,
        take: take - taken.length,
        after,
        minReputation: query.minReputation,
        stopBelowMinimum: true,
      });
      if (picked.length === 0 && remainingSkip > 0) {
        remainingSkip = Math.max(0, remainingSkip - this.countAtLeast(members, query.minReputation));
        continue;
      }
      remainingSkip = 0;
      for (const slot of picked) taken.push({ slot, score });
    }
    return this.scoredPage(taken, query, total);
  }

  /** A relevance page: the agents taken with their scores (the last one's goes into its cursor). */
  private scoredPage(taken: { slot: number; score: number }[], query: IndexQuery, total: number): IndexPage {
    const scoreOf = new Map(taken.map((entry) => [entry.slot, entry.score]));
    return this.page(
      taken.map((entry) => entry.slot),
      query,
      total,
      (slot) => scoreOf.get(slot) ?? 0,
    );
  }

  private page(
    taken: number[],
    query: IndexQuery,
    total: number,
    scoreOf: (slot: number) => number,
  ): IndexPage {
    const more = taken.length > query.limit;
    const slots = taken.slice(0, query.limit);
    const lastSlot = slots.at(-1);
    return {
      dids: slots.map((slot) => this.dids.get(slot)),
      total,
      more,
      last:
        lastSlot === undefined
          ? undefined
          : {
              did: this.dids.get(lastSlot),
              reputation: this.reputation[lastSlot] as number,
              averageRating: this.averageRating[lastSlot] as number,
              totalReviews: this.totalReviews[lastSlot] as number,
              createdAt: this.createdAt[lastSlot] as number,
              score: scoreOf(lastSlot),
            },
    };
  }

  /**
   * Up to `take` matches in `order` (from its end when `reverse`) after skipping `skip` (and after
   * `after`, a probe slot): walks `order` testing membership when matches are dense, else takes them
   * out and keeps the best.
   */
  private pick(options: PickOptions): number[] {
    const { matches, order, reverse, skip, take, after, minReputation } = options;
    // Only a minimum and another order (creation): the qualifying agents are the head of the
    // reputation order. When they are few, walking the other order would pass over many others to find
    // each one (at 1,000,000 agents a high minimum made this shape the slowest): take them out instead.
    const qualifying =
      matches === undefined && minReputation !== undefined && !options.stopBelowMinimum
        ? this.byReputation.firstAfter((slot) => (this.reputation[slot] as number) >= minReputation)
        : undefined;
    const count = matches !== undefined ? matches.size : (qualifying ?? this.live.size);
    if (count === 0 || take <= 0) return [];
    const wanted = skip + take;
    const walkSteps = (wanted * order.size) / count;
    if ((matches === undefined && qualifying === undefined) || walkSteps * WALK_STEP_COST < count) {
      const taken: number[] = [];
      let skipped = 0;
      // `order` is sorted in its natural direction; `reverse` walks it from the end.
      let index: number;
      if (!reverse)
        index = after === undefined ? 0 : order.firstAfter((slot) => order.compareSlots(slot, after) <= 0);
      else {
        let end =
          after === undefined ? order.size : order.firstAfter((slot) => order.compareSlots(slot, after) < 0);
        // Best reputation first, read from the worst end: begin at the last agent at the minimum.
        if (options.stopBelowMinimum && minReputation !== undefined) {
          end = Math.min(
            end,
            order.firstAfter((slot) => (this.reputation[slot] as number) >= minReputation),
          );
        }
        index = end - 1;
      }
      const step = reverse ? -1 : 1;
      for (; index >= 0 && index < order.size && taken.length < take; index += step) {
        const slot = order.at(index);
        if (matches !== undefined && !matches.has(slot)) continue;
        if (minReputation !== undefined && (this.reputation[slot] as number) < minReputation) {
          if (options.stopBelowMinimum && !reverse) break;
          continue;
        }
        if (skipped < skip) skipped += 1;
        else taken.push(slot);
      }
      return taken;
    }
    // Taken out: the best by the order's labels (read in the reverse direction when `reverse`).
    const labels = order.labelsBySlot();
    const direction = reverse ? -1 : 1;
    const afterLabel = after === undefined ? 0 : (labels[after] as number);
    const candidates =
      matches !== undefined ? matches.toUint32Array(this.candidatesBuffer) : this.reputationHead(count);
    const eligible =
      minReputation === undefined && after === undefined
        ? candidates
        : keepWhere(
            candidates,
            (slot) =>
              (minReputation === undefined || (this.reputation[slot] as number) >= minReputation) &&
              (after === undefined || direction * (labels[slot] as number) > direction * afterLabel),
          );
    return topKByKey(eligible, wanted, labels, direction).slice(skip);
  }

  /** The first `count` agents of the reputation order (the best), in the candidates buffer. */
  private reputationHead(count: number): Uint32Array {
    const head = this.candidatesBuffer.subarray(0, count);
    for (let position = 0; position < count; position += 1) head[position] = this.byReputation.at(position);
    return head;
  }

  /** How many of `matches` (every live agent when undefined) have at least `minimum` reputation. */
  private countAtLeast(matches: Bitmap | undefined, minimum: number | undefined): number {
    if (minimum === undefined) return matches === undefined ? this.live.size : matches.size;
    const qualifying = this.byReputation.firstAfter((slot) => (this.reputation[slot] as number) >= minimum);
    if (matches === undefined) return qualifying;
    if (matches.size <= qualifying) {
      let count = 0;
      for (const slot of matches.toUint32Array(this.hitsBuffer))
        if ((this.reputation[slot] as number) >= minimum) count += 1;
      return count;
    }
    let count = 0;
    for (let position = 0; position < qualifying; position += 1) {
      if (matches.has(this.byReputation.at(position))) count += 1;
    }
    return count;
  }

  private placeProbe(key: RankKey, score: number): number {
    this.dids.setProbe(key.did);
    this.reputation[PROBE] = key.reputation;
    this.averageRating[PROBE] = key.averageRating;
    this.totalReviews[PROBE] = key.totalReviews;
    this.createdAt[PROBE] = key.createdAt;
    // Scores are small integers; a cursor's is clamped so that an altered one cannot wrap around.
    this.scores[PROBE] = Math.max(-1, Math.min(Math.round(score), 2 ** 20));
    this.byReputation.labelProbe(PROBE);
    this.byCreation.labelProbe(PROBE);
    return PROBE;
  }

  // --- postings -------------------------------------------------------------------------------

  private postingIdsOf(agent: IndexedAgent): number[] {
    const entries = agentIndexEntries(agent);
    const ids: number[] = [];
    FIELDS.forEach((field, space) => {
      for (const stem of indexWords(entries.document[field]))
        ids.push(this.postings.wordListId(space, this.vocabulary.add(stem)));
    });
    for (const type of entries.capabilityTypes) ids.push(this.postings.termListId(CAPABILITY_SPACE, type));
    for (const tag of entries.tags) ids.push(this.postings.termListId(TAG_SPACE, tag));
    return ids;
  }

  /** Per field, the agents holding this exact stem. */
  private wordFieldHits(scope: BitmapScope, stem: string): Bitmap[] {
    const stemId = this.vocabulary.idOf(stem);
    return FIELDS.map((_, space) => this.postings.word(scope, space, stemId));
  }

  /** Per field, the agents holding any of the stems (those a last word begins). */
  private anyStemFieldHits(scope: BitmapScope, stemIds: readonly number[]): Bitmap[] {
    return FIELDS.map((_, space) => this.postings.anyWord(scope, space, stemIds));
  }

  // --- slots ----------------------------------------------------------------------------------

  private allocate(did: string): number {
    if (did === '') throw new Error('search index: an agent without a DID');
    const slot = this.free.pop() ?? this.nextSlot++;
    if (slot >= this.capacity) this.grow();
    this.dids.set(slot, did);
    return slot;
  }

  private removeSlot(slot: number): void {
    this.byReputation.remove(slot);
    this.byCreation.remove(slot);
    const ids = this.postingsOfSlot.get(slot);
    this.levelLists.removed(slot, ids);
    for (const id of ids) this.postings.remove(id, slot);
    this.postingsOfSlot.clear(slot);
    this.live.remove(slot);
    this.dids.delete(slot);
    this.free.push(slot);
  }

  private grow(): void {
    this.capacity *= 2;
    this.reputation = withRoom(this.reputation, this.capacity);
    this.averageRating = withRoom(this.averageRating, this.capacity);
    this.totalReviews = withRoom(this.totalReviews, this.capacity);
    this.createdAt = withRoom(this.createdAt, this.capacity);
    this.scores = withRoom(this.scores, this.capacity);
    this.candidatesBuffer = new Uint32Array(this.capacity);
    this.hitsBuffer = new Uint32Array(this.capacity);
  }
}
