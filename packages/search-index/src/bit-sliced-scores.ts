import { EMPTY, type Bitmap, type BitmapScope } from './bitmap.js';

/** A set of agents cut at a score: those scoring below it, exactly it, and above it. */
export interface ScoreSplit {
  below: Bitmap;
  equal: Bitmap;
  above: Bitmap;
}

/** The best `k` of a set: fewer than `k` that score better than the k-th, then the k-th's whole tier. */
export interface BestOf {
  /** Members scoring strictly better than `score`: fewer than `k`. */
  better: Bitmap;
  /** Members scoring exactly `score`, the k-th best: the page continues among them. */
  tier: Bitmap;
  score: number;
}

/**
 * Small non-negative integer scores of many agents at once, held as bitmaps: slice i holds the
 * agents whose score has bit i set (a bit-sliced index). Adding a weighted set is a ripple-carry
 * addition of whole bitmaps, and the k best are found from the top bit down, so scoring 200,000
 * matches costs a few dozen native bitmap operations instead of 200,000 steps in JavaScript. Every
 * bitmap made belongs to the scope; none of the inputs is changed.
 */
export class BitSlicedScores {
  private readonly slices: Bitmap[] = [];
  /** Whether each slice is a bitmap this object made (in the scope), which it may change in place. */
  private readonly owned: boolean[] = [];

  constructor(private readonly scope: BitmapScope) {}

  /** Adds `weight` (a non-negative integer) to the score of every member of `members`. */
  add(members: Bitmap, weight: number): void {
    if (members.isEmpty) return;
    for (let bit = 0; weight >>> bit !== 0; bit += 1) {
      if (((weight >>> bit) & 1) === 1) this.addAtBit(members, bit);
    }
  }

  /** The score of one agent (read bit by bit: for a page's few agents, not for many). */
  scoreOf(slot: number): number {
    let score = 0;
    this.slices.forEach((slice, bit) => {
      if (slice.has(slot)) score += 2 ** bit;
    });
    return score;
  }

  /** Writes each member's score into `scores` (indexed by slot); members must be few or the caller's own. */
  writeScores(members: Bitmap, scores: Int32Array): void {
    for (const slot of members.toUint32Array()) scores[slot] = 0;
    this.slices.forEach((slice, bit) => {
      for (const slot of this.scope.and(members, slice).toUint32Array())
        scores[slot] = (scores[slot] as number) + 2 ** bit;
    });
  }

  /** Cuts `members` at `score` (bit-sliced comparison, one pass from the top bit). */
  split(members: Bitmap, score: number): ScoreSplit {
    if (score < 0) return { below: EMPTY, equal: EMPTY, above: members };
    if (score >= 2 ** this.slices.length) return { below: members, equal: EMPTY, above: EMPTY };
    const below: Bitmap[] = [];
    const above: Bitmap[] = [];
    let equal = members;
    for (let bit = this.slices.length - 1; bit >= 0 && !equal.isEmpty; bit -= 1) {
      const slice = this.slices[bit] as Bitmap;
      if (Math.floor(score / 2 ** bit) % 2 === 1) {
        below.push(this.scope.andNot(equal, slice));
        equal = this.scope.and(equal, slice);
      } else {
        above.push(this.scope.and(equal, slice));
        equal = this.scope.andNot(equal, slice);
      }
    }
    return { below: this.scope.orMany(below), equal, above: this.scope.orMany(above) };
  }

  /**
   * The `k` best-scoring members (highest first, or lowest with `lowestFirst`), as the members that
   * score strictly better than the k-th and the whole tier that shares its score: from the top bit
   * down, each bit keeps the members that prefer it while they are more than `k`.
   */
  best(members: Bitmap, k: number, lowestFirst: boolean): BestOf {
    const better: Bitmap[] = [];
    let betterCount = 0;
    let tier = members;
    let score = 0;
    for (let bit = this.slices.length - 1; bit >= 0; bit -= 1) {
      const slice = this.slices[bit] as Bitmap;
      const preferred = lowestFirst ? this.scope.andNot(tier, slice) : this.scope.and(tier, slice);
      const preferredBit = lowestFirst ? 0 : 1;
      if (betterCount + preferred.size >= k) {
        tier = preferred;
        score += preferredBit * 2 ** bit;
      } else {
        better.push(preferred);
        betterCount += preferred.size;
        tier = lowestFirst ? this.scope.and(tier, slice) : this.scope.andNot(tier, slice);
        score += (1 - preferredBit) * 2 ** bit;
      }
    }
    return { better: this.scope.orMany(better), tier, score };
  }

  private addAtBit(members: Bitmap, lowestBit: number): void {
    let carry = members;
    let carryOwned = false;
    for (let bit = lowestBit; !carry.isEmpty; bit += 1) {
      while (this.slices.length <= bit) {
        this.slices.push(EMPTY);
        this.owned.push(false);
      }
      const slice = this.slices[bit] as Bitmap;
      if (slice.isEmpty) {
        this.slices[bit] = carry;
        this.owned[bit] = carryOwned;
        return;
      }
      const nextCarry = this.scope.and(slice, carry);
      // A slice this object made is changed in place (no new bitmap); an input is never changed.
      if (this.owned[bit] === true) slice.xorInPlace(carry);
      else {
        this.slices[bit] = this.scope.xor(slice, carry);
        this.owned[bit] = true;
      }
      carry = nextCarry;
      carryOwned = true;
    }
  }
}
