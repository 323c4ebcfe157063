import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StringTable, PROBE_SLOT } from '../src/string-table.js';

const did = (n: number) => `did:web:registry.example:agent:${n.toString(16).padStart(32, '0')}`;

describe('StringTable: the search index DIDs and stems, outside the JavaScript heap', () => {
  it('finds every DID by its slot and every slot by its DID, through growth, removals and reuse', () => {
    const table = new StringTable();
    const held = new Map<number, string>();
    // Enough slots and bytes to grow the slot arrays, the buckets and the byte buffer several times.
    for (let slot = 1; slot <= 20_000; slot += 1) {
      table.set(slot, did(slot));
      held.set(slot, did(slot));
    }
    // Remove every third; give some slots back to their own DID and some to a new, longer one.
    for (let slot = 3; slot <= 20_000; slot += 3) {
      table.delete(slot);
      held.delete(slot);
    }
    for (let slot = 3; slot <= 20_000; slot += 9) {
      table.set(slot, did(slot));
      held.set(slot, did(slot));
    }
    for (let slot = 6; slot <= 20_000; slot += 9) {
      const longer = `${did(slot + 1_000_000)}:with:a:longer:path`;
      table.set(slot, longer);
      held.set(slot, longer);
    }
    // Churn: the same slots emptied and refilled many times must not leak bytes or buckets into wrong answers.
    for (let round = 0; round < 30; round += 1) {
      for (let slot = 1; slot <= 2_000; slot += 1) {
        if (!held.has(slot)) continue;
        table.delete(slot);
        const value = round % 2 === 0 ? `${did(slot)}#${round}` : did(slot);
        table.set(slot, value);
        held.set(slot, value);
      }
    }
    for (const [slot, value] of held) {
      assert.equal(table.get(slot), value);
      assert.equal(table.slotOf(value), slot);
    }
    for (let slot = 1; slot <= 20_000; slot += 1) {
      if (held.get(slot) !== did(slot))
        assert.equal(table.slotOf(did(slot)), undefined, `${did(slot)} was removed`);
    }
    assert.equal(table.slotOf('did:web:registry.example:agent:not-there'), undefined);
    assert.equal(table.has(did(1)), true);
  });

  it('places each DID in one bucket, also the one whose arrival rehashes the table', () => {
    const table = new StringTable();
    // 1,025 DIDs: the last one's set doubles the 2,048 buckets.
    for (let slot = 1; slot <= 1025; slot += 1) table.set(slot, did(slot));
    const buckets = (table as unknown as { buckets: Int32Array }).buckets;
    const placed = buckets.filter((entry) => entry > 0);
    assert.equal(placed.length, 1025);
    assert.equal(new Set(placed).size, 1025);
  });

  it('refuses a second DID for a slot that holds one, an empty DID, and the probe slot', () => {
    const table = new StringTable();
    table.set(1, did(1));
    assert.throws(() => table.set(1, did(2)), /already holds/);
    assert.throws(() => table.set(2, ''), /cannot be empty/);
    assert.throws(() => table.set(PROBE_SLOT, did(3)), /stands for the probe/);
    // Forgetting a slot past any it ever held changes nothing.
    table.delete(5000);
    assert.equal(table.slotOf(did(1)), 1);
    table.set(2, 'x'.repeat(70_000));
    assert.equal(table.get(2).length, 70_000);
  });

  it('keeps DIDs that are not ASCII exactly, and compares in code point order', () => {
    const table = new StringTable();
    const values = [
      'did:web:b.example:agent:1',
      'did:web:a.example:agent:10',
      'did:web:a.example:agent:1',
      'did:web:münchen.example:agent:1',
      'did:web:a.example:agent:😀',
      'did:web:a.example:agent:\uffff',
      'did:web:a.example:agent',
    ];
    values.forEach((value, index) => table.set(index + 1, value));
    values.forEach((value, index) => {
      assert.equal(table.get(index + 1), value);
      assert.equal(table.slotOf(value), index + 1);
    });
    const byTable = values.map((_, index) => index + 1).sort((a, b) => table.compare(a, b));
    const byCodePoint = [...values].sort((a, b) => {
      const x = [...a].map((c) => c.codePointAt(0) as number);
      const y = [...b].map((c) => c.codePointAt(0) as number);
      for (let i = 0; i < Math.min(x.length, y.length); i += 1)
        if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
      return x.length - y.length;
    });
    assert.deepEqual(
      byTable.map((slot) => table.get(slot)),
      byCodePoint,
    );
  });

  it('compares a probe (a cursor DID no slot holds) with the slots', () => {
    const table = new StringTable();
    table.set(1, did(1));
    table.set(2, did(3));
    table.setProbe(did(2));
    assert.ok(table.compare(PROBE_SLOT, 1) > 0);
    assert.ok(table.compare(PROBE_SLOT, 2) < 0);
    assert.ok(table.compare(2, PROBE_SLOT) > 0);
    table.setProbe(did(1));
    assert.equal(table.compare(PROBE_SLOT, 1), 0);
    assert.equal(table.slotOf(did(2)), undefined, 'a probe is not looked up');
  });

  it("tells whether a slot's string begins with the probe (a prefix of a query word)", () => {
    const table = new StringTable();
    ['translat', 'trans', 'tra', 'crème', 'cr'].forEach((stem, index) => table.set(index + 1, stem));
    table.setProbe('trans');
    assert.deepEqual(
      [1, 2, 3, 4, 5].filter((slot) => table.startsWithProbe(slot)),
      [1, 2],
    );
    table.setProbe('crè');
    assert.deepEqual(
      [1, 2, 3, 4, 5].filter((slot) => table.startsWithProbe(slot)),
      [4],
    );
    table.setProbe('');
    assert.equal([1, 2, 3, 4, 5].filter((slot) => table.startsWithProbe(slot)).length, 5);
  });
});
