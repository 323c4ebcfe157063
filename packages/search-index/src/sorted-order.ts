import { withRoom } from './typed-arrays.js';

/** Spacing of freshly numbered labels: room for about 30 insertions between two neighbours. */
const LABEL_SPACING = 2 ** 30;
/** The least spacing a renumbered stretch of the order gets (room for about 10 insertions). */
const LEAST_SPREAD = 2 ** 10;

/**
 * Slots kept sorted by a comparator that reads their current keys, updated in place: remove a slot
 * (binary search with its old keys) before its keys change, insert it after. A move costs one
 * binary search and one memmove of the array's tail.
 *
 * Every slot in the order also carries a label, a number that grows along the order, so that a
 * search comparing thousands of candidates compares two numbers instead of running the comparator
 * (reputation, then creation time, then DID: three reads and often a string comparison). An inserted
 * slot takes the midpoint of its neighbours' labels; when no number is left between them, the
 * stretch around it is spread out again, doubling its width until its labels have room (the
 * classic order-maintenance list labelling: new agents all land at one place in an order, and
 * renumbering the whole order each time would cost milliseconds at a million agents).
 */
export class SortedOrder {
  private slots = new Int32Array(1024);
  private count = 0;
  private labels = new Float64Array(1024);

  constructor(private readonly compare: (a: number, b: number) => number) {}

  get size(): number {
    return this.count;
  }

  /** The order's comparator: negative when `a` comes before `b`. */
  compareSlots(a: number, b: number): number {
    return this.compare(a, b);
  }

  /** A number that grows along the order; valid for slots in the order until the next insert. */
  label(slot: number): number {
    return this.labels[slot] as number;
  }

  /** Every slot's label, indexed by slot: the array `label` reads, for loops over many slots. */
  labelsBySlot(): Float64Array {
    return this.labels;
  }

  /**
   * Labels a slot that is not in the order (a cursor's keys) as if it were: the label of an equal
   * slot, else a number strictly between its neighbours' labels.
   */
  labelProbe(slot: number): void {
    this.ensureLabelRoom(slot);
    this.labels[slot] = this.labelOfProbe(slot);
  }

  private labelOfProbe(slot: number): number {
    const position = this.firstAfter((other) => this.compare(other, slot) < 0);
    if (position < this.count && this.compare(this.slots[position] as number, slot) === 0) {
      return this.labels[this.slots[position] as number] as number;
    }
    let [before, after] = this.neighbourLabels(position);
    if (!hasRoomBetween(before, after)) {
      this.spreadAround(position);
      [before, after] = this.neighbourLabels(position);
    }
    return before + (after - before) / 2;
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
    this.relabel();
  }

  insert(slot: number): void {
    this.slots = withRoom(this.slots, this.count + 1);
    this.ensureLabelRoom(slot);
    const position = this.firstAfter((other) => this.compare(other, slot) < 0);
    let [before, after] = this.neighbourLabels(position);
    if (!hasRoomBetween(before, after)) {
      this.spreadAround(position);
      [before, after] = this.neighbourLabels(position);
    }
    this.slots.copyWithin(position + 1, position, this.count);
    this.slots[position] = slot;
    this.count += 1;
    this.labels[slot] = before + (after - before) / 2;
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

  /** Labels of the slots either side of `position` (one spacing beyond the ends). */
  private neighbourLabels(position: number): [number, number] {
    const before =
      position > 0
        ? (this.labels[this.slots[position - 1] as number] as number)
        : this.count > 0
          ? (this.labels[this.slots[0] as number] as number) - LABEL_SPACING
          : 0;
    const after =
      position < this.count
        ? (this.labels[this.slots[position] as number] as number)
        : before + LABEL_SPACING;
    return [before, after];
  }

  /** Gives the slots around `position` (an insertion point) evenly spread labels with room between. */
  private spreadAround(position: number): void {
    for (let half = 8; ; half *= 2) {
      const low = Math.max(0, position - half);
      const high = Math.min(this.count, position + half);
      if (low === 0 && high === this.count) {
        this.relabel();
        return;
      }
      const width = high - low;
      // Beyond either end of the order there is all the room wanted.
      const ceiling =
        high < this.count ? this.labelAt(high) : this.labelAt(low - 1) + (width + 1) * LABEL_SPACING;
      const floor = low > 0 ? this.labelAt(low - 1) : ceiling - (width + 1) * LABEL_SPACING;
      const spread = (ceiling - floor) / (width + 1);
      if (spread < LEAST_SPREAD) continue;
      for (let offset = 0; offset < width; offset += 1) {
        this.labels[this.slots[low + offset] as number] = floor + (offset + 1) * spread;
      }
      return;
    }
  }

  private labelAt(position: number): number {
    return this.labels[this.slots[position] as number] as number;
  }

  private relabel(): void {
    let highest = 0;
    for (let position = 0; position < this.count; position += 1) {
      highest = Math.max(highest, this.slots[position] as number);
    }
    this.ensureLabelRoom(highest);
    for (let position = 0; position < this.count; position += 1) {
      this.labels[this.slots[position] as number] = position * LABEL_SPACING;
    }
  }

  private ensureLabelRoom(slot: number): void {
    this.labels = withRoom(this.labels, slot + 1);
  }
}

function hasRoomBetween(before: number, after: number): boolean {
  const middle = before + (after - before) / 2;
  return middle > before && middle < after;
}
