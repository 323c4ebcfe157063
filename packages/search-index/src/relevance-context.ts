import type { Bitmap } from './bitmap.js';
import type { Tier } from './relevance-tiers.js';
import type { IndexPage, IndexQuery, RankKey, RelevanceTuning } from './model.js';
import type { SortedOrder } from './sorted-order.js';
import type { WordLevelLists } from './word-level-lists.js';

/** The matches of a search's filters, as the index computes them (bitmaps live until the search ends). */
export interface Matches {
  /** Every live agent when undefined (no filter but the minimum reputation). */
  matches: Bitmap | undefined;
  /** Per query word, per field: the agents holding the word there (for relevance). */
  fieldHits: Bitmap[][];
  /** Per query word, its stem's id when the word is one stem (a last word may begin several). */
  stemIds: (number | undefined)[];
  /** Whether a capability or tag filter narrowed the matches. */
  filtered: boolean;
}

export interface PickOptions {
  matches: Bitmap | undefined;
  order: SortedOrder;
  reverse: boolean;
  skip: number;
  take: number;
  after: number | undefined;
  minReputation: number | undefined;
  /** `order` is the reputation order: agents below the minimum are its tail, never walked. */
  stopBelowMinimum: boolean;
}

/**
 * What a relevance strategy (one file each: level lists, one word's field levels, bit-sliced sum,
 * every match scored) reads and calls of the SearchIndex during one search; the index chooses the
 * strategy and owns the slots, orders and pages.
 */
export interface RelevanceContext {
  readonly tuning: RelevanceTuning;
  readonly levelLists: WordLevelLists;
  /** Per slot, scratch for scores; slot PROBE_SLOT holds a cursor's. */
  readonly scores: Int32Array;
  readonly reputation: Float64Array;
  readonly candidatesBuffer: Uint32Array;
  readonly hitsBuffer: Uint32Array;
  readonly byReputation: SortedOrder;
  pick(options: PickOptions): number[];
  placeProbe(key: RankKey, score: number): number;
  page(taken: number[], query: IndexQuery, total: number, scoreOf: (slot: number) => number): IndexPage;
  scoredPage(taken: { slot: number; score: number }[], query: IndexQuery, total: number): IndexPage;
  tieredPage(query: IndexQuery, tiers: Tier[], total: number, skip: number, take: number): IndexPage;
}
