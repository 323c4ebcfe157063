import type { Bitmap, BitmapScope } from './bitmap.js';

/** One query word's agents by level (see word-levels.ts), by position in the level scores. */
export interface WordLevels {
  /** At least as many agents as the level holds, known without computing the level. */
  bound(level: number): number;
  members(level: number): Bitmap;
}

/** The agents of a page that score `score`, computed only when the page reaches them. */
export interface Tier {
  score: number;
  members(): Bitmap;
}

/**
 * The tiers of a relevance order over one to three words, best first (or worst first with `lowestFirst`):
 * a tier is the agents whose levels, word by word, sum to its score, that is the union of the
 * intersections of one level per word. Tiers are found best first from the index's level lists, so a
 * page that fills within the first tiers never scores the other matches: its cost follows the page,
 * not the registry (the impact-ordered lists of Anh and Moffat, as bitmaps). Undefined when the walk
 * would cost more than summing every match: the caller sums instead.
 */
export function relevanceTiers(options: {
  scope: BitmapScope;
  words: readonly WordLevels[];
  scores: readonly number[];
  /** The other filters' agents, when there are any (the words' own levels imply the words). */
  within: Bitmap | undefined;
  lowestFirst: boolean;
  /** How many agents the page reads through from its first tier (offset plus page plus one). */
  wanted: number;
  /**
   * Most intersections the walk may make: past it, summing every match (bit-sliced) costs less. A
   * walk the bounds say would pass it is not begun; one that passes it anyway (the bounds are only
   * bounds) stops at twice it.
   */
  intersectionsMax: number;
}): Tier[] | undefined {
  const { scope, words, scores, within, lowestFirst, wanted, intersectionsMax } = options;
  const combinations = new Map<number, number[][]>();
  const bounds = new Map<number, number>();
  const walk = (word: number, levels: number[], score: number, bound: number): void => {
    if (bound === 0) return;
    if (word === words.length) {
      const atScore = combinations.get(score);
      if (atScore === undefined) combinations.set(score, [levels]);
      else atScore.push(levels);
      bounds.set(score, (bounds.get(score) ?? 0) + bound);
      return;
    }
    const levelsOfWord = words[word] as WordLevels;
    scores.forEach((levelScore, level) =>
      walk(word + 1, [...levels, level], score + levelScore, Math.min(bound, levelsOfWord.bound(level))),
    );
  };
  walk(0, [], 0, within?.size ?? Number.POSITIVE_INFINITY);
  const order = [...combinations.keys()].sort((a, b) => (lowestFirst ? a - b : b - a));
  // Each combination costs an intersection. The bounds are upper bounds of the tiers' sizes, so this
  // counts the fewest intersections the page can need: a walk that needs more is not begun.
  let planned = 0;
  let reach = 0;
  for (const score of order) {
    if (reach >= wanted) break;
    planned += (combinations.get(score) as number[][]).length;
    reach += bounds.get(score) as number;
  }
  if (planned > intersectionsMax) return undefined;
  let made = 0;
  return order.map((score) => ({
    score,
    members: () => {
      const parts = (combinations.get(score) as number[][]).map((levels) => {
        made += 1;
        if (made > intersectionsMax * 2) throw new TierWalkTooLong();
        const sets = levels.map((level, word) => (words[word] as WordLevels).members(level));
        return scope.intersectAll(within === undefined ? sets : [...sets, within]);
      });
      return scope.orMany(parts);
    },
  }));
}

/** A tier walk that went on past its budget (bounds are only bounds): the caller sums instead. */
export class TierWalkTooLong extends Error {
  constructor() {
    super('relevance tiers: the walk went past its budget');
  }
}
