import type { Bitmap, BitmapScope } from './bitmap.js';
import type { Matches, RelevanceContext } from './relevance-context.js';
import { relevanceTiers, TierWalkTooLong, type WordLevels } from './relevance-tiers.js';
import type { IndexPage, IndexQuery } from './model.js';
import { LEVEL_SCORES } from './word-levels.js';

/**
 * One to three words, many matches: tiers from the index's level lists (see relevance-tiers.ts).
 * Undefined when a word is not one stem (a last word that begins several has no level lists) or
 * when the tiers would cost more than scoring every match.
 */
export function levelListsPage(
  searchIndex: RelevanceContext,
  scope: BitmapScope,
  query: IndexQuery,
  found: Matches & { matches: Bitmap },
  total: number,
  skip: number,
  take: number,
): IndexPage | undefined {
  const words: WordLevels[] = [];
  for (const [index, stemId] of found.stemIds.entries()) {
    const levels =
      stemId === undefined
        ? undefined
        : searchIndex.levelLists.wordLevels(scope, stemId, found.fieldHits[index] as Bitmap[]);
    if (levels === undefined) return undefined;
    words.push(levels);
  }
  const tiers = relevanceTiers({
    scope,
    words,
    scores: LEVEL_SCORES,
    within: found.filtered ? found.matches : undefined,
    lowestFirst: query.order === 'asc',
    wanted: skip + take,
    intersectionsMax: searchIndex.tuning.tierIntersectionsMax,
  });
  if (tiers === undefined) return undefined;
  try {
    return searchIndex.tieredPage(query, tiers, total, skip, take);
  } catch (error) {
    if (error instanceof TierWalkTooLong) return undefined;
    throw error;
  }
}
