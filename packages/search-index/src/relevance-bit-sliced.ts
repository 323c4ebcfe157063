import { BitSlicedScores } from './bit-sliced-scores.js';
import type { Bitmap, BitmapScope } from './bitmap.js';
import type { RelevanceContext } from './relevance-context.js';
import { PROBE_SLOT as PROBE } from './string-table.js';
import type { IndexPage, IndexQuery } from './model.js';
import { FIELDS, FIELD_WEIGHTS } from './text.js';

/**
 * Several words, many matches: the scores are summed as bitmaps (bit-sliced, see
 * BitSlicedScores), and the page is cut from the top score down: the few matches that score better
 * than the page's last are sorted, the tier that shares its score is taken in reputation order.
 * A cursor first finishes its own tier (after its agent), then continues below (or above) it.
 */
export function bitSlicedRelevancePage(
  searchIndex: RelevanceContext,
  scope: BitmapScope,
  query: IndexQuery,
  matches: Bitmap,
  fieldHits: Bitmap[][],
  total: number,
  skip: number,
  take: number,
): IndexPage {
  const scores = new BitSlicedScores(scope);
  // Agents outside the matches may carry scores too (every read below starts from the matches), so
  // a list is cut down to the matches only when that makes it much smaller: each cut is an operation.
  for (const hits of fieldHits) {
    hits.forEach((hit, field) => {
      const members = hit.size > matches.size * 2 ? scope.and(hit, matches) : hit;
      scores.add(members, FIELD_WEIGHTS[FIELDS[field] as (typeof FIELDS)[number]]);
    });
  }
  const lowestFirst = query.order === 'asc';
  const inReputationOrder = (members: Bitmap, from: number, count: number, after?: number) =>
    searchIndex.pick({
      matches: members,
      order: searchIndex.byReputation,
      reverse: false,
      skip: from,
      take: count,
      after,
      minReputation: undefined,
      stopBelowMinimum: true,
    });
  const taken: { slot: number; score: number }[] = [];
  let rest = matches;
  const cursor = query.after;
  if (cursor !== undefined) {
    const probe = searchIndex.placeProbe(cursor, cursor.score);
    const score = searchIndex.scores[PROBE] as number;
    const { below, equal, above } = scores.split(matches, score);
    for (const slot of inReputationOrder(equal, 0, take, probe)) taken.push({ slot, score });
    rest = lowestFirst ? above : below;
  }
  const need = take - taken.length;
  if (need > 0 && !rest.isEmpty) {
    const { better, tier, score } = scores.best(rest, skip + need, lowestFirst);
    scores.writeScores(better, searchIndex.scores);
    const direction = lowestFirst ? -1 : 1;
    const sorted = Array.from(better.toUint32Array()).sort(
      (a, b) =>
        direction * ((searchIndex.scores[b] as number) - (searchIndex.scores[a] as number)) ||
        searchIndex.byReputation.label(a) - searchIndex.byReputation.label(b),
    );
    for (const slot of sorted.slice(skip, skip + need))
      taken.push({ slot, score: searchIndex.scores[slot] as number });
    const fromTier = need - Math.max(0, Math.min(need, sorted.length - skip));
    if (fromTier > 0) {
      for (const slot of inReputationOrder(tier, Math.max(0, skip - sorted.length), fromTier))
        taken.push({ slot, score });
    }
  }
  return searchIndex.scoredPage(taken, query, total);
}
