import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withRoom } from '../src/typed-arrays.js';

describe('withRoom: the search index growing its typed arrays', () => {
  it('keeps an array with room, and otherwise copies it into one of the same kind at least twice as long', () => {
    const small = Int32Array.of(7, -3, 9);
    assert.equal(withRoom(small, 3), small);
    const doubled = withRoom(small, 4);
    assert.ok(doubled instanceof Int32Array);
    assert.deepEqual([...doubled], [7, -3, 9, 0, 0, 0]);
    const far = withRoom(Float64Array.of(1.5), 10);
    assert.ok(far instanceof Float64Array);
    assert.equal(far.length, 10);
    assert.equal(far[0], 1.5);
    assert.equal(withRoom(new Uint32Array(0), 1).length, 1);
  });
});
