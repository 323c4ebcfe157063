import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SortedOrder } from '../src/sorted-order.js';

/** Labels must grow strictly along the order, whatever the insertions did to them. */
function assertLabelsGrow(order: SortedOrder): void {
  for (let position = 1; position < order.size; position += 1) {
    const before = order.label(order.at(position - 1));
    const after = order.label(order.at(position));
    assert.ok(before < after, `label at ${position - 1} (${before}) < label at ${position} (${after})`);
  }
}

test('labels grow along the order through thousands of insertions at one place, removals and probes', () => {
  const keys = new Float64Array(20_000);
  const order = new SortedOrder((a, b) => (keys[a] as number) - (keys[b] as number) || a - b);
  // A loaded order: slots 1..999 with keys 0..998, every tenth key taken twice.
  const loaded = Int32Array.from({ length: 999 }, (_, index) => index + 1);
  for (const slot of loaded) keys[slot] = Math.floor((slot - 1) / 10) * 10;
  order.reset(loaded);
  assertLabelsGrow(order);

  // New slots all land between the same two neighbours (as new agents do in the reputation order):
  // far more than the ~30 halvings one gap allows, so stretches are spread out again and again.
  let slot = 1000;
  for (let round = 0; round < 3000; round += 1) {
    keys[slot] = 500.5;
    order.insert(slot);
    slot += 1;
    if (round % 500 === 0) assertLabelsGrow(order);
  }
  assertLabelsGrow(order);
  // At both ends as well.
  for (let round = 0; round < 2000; round += 1) {
    keys[slot] = -round;
    order.insert(slot);
    slot += 1;
    keys[slot] = 10_000 + round;
    order.insert(slot);
    slot += 1;
  }
  assertLabelsGrow(order);
  for (let removed = 1000; removed < 2000; removed += 3) order.remove(removed);
  assertLabelsGrow(order);
  assert.equal(order.size, 999 + 3000 + 4000 - 334);

  // A probe (slot 0, not in the order) takes a label that sorts it where its keys belong.
  for (const probeKey of [-5000, 250, 500.5, 500.25, 9_999_999]) {
    keys[0] = probeKey;
    order.labelProbe(0);
    assertLabelsGrow(order);
    for (let position = 0; position < order.size; position += 1) {
      const other = order.at(position);
      const byKeys = Math.sign(order.compareSlots(other, 0));
      const byLabels = Math.sign(order.label(other) - order.label(0));
      assert.equal(byLabels, byKeys, `probe ${probeKey} against slot ${other}`);
    }
  }
});
