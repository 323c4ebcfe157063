import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BitSlicedScores } from '../src/bit-sliced-scores.js';
import { Bitmap, BitmapScope } from '../src/bitmap.js';

/** Scores summed as bitmaps against the same sums kept in an array, for random sets and weights. */
test('bit-sliced scores: sums, cuts at a score and the k best agree with plain arithmetic', () => {
  let state = 42;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const scope = new BitmapScope();
  try {
    const universe = 3000;
    const members = scope.of(Array.from({ length: universe }, (_, slot) => slot).filter(() => next() < 0.9));
    const expected = new Map<number, number>(members.toArray().map((slot) => [slot, 0]));
    const scores = new BitSlicedScores(scope);
    const inputs: { hit: InstanceType<typeof Bitmap>; slots: number[] }[] = [];
    for (const weight of [10, 2, 5, 5, 10, 2, 5, 5, 1, 0, 37]) {
      const hit = scope.and(members, scope.of(members.toArray().filter(() => next() < 0.4)));
      scores.add(hit, weight);
      inputs.push({ hit, slots: hit.toArray() });
      for (const slot of hit.toArray()) expected.set(slot, (expected.get(slot) as number) + weight);
    }
    // Slices it made are changed in place; the sets it was given never are (they may be the index's own).
    for (const { hit, slots } of inputs) assert.deepEqual(hit.toArray(), slots);
    for (const [slot, score] of expected) assert.equal(scores.scoreOf(slot), score);
    const written = new Int32Array(universe);
    scores.writeScores(members, written);
    for (const [slot, score] of expected) assert.equal(written[slot], score);

    const slotsWhere = (keep: (score: number) => boolean) =>
      [...expected].filter(([, score]) => keep(score)).map(([slot]) => slot);
    for (const cut of [-1, 0, 7, 15, 22, 44, 200]) {
      const { below, equal, above } = scores.split(members, cut);
      assert.deepEqual(
        below.toArray(),
        slotsWhere((score) => score < cut),
        `below ${cut}`,
      );
      assert.deepEqual(
        equal.toArray(),
        slotsWhere((score) => score === cut),
        `equal ${cut}`,
      );
      assert.deepEqual(
        above.toArray(),
        slotsWhere((score) => score > cut),
        `above ${cut}`,
      );
    }
    const ranked = [...expected.values()].sort((a, b) => b - a);
    for (const k of [1, 21, 101, 2000]) {
      for (const lowestFirst of [false, true]) {
        const order = lowestFirst ? [...ranked].reverse() : ranked;
        const { better, tier, score } = scores.best(members, k, lowestFirst);
        const kth = order[Math.min(k, order.length) - 1] as number;
        const isBetter = (value: number) => (lowestFirst ? value < kth : value > kth);
        assert.equal(score, kth, `k-th score, k=${k}`);
        assert.ok(better.size < k);
        assert.deepEqual(better.toArray(), slotsWhere(isBetter), `better than the k-th, k=${k}`);
        assert.deepEqual(
          tier.toArray(),
          slotsWhere((value) => value === kth),
          `the k-th's tier, k=${k}`,
        );
      }
    }
    // No more members than k: each is either better or in the tier, none is lost.
    for (const lowestFirst of [false, true]) {
      const { better, tier } = scores.best(members, universe, lowestFirst);
      assert.deepEqual(Bitmap.or(better, tier).toArray(), members.toArray());
    }
  } finally {
    scope.dispose();
  }
});
