/**
 * Slots kept sorted by a comparator that reads their current keys, updated in place: remove a slot
 * (binary search with its old keys) before its keys change, insert it after. A move costs one
 * binary search and one memmove of the array's tail (a few µs at 100,000 agents).
 */
export class SortedOrder {
  private slots = new Int32Array(1024);
  private count = 0;

  constructor(private readonly compare: (a: number, b: number) => number) {}

  get size(): number {
    return this.count;
  }

  /** The order's comparator: negative when `a` comes before `b`. */
  compareSlots(a: number, b: number): number {
    return this.compare(a, b);
  }

  at(position: number): number {
    return this.slots[position] as number;
  }

  /** Replaces the contents with `slots`, sorted (used once, when the index is loaded). */
  reset(slots: Int32Array): void {
    const sorted = Int32Array.from(slots).sort(this.compare);
    this.slots = new Int32Array(Math.max(1024, sorted.length * 2));
    this.slots.set(sorted);
    this.count = sorted.length;
  }

  insert(slot: number): void {
    if (this.count === this.slots.length) {
      const grown = new Int32Array(this.slots.length * 2);
      grown.set(this.slots);
      this.slots = grown;
    }
    const position = this.firstAfter((other) => this.compare(other, slot) < 0);
    this.slots.copyWithin(position + 1, position, this.count);
    this.slots[position] = slot;
    this.count += 1;
  }

  /** Removes `slot`, whose keys must still be the ones it was inserted with. */
  remove(slot: number): void {
    const position = this.firstAfter((other) => this.compare(other, slot) < 0);
    if (this.slots[position] !== slot || position >= this.count) {
      throw new Error(`search index: slot ${slot} is not where its keys place it`);
    }
    this.slots.copyWithin(position, position + 1, this.count);
    this.count -= 1;
  }

  /** The first position whose slot does not satisfy `before` (which must hold for a prefix only). */
  firstAfter(before: (slot: number) => boolean): number {
    let low = 0;
    let high = this.count;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (before(this.slots[middle] as number)) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
