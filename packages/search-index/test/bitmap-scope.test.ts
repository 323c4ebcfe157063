import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Bitmap, BitmapScope } from '../src/bitmap.js';

const range = (from: number, to: number, step: number) => {
  const slots: number[] = [];
  for (let slot = from; slot < to; slot += step) slots.push(slot);
  return slots;
};

describe('BitmapScope: the bitmaps of one search, reused from search to search', () => {
  it('computes every operation exactly, from bitmaps an earlier search left behind, and never changes its inputs', () => {
    // Dense and sparse containers (more than 4,096 members in one container becomes a bitset).
    const a = new Bitmap(range(0, 200_000, 3));
    const b = new Bitmap(range(0, 200_000, 7));
    const c = new Bitmap(range(150_000, 400_000, 1));
    const before = [a, b, c].map((bitmap) => bitmap.toArray());
    for (let round = 0; round < 3; round += 1) {
      const scope = new BitmapScope();
      assert.deepEqual(scope.and(a, b).toArray(), Bitmap.and(a, b).toArray());
      assert.deepEqual(scope.and(c, a).toArray(), Bitmap.and(c, a).toArray());
      assert.deepEqual(scope.andNot(a, b).toArray(), Bitmap.andNot(a, b).toArray());
      assert.deepEqual(scope.andNot(b, c).toArray(), Bitmap.andNot(b, c).toArray());
      assert.deepEqual(scope.xor(a, c).toArray(), Bitmap.xor(a, c).toArray());
      assert.deepEqual(scope.xor(b, a).toArray(), Bitmap.xor(b, a).toArray());
      assert.deepEqual(scope.orMany([b, a, c]).toArray(), Bitmap.orMany([a, b, c]).toArray());
      assert.deepEqual(scope.orMany([]).toArray(), []);
      assert.deepEqual(scope.intersectAll([c, a, b]).toArray(), Bitmap.and(Bitmap.and(a, b), c).toArray());
      assert.deepEqual(scope.intersectAll([]).toArray(), []);
      assert.deepEqual(scope.of([9, 3, 3, 400_000]).toArray(), [3, 9, 400_000]);
      assert.deepEqual(scope.of(range(0, 3000, 1)).size, 3000);
      scope.dispose();
    }
    assert.deepEqual(
      [a, b, c].map((bitmap) => bitmap.toArray()),
      before,
    );
  });

  it('gives its bitmaps back emptied, and the next search takes them instead of making new ones', () => {
    const first = new BitmapScope();
    const made = new Set([first.of([1, 2, 3]), first.of(range(0, 100_000, 2))]);
    first.dispose();
    const second = new BitmapScope();
    const reused = [second.of([]), second.of([])];
    for (const bitmap of reused) {
      assert.ok(made.has(bitmap), 'a bitmap of the earlier search is taken again');
      assert.equal(bitmap.size, 0, 'and it comes back empty');
    }
    second.dispose();
  });
});
