import type { Bitmap, BitmapScope } from './bitmap.js';
import type { Tier } from './relevance-tiers.js';
import type { IndexQuery } from './model.js';
import { LEVEL_SCORES, MASKS_OF_LEVEL } from './word-levels.js';

/**
 * One word that begins several stems, many matches: the matches fall into at most 15 levels by
 * which fields hold the word, computed from its field lists (level lists are kept per stem).
 */
export function oneWordTiers(scope: BitmapScope, query: IndexQuery, matches: Bitmap, hits: Bitmap[]): Tier[] {
  const inField = hits.map((hit) => scope.and(hit, matches));
  const levels = LEVEL_SCORES.map((score, level) => ({ score, masks: MASKS_OF_LEVEL[level] as number[] }));
  if (query.order !== 'asc') levels.reverse();
  return levels.map(({ score, masks }) => ({
    score,
    members: () =>
      scope.orMany(
        masks.map((mask) => {
          const held = inField.filter((_, index) => mask & (1 << index));
          const missing = inField.filter((_, index) => !(mask & (1 << index)));
          const all = scope.intersectAll(held);
          return missing.length === 0 ? all : scope.andNot(all, scope.orMany(missing));
        }),
      ),
  }));
}
