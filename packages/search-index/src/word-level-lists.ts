import { Bitmap, type BitmapScope } from './bitmap.js';
import type { PostingLists } from './postings.js';
import type { WordLevels } from './relevance-tiers.js';
import { FIELDS } from './text.js';
import { withRoom } from './typed-arrays.js';
import { DESCRIPTION_ONLY, DESCRIPTION_ONLY_LEVEL, LEVEL_OF_MASK, LEVEL_SCORES } from './word-levels.js';

/** Where an agent holds a stem: the stem's id and the fields (a mask, bit i = FIELDS[i]). */
interface StemFields {
  stemId: number;
  mask: number;
}

/**
 * The level lists of the stems that many agents hold: per stem and level (see word-levels.ts), the
 * agents in which the stem has that level. Only a stem held at least `trackFrom` times (summed over
 * its fields) has them: a relevance page walks tiers only when it has more matches than that, so
 * the many stems a few agents hold (names carry serials) cost nothing here. A stem is tracked from
 * the moment it reaches the threshold (its lists built from its field lists then) and stays tracked.
 * The description-only level is not kept (see DESCRIPTION_ONLY): a search computes it.
 *
 * It keeps nothing per agent: an agent's stems and their fields are read back from its word lists'
 * ids (which the index keeps to remove an agent), so the lists cost the index no more than their bitmaps.
 */
export class WordLevelLists {
  private readonly levels = new Map<number, Bitmap[]>();
  /** Scratch by stem id: the fields (a mask) in which one agent holds the stem; 0 between agents. */
  private fieldsOfStem = new Uint8Array(1024);
  /** Scratch by slot, for building a stem's lists; 0 between uses. */
  private fieldsOfSlot = new Uint8Array(1024);

  constructor(
    private readonly postings: PostingLists,
    private readonly trackFrom: number,
  ) {}

  /** After an agent's word lists took it: its tracked stems' levels too, and stems now held often enough. */
  added(slot: number, postingIds: ArrayLike<number>): void {
    for (const stem of this.stemFieldsOf(postingIds)) {
      if (this.levels.has(stem.stemId)) this.levelOf(stem)?.add(slot);
      else this.trackWhenHeldOften(stem.stemId);
    }
  }

  /** Before an agent leaves its word lists. */
  removed(slot: number, postingIds: ArrayLike<number>): void {
    for (const stem of this.stemFieldsOf(postingIds)) this.levelOf(stem)?.remove(slot);
  }

  /** After a bulk load: every stem held often enough (stem ids run from 1 to `stemCount`). */
  loaded(stemCount: number): void {
    for (let stemId = 1; stemId <= stemCount; stemId += 1) this.trackWhenHeldOften(stemId);
  }

  /**
   * A query word's levels, for a word that is one tracked stem (undefined otherwise); `hits` are its
   * field lists, from which the description-only level is computed when a page reaches it.
   */
  wordLevels(scope: BitmapScope, stemId: number, hits: readonly Bitmap[]): WordLevels | undefined {
    const kept = this.levels.get(stemId);
    if (kept === undefined) return undefined;
    const description = hits[FIELDS.indexOf('description')] as Bitmap;
    let descriptionOnly: Bitmap | undefined;
    return {
      bound: (level) =>
        (kept[level] as Bitmap).size + (level === DESCRIPTION_ONLY_LEVEL ? description.size : 0),
      members: (level) => {
        const list = kept[level] as Bitmap;
        if (level !== DESCRIPTION_ONLY_LEVEL) return list;
        descriptionOnly ??= scope.andNot(
          description,
          scope.orMany(hits.filter((_, field) => 1 << field !== DESCRIPTION_ONLY)),
        );
        return list.isEmpty ? descriptionOnly : scope.orMany([list, descriptionOnly]);
      },
    };
  }

  /** The list a stem's level is kept in, when the stem is tracked and the level kept. */
  private levelOf(stem: StemFields): Bitmap | undefined {
    if (stem.mask === DESCRIPTION_ONLY) return undefined;
    return this.levels.get(stem.stemId)?.[LEVEL_OF_MASK[stem.mask] as number];
  }

  /** An agent's stems, each with the fields that hold it, from the agent's posting list ids. */
  private stemFieldsOf(ids: ArrayLike<number>): StemFields[] {
    const stemIds: number[] = [];
    for (let index = 0; index < ids.length; index += 1) {
      const id = ids[index] as number;
      const stemId = this.postings.stemOfList(id);
      if (stemId < 0) continue;
      const fieldsOfStem = withRoom(this.fieldsOfStem, stemId + 1);
      this.fieldsOfStem = fieldsOfStem;
      const mask = fieldsOfStem[stemId] as number;
      if (mask === 0) stemIds.push(stemId);
      fieldsOfStem[stemId] = mask | (1 << this.postings.spaceOfList(id));
    }
    return stemIds.map((stemId) => {
      const mask = this.fieldsOfStem[stemId] as number;
      this.fieldsOfStem[stemId] = 0;
      return { stemId, mask };
    });
  }

  /** Starts keeping a stem's level lists once it is held `trackFrom` times, from its field lists. */
  private trackWhenHeldOften(stemId: number): void {
    if (this.levels.has(stemId)) return;
    let holders = 0;
    for (let space = 0; space < FIELDS.length; space += 1)
      holders += this.postings.wordListSize(space, stemId);
    if (holders < this.trackFrom) return;
    const touched: number[] = [];
    for (let space = 0; space < FIELDS.length; space += 1) {
      const slots = this.postings.wordSlots(space, stemId);
      for (let index = 0; index < slots.length; index += 1) {
        const slot = slots[index] as number;
        const fieldsOfSlot = withRoom(this.fieldsOfSlot, slot + 1);
        this.fieldsOfSlot = fieldsOfSlot;
        const mask = fieldsOfSlot[slot] as number;
        if (mask === 0) touched.push(slot);
        fieldsOfSlot[slot] = mask | (1 << space);
      }
    }
    const members: number[][] = LEVEL_SCORES.map(() => []);
    touched.sort((a, b) => a - b);
    for (const slot of touched) {
      const mask = this.fieldsOfSlot[slot] as number;
      this.fieldsOfSlot[slot] = 0;
      if (mask !== DESCRIPTION_ONLY) (members[LEVEL_OF_MASK[mask] as number] as number[]).push(slot);
    }
    this.levels.set(
      stemId,
      members.map((slots) => new Bitmap(Uint32Array.from(slots))),
    );
  }
}
