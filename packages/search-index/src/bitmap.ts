import roaring from 'roaring';

/** Compressed sets of slot numbers (CRoaring through its maintained Node binding). */
export const { RoaringBitmap32: Bitmap } = roaring;
export type Bitmap = InstanceType<typeof Bitmap>;

export const EMPTY: Bitmap = new Bitmap();

/** Emptied bitmaps that searches take their working sets from; at most this many are kept. */
const SPARE_MAX = 256;
const spare: Bitmap[] = [];
/** Slots handed to CRoaring as one typed array (a plain array is read element by element). */
let slotScratch = new Uint32Array(1024);

/**
 * The bitmaps one search computes. Each is taken from a process-wide stock of emptied bitmaps and
 * given back, emptied, when the search ends, so a search makes no new bitmap objects. A new one
 * would cost twice over: CRoaring's memory counts as V8 external memory (left to finalizers, a few
 * hundred searches' worth forces full garbage collections), and each wrapper carries a weak handle
 * that the next young-generation collection must finalize inside its pause (docs/decisions/performance.md, "A
 * search's bitmaps come from a stock"). Searches run synchronously, so one search at a time holds
 * bitmaps of the stock.
 */
export class BitmapScope {
  private readonly made: Bitmap[] = [];

  and(a: Bitmap, b: Bitmap): Bitmap {
    // Copy the smaller one: the intersection is no larger.
    return a.size <= b.size ? this.copyOf(a).andInPlace(b) : this.copyOf(b).andInPlace(a);
  }

  andNot(a: Bitmap, b: Bitmap): Bitmap {
    return this.copyOf(a).andNotInPlace(b);
  }

  xor(a: Bitmap, b: Bitmap): Bitmap {
    return a.size >= b.size ? this.copyOf(a).xorInPlace(b) : this.copyOf(b).xorInPlace(a);
  }

  orMany(bitmaps: readonly Bitmap[]): Bitmap {
    // The largest first: the others are merged into a copy of it.
    let largest = 0;
    bitmaps.forEach((bitmap, index) => {
      if (bitmap.size > (bitmaps[largest] as Bitmap).size) largest = index;
    });
    const union = bitmaps.length === 0 ? this.take() : this.copyOf(bitmaps[largest] as Bitmap);
    bitmaps.forEach((bitmap, index) => {
      if (index !== largest && !bitmap.isEmpty) union.orInPlace(bitmap);
    });
    return union;
  }

  /** Intersection, smallest first so that an empty result ends it early. */
  intersectAll(bitmaps: readonly Bitmap[]): Bitmap {
    const [first, ...rest] = [...bitmaps].sort((a, b) => a.size - b.size);
    if (first === undefined) return this.take();
    const result = this.copyOf(first);
    for (const bitmap of rest) {
      if (result.isEmpty) break;
      result.andInPlace(bitmap);
    }
    return result;
  }

  of(slots: readonly number[]): Bitmap {
    if (slots.length > slotScratch.length) slotScratch = new Uint32Array(slots.length * 2);
    slotScratch.set(slots);
    return this.take().copyFrom(slotScratch.subarray(0, slots.length));
  }

  /** Gives the bitmaps back to the stock, emptied (their memory freed), or frees them when it is full. */
  dispose(): void {
    for (const bitmap of this.made) {
      if (spare.length < SPARE_MAX) {
        bitmap.clear();
        spare.push(bitmap);
      } else {
        bitmap.dispose();
      }
    }
    this.made.length = 0;
  }

  private copyOf(bitmap: Bitmap): Bitmap {
    return this.take().copyFrom(bitmap);
  }

  private take(): Bitmap {
    const bitmap = spare.pop() ?? new Bitmap();
    this.made.push(bitmap);
    return bitmap;
  }
}
