import { Bitmap, EMPTY, type BitmapScope } from './bitmap.js';
import { withRoom } from './typed-arrays.js';

/** Where a term lives: one of the document fields (0-3, see FIELDS), a capability type, or a tag. */
export const CAPABILITY_SPACE = 4;
export const TAG_SPACE = 5;
const WORD_SPACES = 4;

/** Lists this short stay plain arrays: most words of a registry occur in a few agents only. */
const SMALL_LIST_MAX = 24;

/** `single` of a list without agents, and of a list kept in `many`. */
const NO_SLOT = -1;
const IN_MANY = -2;

/**
 * The index's posting lists: for each (space, term), the slots that hold it. A list has a number (its
 * id); the word spaces find it by stem id (see Vocabulary), capability types and tags by their text.
 * Most lists are a name's serial, held by one agent: such a list is just its slot, in a typed array.
 * Longer ones are kept in a map: short ones as arrays (a fraction of a bitmap object each, made a
 * bitmap only when a search needs one), long ones as compressed bitmaps. At a million agents this
 * keeps a million lists off the garbage collector's path. While a bulk load runs, slots are collected
 * in arrays and long lists become bitmaps once at the end.
 */
export class PostingLists {
  /** Per word space, by stem id: the list's id + 1, or 0 for none. */
  private wordLists: Int32Array[] = Array.from({ length: WORD_SPACES }, () => new Int32Array(1024));
  /** Per list id: the stem id of a word list, or -1 (a capability type or tag); its space beside it. */
  private listStems = new Int32Array(1024);
  private listSpaces = new Uint8Array(1024);
  private readonly termLists = new Map<number, Map<string, number>>([
    [CAPABILITY_SPACE, new Map()],
    [TAG_SPACE, new Map()],
  ]);
  /** Per list id: its one slot, NO_SLOT, or IN_MANY. */
  private single = new Int32Array(1024);
  private readonly many = new Map<number, number[] | Bitmap>();
  private count = 0;
  private bulk = false;

  beginBulk(): void {
    this.bulk = true;
  }

  endBulk(): void {
    this.bulk = false;
    for (const [id, list] of this.many) {
      if (Array.isArray(list) && list.length > SMALL_LIST_MAX) this.many.set(id, new Bitmap(list));
    }
  }

  /** The id of the list of a word space (0-3) and stem, created when new. */
  wordListId(space: number, stemId: number): number {
    const lists = withRoom(this.wordLists[space] as Int32Array, stemId + 1);
    this.wordLists[space] = lists;
    const known = lists[stemId] as number;
    if (known !== 0) return known - 1;
    const id = this.newList();
    lists[stemId] = id + 1;
    this.listStems[id] = stemId;
    this.listSpaces[id] = space;
    return id;
  }

  /** The stem id of a word list, or -1 for the list of a capability type or tag. */
  stemOfList(id: number): number {
    return this.listStems[id] as number;
  }

  /** The word space (field) of a word list. */
  spaceOfList(id: number): number {
    return this.listSpaces[id] as number;
  }

  /** How many agents hold the stem in a word space. */
  wordListSize(space: number, stemId: number): number {
    const id = this.wordList(space, stemId);
    if (id === undefined) return 0;
    const single = this.single[id] as number;
    if (single === NO_SLOT) return 0;
    if (single !== IN_MANY) return 1;
    const list = this.many.get(id) as number[] | Bitmap;
    return Array.isArray(list) ? list.length : list.size;
  }

  /** The agents holding the stem in a word space, as slot numbers. */
  wordSlots(space: number, stemId: number): ArrayLike<number> {
    const id = this.wordList(space, stemId);
    if (id === undefined) return [];
    const single = this.single[id] as number;
    if (single === NO_SLOT) return [];
    if (single !== IN_MANY) return [single];
    const list = this.many.get(id) as number[] | Bitmap;
    return Array.isArray(list) ? list : list.toUint32Array();
  }

  /** The id of the list of a capability type or tag, created when new. */
  termListId(space: number, term: string): number {
    const terms = this.terms(space);
    let id = terms.get(term);
    if (id === undefined) {
      id = this.newList();
      terms.set(term, id);
    }
    return id;
  }

  /** The agents holding the stem in a word space, as a bitmap owned by the index or by `scope`. */
  word(scope: BitmapScope, space: number, stemId: number | undefined): Bitmap {
    return this.bitmapOf(scope, stemId === undefined ? undefined : this.wordList(space, stemId));
  }

  /** The agents holding any of the stems in a word space. */
  anyWord(scope: BitmapScope, space: number, stemIds: readonly number[]): Bitmap {
    return this.union(
      scope,
      stemIds.map((stemId) => this.wordList(space, stemId)),
    );
  }

  /** The agents holding the capability type or tag. */
  term(scope: BitmapScope, space: number, term: string): Bitmap {
    return this.bitmapOf(scope, this.terms(space).get(term));
  }

  /** The agents holding any of the capability types or tags. */
  anyTerm(scope: BitmapScope, space: number, terms: readonly string[]): Bitmap {
    const known = this.terms(space);
    return this.union(
      scope,
      terms.map((term) => known.get(term)),
    );
  }

  add(id: number, slot: number): void {
    const single = this.single[id] as number;
    if (single === NO_SLOT) {
      this.single[id] = slot;
      return;
    }
    if (single !== IN_MANY) {
      this.single[id] = IN_MANY;
      this.many.set(id, [single, slot]);
      return;
    }
    const list = this.many.get(id) as number[] | Bitmap;
    if (!Array.isArray(list)) {
      list.add(slot);
      return;
    }
    list.push(slot);
    if (!this.bulk && list.length > SMALL_LIST_MAX) this.many.set(id, new Bitmap(list));
  }

  remove(id: number, slot: number): void {
    const single = this.single[id] as number;
    if (single !== IN_MANY) {
      if (single === slot) this.single[id] = NO_SLOT;
      return;
    }
    const list = this.many.get(id) as number[] | Bitmap;
    if (!Array.isArray(list)) {
      list.remove(slot);
      return;
    }
    const at = list.indexOf(slot);
    if (at >= 0) list.splice(at, 1);
  }

  private terms(space: number): Map<string, number> {
    const terms = this.termLists.get(space);
    if (terms === undefined) throw new Error(`posting lists: space ${space} has no terms`);
    return terms;
  }

  private wordList(space: number, stemId: number): number | undefined {
    const id = (this.wordLists[space] as Int32Array)[stemId] ?? 0;
    return id === 0 ? undefined : id - 1;
  }

  private newList(): number {
    this.single = withRoom(this.single, this.count + 1);
    this.single[this.count] = NO_SLOT;
    this.listStems = withRoom(this.listStems, this.count + 1);
    this.listStems[this.count] = -1;
    this.listSpaces = withRoom(this.listSpaces, this.count + 1);
    return this.count++;
  }

  private bitmapOf(scope: BitmapScope, id: number | undefined): Bitmap {
    if (id === undefined) return EMPTY;
    const single = this.single[id] as number;
    if (single === NO_SLOT) return EMPTY;
    if (single !== IN_MANY) return scope.of([single]);
    const list = this.many.get(id) as number[] | Bitmap;
    return Array.isArray(list) ? scope.of(list) : list;
  }

  /** Long lists united natively, short ones gathered first. */
  private union(scope: BitmapScope, ids: readonly (number | undefined)[]): Bitmap {
    const bitmaps: Bitmap[] = [];
    const slots: number[] = [];
    for (const id of ids) {
      if (id === undefined) continue;
      const single = this.single[id] as number;
      if (single === NO_SLOT) continue;
      if (single !== IN_MANY) {
        slots.push(single);
        continue;
      }
      const list = this.many.get(id) as number[] | Bitmap;
      if (Array.isArray(list)) {
        for (const slot of list) slots.push(slot);
      } else {
        bitmaps.push(list);
      }
    }
    if (slots.length > 0) bitmaps.push(scope.of(slots));
    return bitmaps.length === 1 ? (bitmaps[0] as Bitmap) : scope.orMany(bitmaps);
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
    this.starts = withRoom(this.starts, slot + 1);
    this.lengths = withRoom(this.lengths, slot + 1);
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
