import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Vocabulary } from '../src/vocabulary.js';

/** Code point order, as the vocabulary keeps its stems (their UTF-8 bytes). */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

function randomStems(count: number, seed: number): string[] {
  // Letters that sort differently by UTF-16 unit and by code point (U+FF41 against U+1F600).
  const alphabet = ['a', 'b', 'c', 'z', '0', '9', 'é', 'ß', '日', '本', 'ａ', '😀', '𝒜'];
  let state = seed;
  const next = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
  const stems = new Set<string>();
  while (stems.size < count) {
    let stem = '';
    const length = 1 + Math.floor(next() * 5);
    for (let letter = 0; letter < length; letter += 1)
      stem += alphabet[Math.floor(next() * alphabet.length)] as string;
    stems.add(stem);
  }
  return [...stems];
}

describe('Vocabulary: the index stems, off the JavaScript heap, for prefix lookups', () => {
  it('finds every stem with a prefix, in code point order, whether it came in a bulk load or after', () => {
    const stems = randomStems(6000, 7);
    const vocabulary = new Vocabulary();
    const ids = new Map<string, number>();
    vocabulary.beginBulk();
    for (const stem of stems.slice(0, 4000)) ids.set(stem, vocabulary.add(stem));
    vocabulary.endBulk();
    for (const stem of stems.slice(4000)) ids.set(stem, vocabulary.add(stem));
    assert.equal(vocabulary.size, stems.length);
    assert.equal(new Set(ids.values()).size, stems.length, 'one id per stem');
    for (const [stem, id] of ids) {
      assert.equal(vocabulary.add(stem), id, 'a known stem keeps its id');
      assert.equal(vocabulary.idOf(stem), id);
      assert.equal(vocabulary.stem(id), stem);
    }
    assert.equal(vocabulary.idOf('not-a-stem'), undefined);
    assert.throws(() => vocabulary.add(''), /cannot be empty/);
    assert.equal(vocabulary.size, stems.length, 'a refused stem takes no id');
    const prefixes = ['', 'a', 'é', 'ａ', '😀', '日本', 'zz', '9', '𝒜a', 'q'];
    for (const prefix of prefixes) {
      const expected = stems.filter((stem) => stem.startsWith(prefix)).sort(byBytes);
      assert.deepEqual(
        vocabulary.withPrefix(prefix).map((id) => vocabulary.stem(id)),
        expected,
        `stems beginning with ${JSON.stringify(prefix)}`,
      );
    }
  });
});
