type SlotArray = Uint8Array | Int32Array | Uint32Array | Float64Array;

/**
 * `array` itself when it holds at least `length` entries, else a copy at least twice as long (so
 * that growing one entry at a time costs amortized constant time), zero beyond the copied part.
 */
export function withRoom<T extends SlotArray>(array: T, length: number): T {
  if (length <= array.length) return array;
  const grown = new (array.constructor as new (size: number) => T)(Math.max(length, array.length * 2));
  grown.set(array);
  return grown;
}

/** Keeps, in place and in order, the items that pass; returns the kept part. */
export function keepWhere(items: Uint32Array, keep: (slot: number) => boolean): Uint32Array {
  let kept = 0;
  for (let index = 0; index < items.length; index += 1) {
    const slot = items[index] as number;
    if (keep(slot)) items[kept++] = slot;
  }
  return items.subarray(0, kept);
}
