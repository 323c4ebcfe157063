import { PROBE_SLOT, StringTable } from './string-table.js';
import { withRoom } from './typed-arrays.js';

/**
 * Every stem the index has seen, each under a number (its stem id, from 1), and all of them in byte
 * order for the prefix lookups of a query's last word. Kept off the JavaScript heap (a StringTable
 * and a typed array): at a million agents there are about a million stems, a name's serial each, and
 * as strings in a Set, a sorted array and the posting maps they were most of the index's heap.
 * Stems are never forgotten: a registry's vocabulary only grows, and an unused stem costs a few bytes.
 */
export class Vocabulary {
  private readonly stems = new StringTable();
  private nextId = PROBE_SLOT + 1;
  /** Stem ids in byte order of their stems (appended unsorted while a bulk load runs). */
  private ordered = new Int32Array(1024);
  private bulk = false;

  get size(): number {
    return this.nextId - 1;
  }

  /** The id of `stem`, or undefined when no agent ever held it. */
  idOf(stem: string): number | undefined {
    return this.stems.slotOf(stem);
  }

  /** The id of `stem`, given one when it is new. */
  add(stem: string): number {
    const known = this.stems.slotOf(stem);
    if (known !== undefined) return known;
    // Given its id only once it is stored: set() refuses an empty stem.
    this.stems.set(this.nextId, stem);
    const id = this.nextId++;
    this.ordered = withRoom(this.ordered, this.size);
    if (this.bulk) {
      this.ordered[this.size - 1] = id;
    } else {
      const at = this.firstAtOrAfterProbe(stem, this.size - 1);
      this.ordered.copyWithin(at + 1, at, this.size - 1);
      this.ordered[at] = id;
    }
    return id;
  }

  /** New stems are appended and sorted once, at `endBulk`. */
  beginBulk(): void {
    this.bulk = true;
  }

  endBulk(): void {
    this.bulk = false;
    this.ordered.subarray(0, this.size).sort((a, b) => this.stems.compare(a, b));
  }

  /** The ids of the stems that begin with `prefix`, in byte order of the stems. */
  withPrefix(prefix: string): number[] {
    const ids: number[] = [];
    for (let at = this.firstAtOrAfterProbe(prefix, this.size); at < this.size; at += 1) {
      const id = this.ordered[at] as number;
      if (!this.stems.startsWithProbe(id)) break;
      ids.push(id);
    }
    return ids;
  }

  /** The stem of `id`. */
  stem(id: number): string {
    return this.stems.get(id);
  }

  /** Sets the probe to `text`; the first position among the first `count` whose stem is not below it. */
  private firstAtOrAfterProbe(text: string, count: number): number {
    this.stems.setProbe(text);
    let low = 0;
    let high = count;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.stems.compare(this.ordered[middle] as number, PROBE_SLOT) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
