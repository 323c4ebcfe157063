import roaring from 'roaring';

/** Compressed sets of slot numbers (CRoaring through its maintained Node binding). */
export const { RoaringBitmap32: Bitmap } = roaring;
export type Bitmap = InstanceType<typeof Bitmap>;

export const EMPTY: Bitmap = new Bitmap();

/**
 * The bitmaps one search computes, freed when it ends. CRoaring's memory counts as V8 external
 * memory: left to finalizers, a few hundred searches' worth forces full (stop-the-world) garbage
 * collections of the whole heap, tens of milliseconds each.
 */
export class BitmapScope {
  private readonly made: Bitmap[] = [];

  and(a: Bitmap, b: Bitmap): Bitmap {
    return this.track(Bitmap.and(a, b));
  }

  andNot(a: Bitmap, b: Bitmap): Bitmap {
    return this.track(Bitmap.andNot(a, b));
  }

  xor(a: Bitmap, b: Bitmap): Bitmap {
    return this.track(Bitmap.xor(a, b));
  }

  orMany(bitmaps: readonly Bitmap[]): Bitmap {
    return this.track(Bitmap.orMany(bitmaps));
  }

  /** Intersection, smallest first so that an empty result ends it early. */
  intersectAll(bitmaps: readonly Bitmap[]): Bitmap {
    const [first, ...rest] = [...bitmaps].sort((a, b) => a.size - b.size);
    if (first === undefined) return this.track(new Bitmap());
    let result = this.track(first.clone());
    for (const bitmap of rest) {
      if (result.isEmpty) break;
      result = this.and(result, bitmap);
    }
    return result;
  }

  of(slots: readonly number[]): Bitmap {
    return this.track(new Bitmap(slots));
  }

  dispose(): void {
    for (const bitmap of this.made) bitmap.dispose();
    this.made.length = 0;
  }

  private track(bitmap: Bitmap): Bitmap {
    this.made.push(bitmap);
    return bitmap;
  }
}
