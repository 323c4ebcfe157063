import { Bitmap, EMPTY, type BitmapScope } from './bitmap.js';

/** Where a term lives: one of the document fields (0-3, see FIELDS), a capability type, or a tag. */
export const CAPABILITY_SPACE = 4;
export const TAG_SPACE = 5;
const SPACES = 6;

/** Lists this short stay plain arrays: most words of a registry occur in a few agents only. */
const SMALL_LIST_MAX = 24;

/**
 * A posting list: a compressed bitmap (long lists), an array of slots (short ones), or for the most
 * common case, a word only one agent holds (a name's serial), the slot itself; -1 is empty.
 */
type PostingList = Bitmap | number[] | number;
const NO_SLOT = -1;

/**
 * The index's posting lists: for each (space, term), the slots that hold it. Long lists are
 * compressed bitmaps; short ones (a name's unique word) stay small arrays, which cost a fraction of a
 * bitmap object each and are turned into one bitmap only when a search needs them, and a list of one
 * agent is just its slot number: at a million agents that is a million arrays fewer for the garbage
 * collector to trace. While a bulk load runs, slots are collected in arrays and long lists become
 * bitmaps once at the end.
 */
export class PostingLists {
  private readonly ids: Map<string, number>[] = Array.from({ length: SPACES }, () => new Map());
  private readonly lists: PostingList[] = [];
  private bulk = false;

  beginBulk(): void {
    this.bulk = true;
  }

  endBulk(): void {
    this.bulk = false;
    this.lists.forEach((list, id) => {
      if (Array.isArray(list) && list.length > SMALL_LIST_MAX) this.lists[id] = new Bitmap(list);
    });
  }

  /** The posting list's id, created when new. */
  idOf(space: number, term: string): number {
    const terms = this.ids[space] as Map<string, number>;
    let id = terms.get(term);
    if (id === undefined) {
      id = this.lists.length;
      this.lists.push(NO_SLOT);
      terms.set(term, id);
    }
    return id;
  }

  /** The agents holding `term`, as a bitmap owned by the index or by `scope`. */
  get(scope: BitmapScope, space: number, term: string): Bitmap {
    const id = (this.ids[space] as Map<string, number>).get(term);
    if (id === undefined) return EMPTY;
    const list = this.lists[id] as PostingList;
    if (typeof list === 'number') return list === NO_SLOT ? EMPTY : scope.of([list]);
    return Array.isArray(list) ? scope.of(list) : list;
  }

  /** The agents holding any of `terms`: long lists united natively, short ones gathered first. */
  union(scope: BitmapScope, space: number, terms: readonly string[]): Bitmap {
    const known = this.ids[space] as Map<string, number>;
    const bitmaps: Bitmap[] = [];
    const slots: number[] = [];
    for (const term of terms) {
      const id = known.get(term);
      if (id === undefined) continue;
      const list = this.lists[id] as PostingList;
      if (typeof list === 'number') {
        if (list !== NO_SLOT) slots.push(list);
      } else if (Array.isArray(list)) {
        for (const slot of list) slots.push(slot);
      } else {
        bitmaps.push(list);
      }
    }
    if (slots.length > 0) bitmaps.push(scope.of(slots));
    return bitmaps.length === 1 ? (bitmaps[0] as Bitmap) : scope.orMany(bitmaps);
  }

  add(id: number, slot: number): void {
    const list = this.lists[id] as PostingList;
    if (typeof list === 'number') {
      this.lists[id] = list === NO_SLOT ? slot : [list, slot];
      return;
    }
    if (!Array.isArray(list)) {
      list.add(slot);
      return;
    }
    list.push(slot);
    if (!this.bulk && list.length > SMALL_LIST_MAX) this.lists[id] = new Bitmap(list);
  }

  remove(id: number, slot: number): void {
    const list = this.lists[id] as PostingList;
    if (typeof list === 'number') {
      if (list === slot) this.lists[id] = NO_SLOT;
      return;
    }
    if (!Array.isArray(list)) {
      list.remove(slot);
      return;
    }
    const at = list.indexOf(slot);
    if (at >= 0) list.splice(at, 1);
  }
}

/**
 * Which posting lists each slot is in (so that removing an agent touches only its own lists), kept
 * in one flat array rather than an array object per agent: the garbage collector has a few large
 * arrays to look at instead of one small one per agent.
 */
export class SlotPostingIds {
  private arena = new Uint32Array(1 << 16);
  private used = 0;
  private garbage = 0;
  private starts = new Int32Array(1024);
  private lengths = new Int32Array(1024);

  set(slot: number, ids: readonly number[]): void {
    this.clear(slot);
    if (slot >= this.starts.length) this.growSlots(slot + 1);
    if (this.used + ids.length > this.arena.length) this.makeRoom(ids.length);
    this.arena.set(ids, this.used);
    this.starts[slot] = this.used;
    this.lengths[slot] = ids.length;
    this.used += ids.length;
  }

  get(slot: number): Uint32Array {
    if (slot >= this.starts.length) return this.arena.subarray(0, 0);
    const start = this.starts[slot] as number;
    return this.arena.subarray(start, start + (this.lengths[slot] as number));
  }

  clear(slot: number): void {
    if (slot >= this.lengths.length) return;
    this.garbage += this.lengths[slot] as number;
    this.lengths[slot] = 0;
  }

  private growSlots(atLeast: number): void {
    const size = Math.max(atLeast, this.starts.length * 2);
    const starts = new Int32Array(size);
    const lengths = new Int32Array(size);
    starts.set(this.starts);
    lengths.set(this.lengths);
    this.starts = starts;
    this.lengths = lengths;
  }

  /** Compacts away removed agents' ids, and grows when that is not enough. */
  private makeRoom(needed: number): void {
    const live = this.used - this.garbage;
    const size = Math.max(this.arena.length, 2 * (live + needed));
    const arena = new Uint32Array(size);
    let used = 0;
    for (let slot = 0; slot < this.lengths.length; slot += 1) {
      const length = this.lengths[slot] as number;
      if (length === 0) continue;
      const start = this.starts[slot] as number;
      arena.set(this.arena.subarray(start, start + length), used);
      this.starts[slot] = used;
      used += length;
    }
    this.arena = arena;
    this.used = used;
    this.garbage = 0;
  }
}
