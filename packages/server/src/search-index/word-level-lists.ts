import { Bitmap, EMPTY } from './bitmap.js';
import { DESCRIPTION_ONLY, LEVEL_OF_MASK, LEVEL_SCORES } from './word-levels.js';

/** Where an agent holds a stem: the stem's id and the fields (a mask, bit i = FIELDS[i]). */
export interface StemFields {
  stemId: number;
  mask: number;
}

/**
 * The level lists of the stems that many agents hold: per stem and level (see word-levels.ts), the
 * agents in which the stem has that level. Only a stem held at least `trackFrom` times (summed over
 * its fields) has them: a relevance page walks tiers only when it has more matches than that, so
 * the many stems a few agents hold (names carry serials) cost nothing here. A stem is tracked from
 * the moment it reaches the threshold (its lists built from its field lists then) and stays tracked.
 * The description-only level is not kept (see DESCRIPTION_ONLY).
 */
export class WordLevelLists {
  private readonly levels = new Map<number, Bitmap[]>();

  constructor(private readonly trackFrom: number) {}

  isTracked(stemId: number): boolean {
    return this.levels.has(stemId);
  }

  /** Whether a stem held this many times (summed over fields) should be tracked and is not yet. */
  shouldTrack(stemId: number, holders: number): boolean {
    return holders >= this.trackFrom && !this.levels.has(stemId);
  }

  /** Starts tracking a stem: `fieldSlots[i]` are the agents holding it in field i. */
  track(stemId: number, fieldSlots: readonly ArrayLike<number>[], scratch: Uint8Array): void {
    const touched: number[] = [];
    fieldSlots.forEach((slots, field) => {
      for (let index = 0; index < slots.length; index += 1) {
        const slot = slots[index] as number;
        if (scratch[slot] === 0) touched.push(slot);
        scratch[slot] = (scratch[slot] as number) | (1 << field);
      }
    });
    const members: number[][] = LEVEL_SCORES.map(() => []);
    touched.sort((a, b) => a - b);
    for (const slot of touched) {
      const mask = scratch[slot] as number;
      scratch[slot] = 0;
      if (mask !== DESCRIPTION_ONLY) (members[LEVEL_OF_MASK[mask] as number] as number[]).push(slot);
    }
    this.levels.set(
      stemId,
      members.map((slots) => new Bitmap(Uint32Array.from(slots))),
    );
  }

  add(slot: number, stem: StemFields): void {
    if (stem.mask !== DESCRIPTION_ONLY)
      this.levels.get(stem.stemId)?.[LEVEL_OF_MASK[stem.mask] as number]?.add(slot);
  }

  remove(slot: number, stem: StemFields): void {
    if (stem.mask !== DESCRIPTION_ONLY)
      this.levels.get(stem.stemId)?.[LEVEL_OF_MASK[stem.mask] as number]?.remove(slot);
  }

  /** The agents in which a tracked stem has the level (owned by this object: not to be changed). */
  level(stemId: number, level: number): Bitmap {
    return this.levels.get(stemId)?.[level] ?? EMPTY;
  }
}
