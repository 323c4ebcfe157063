import type { Bitmap, BitmapScope } from './bitmap.js';
import type { RelevanceContext } from './relevance-context.js';
import type { IndexPage, IndexQuery } from './model.js';
import { FIELDS, FIELD_WEIGHTS } from './text.js';
import { topK } from './top-k.js';
import { keepWhere } from './typed-arrays.js';

/**
 * Few matches (or a minimum reputation, which the other ways do not take): every match is scored, and
 * the page is the best of them by a bounded heap.
 */
export function everyMatchPage(
  searchIndex: RelevanceContext,
  scope: BitmapScope,
  query: IndexQuery,
  matches: Bitmap,
  fieldHits: Bitmap[][],
  total: number,
  skip: number,
  take: number,
): IndexPage {
  const direction = query.order === 'asc' ? -1 : 1;
  // Score every match: each field's weight goes to the matches that hold the word there. A field
  // most matches hold is counted the other way round (every match starts with its weight, those
  // without it lose it again), so no list walked is longer than half the matches.
  const lists: { hit: Bitmap; weight: number; mostHold: boolean }[] = [];
  let base = 0;
  let best = 0;
  for (const hits of fieldHits) {
    hits.forEach((hit, field) => {
      const held = hit.andCardinality(matches);
      if (held === 0) return;
      const weight = FIELD_WEIGHTS[FIELDS[field] as (typeof FIELDS)[number]];
      const mostHold = held * 2 > matches.size;
      best += weight;
      if (mostHold) base += weight;
      lists.push({ hit, weight, mostHold });
    });
  }
  const scores = searchIndex.scores;
  const candidates = matches.toUint32Array(searchIndex.candidatesBuffer);
  for (let index = 0; index < candidates.length; index += 1) scores[candidates[index] as number] = base;
  for (const { hit, weight, mostHold } of lists) {
    const walked = mostHold ? scope.andNot(matches, hit) : scope.and(hit, matches);
    const slots = walked.toUint32Array(searchIndex.hitsBuffer);
    const change = mostHold ? -weight : weight;
    for (let index = 0; index < slots.length; index += 1) {
      const slot = slots[index] as number;
      scores[slot] = (scores[slot] as number) + change;
    }
  }
  const compare = (a: number, b: number) =>
    direction * ((scores[b] as number) - (scores[a] as number)) ||
    searchIndex.byReputation.label(a) - searchIndex.byReputation.label(b);
  const after =
    query.after === undefined ? undefined : searchIndex.placeProbe(query.after, query.after.score);
  const minimum = query.minReputation;
  // Scores are small integers: count the eligible matches per score, and hand the heap only those
  // at or beyond the score where the page ends.
  const perScore = new Int32Array(best + 1);
  let eligibleCount = 0;
  for (let index = 0; index < candidates.length; index += 1) {
    const slot = candidates[index] as number;
    if (minimum !== undefined && (searchIndex.reputation[slot] as number) < minimum) continue;
    if (after !== undefined && compare(slot, after) <= 0) continue;
    candidates[eligibleCount++] = slot;
    perScore[scores[slot] as number] = (perScore[scores[slot] as number] as number) + 1;
  }
  const wanted = skip + take;
  let boundary = direction === 1 ? best : 0;
  for (let seen = 0; ; boundary -= direction) {
    seen += perScore[boundary] as number;
    if (seen >= wanted || boundary === (direction === 1 ? 0 : best)) break;
  }
  const contenders = keepWhere(candidates.subarray(0, eligibleCount), (slot) =>
    direction === 1 ? (scores[slot] as number) >= boundary : (scores[slot] as number) <= boundary,
  );
  const taken = topK(contenders, wanted, compare).slice(skip);
  return searchIndex.page(taken, query, total, (slot) => scores[slot] as number);
}
