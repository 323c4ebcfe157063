import type { AgentSlots } from './agent-slots.js';
import type { Bitmap } from './bitmap.js';
import type { PickOptions } from './relevance-context.js';
import type { Tier } from './relevance-tiers.js';
import type { IndexPage, IndexQuery } from './model.js';
import { topKByKey } from './top-k.js';
import { keepWhere } from './typed-arrays.js';

/** Relative cost of testing one slot during a walk against taking one candidate out of a bitmap. */
const WALK_STEP_COST = 4;

/** A page in the reputation or creation order (no relevance to rank by). */
export function sortedPage(slots: AgentSlots, query: IndexQuery, matches: Bitmap | undefined): IndexPage {
  const order = query.sort === 'created_at' ? slots.byCreation : slots.byReputation;
  const total = countAtLeast(slots, matches, query.minReputation);
  const after = query.after === undefined ? undefined : slots.placeProbe(query.after, 0);
  const taken = pick(slots, {
    matches,
    order,
    reverse: query.order === 'asc',
    skip: query.after === undefined ? query.offset : 0,
    take: query.limit + 1,
    after,
    minReputation: query.minReputation,
    stopBelowMinimum: query.sort === 'reputation',
  });
  return page(slots, taken, query, total, () => 0);
}

/**
 * A relevance page from tiers in page order: each tier in reputation order, until the page is
 * full. A cursor skips the tiers before its own and starts after its agent in its own.
 */
export function tieredPage(
  slots: AgentSlots,
  query: IndexQuery,
  tiers: Tier[],
  total: number,
  skip: number,
  take: number,
): IndexPage {
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
      cursor !== undefined && cursor.score === score ? slots.placeProbe(cursor, score) : undefined;
    const picked = pick(slots, {
      matches: members,
      order: slots.byReputation,
      reverse: false,
      skip: remainingSkip,
      take: take - taken.length,
      after,
      minReputation: query.minReputation,
      stopBelowMinimum: true,
    });
    if (picked.length === 0 && remainingSkip > 0) {
      remainingSkip = Math.max(0, remainingSkip - countAtLeast(slots, members, query.minReputation));
      continue;
    }
    remainingSkip = 0;
    for (const slot of picked) taken.push({ slot, score });
  }
  return scoredPage(slots, taken, query, total);
}

/** A relevance page: the agents taken with their scores (the last one's goes into its cursor). */
export function scoredPage(
  slots: AgentSlots,
  taken: { slot: number; score: number }[],
  query: IndexQuery,
  total: number,
): IndexPage {
  const scoreOf = new Map(taken.map((entry) => [entry.slot, entry.score]));
  return page(
    slots,
    taken.map((entry) => entry.slot),
    query,
    total,
    (slot) => scoreOf.get(slot) ?? 0,
  );
}

/** The page of the first `limit` slots taken (one more tells whether agents follow), with its last agent's keys. */
export function page(
  slots: AgentSlots,
  taken: number[],
  query: IndexQuery,
  total: number,
  scoreOf: (slot: number) => number,
): IndexPage {
  const more = taken.length > query.limit;
  const shown = taken.slice(0, query.limit);
  const lastSlot = shown.at(-1);
  return {
    dids: shown.map((slot) => slots.dids.get(slot)),
    total,
    more,
    last:
      lastSlot === undefined
        ? undefined
        : {
            did: slots.dids.get(lastSlot),
            reputation: slots.reputation[lastSlot] as number,
            averageRating: slots.averageRating[lastSlot] as number,
            totalReviews: slots.totalReviews[lastSlot] as number,
            createdAt: slots.createdAt[lastSlot] as number,
            score: scoreOf(lastSlot),
          },
  };
}

/**
 * Up to `take` matches in `order` (from its end when `reverse`) after skipping `skip` (and after
 * `after`, a probe slot): walks `order` testing membership when matches are dense, else takes them
 * out and keeps the best.
 */
export function pick(slots: AgentSlots, options: PickOptions): number[] {
  const { matches, order, reverse, skip, take, after, minReputation } = options;
  // Only a minimum and another order (creation): the qualifying agents are the head of the
  // reputation order. When they are few, walking the other order would pass over many others to find
  // each one (at 1,000,000 agents a high minimum made this shape the slowest): take them out instead.
  const qualifying =
    matches === undefined && minReputation !== undefined && !options.stopBelowMinimum
      ? slots.byReputation.firstAfter((slot) => (slots.reputation[slot] as number) >= minReputation)
      : undefined;
  const count = matches !== undefined ? matches.size : (qualifying ?? slots.live.size);
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
          order.firstAfter((slot) => (slots.reputation[slot] as number) >= minReputation),
        );
      }
      index = end - 1;
    }
    const step = reverse ? -1 : 1;
    for (; index >= 0 && index < order.size && taken.length < take; index += step) {
      const slot = order.at(index);
      if (matches !== undefined && !matches.has(slot)) continue;
      if (minReputation !== undefined && (slots.reputation[slot] as number) < minReputation) {
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
    matches !== undefined ? matches.toUint32Array(slots.candidatesBuffer) : reputationHead(slots, count);
  const eligible =
    minReputation === undefined && after === undefined
      ? candidates
      : keepWhere(
          candidates,
          (slot) =>
            (minReputation === undefined || (slots.reputation[slot] as number) >= minReputation) &&
            (after === undefined || direction * (labels[slot] as number) > direction * afterLabel),
        );
  return topKByKey(eligible, wanted, labels, direction).slice(skip);
}

/** How many of `matches` (every live agent when undefined) have at least `minimum` reputation. */
export function countAtLeast(
  slots: AgentSlots,
  matches: Bitmap | undefined,
  minimum: number | undefined,
): number {
  if (minimum === undefined) return matches === undefined ? slots.live.size : matches.size;
  const qualifying = slots.byReputation.firstAfter((slot) => (slots.reputation[slot] as number) >= minimum);
  if (matches === undefined) return qualifying;
  if (matches.size <= qualifying) {
    let count = 0;
    for (const slot of matches.toUint32Array(slots.hitsBuffer))
      if ((slots.reputation[slot] as number) >= minimum) count += 1;
    return count;
  }
  let count = 0;
  for (let position = 0; position < qualifying; position += 1) {
    if (matches.has(slots.byReputation.at(position))) count += 1;
  }
  return count;
}

/** The first `count` agents of the reputation order (the best), in the candidates buffer. */
function reputationHead(slots: AgentSlots, count: number): Uint32Array {
  const head = slots.candidatesBuffer.subarray(0, count);
  for (let position = 0; position < count; position += 1) head[position] = slots.byReputation.at(position);
  return head;
}
