/**
 * The first `k` of `items` under `compare`, in order: a bounded heap, O(n log k), for picking a page
 * out of many candidates without sorting them all.
 */
export function topK(
  items: ArrayLike<number>,
  k: number,
  compare: (a: number, b: number) => number,
): number[] {
  if (k <= 0) return [];
  const heap: number[] = []; // max-heap by `compare`: heap[0] is the worst kept so far
  const worse = (i: number, j: number) => compare(heap[i] as number, heap[j] as number) > 0;
  const swap = (i: number, j: number) => {
    const held = heap[i] as number;
    heap[i] = heap[j] as number;
    heap[j] = held;
  };
  const siftDown = (start: number) => {
    for (let i = start; ;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let largest = i;
      if (left < heap.length && worse(left, largest)) largest = left;
      if (right < heap.length && worse(right, largest)) largest = right;
      if (largest === i) return;
      swap(i, largest);
      i = largest;
    }
  };
  for (let index = 0; index < items.length; index += 1) {
    const item = items[index] as number;
    if (heap.length < k) {
      heap.push(item);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (!worse(i, parent)) break;
        swap(i, parent);
        i = parent;
      }
    } else if (compare(item, heap[0] as number) < 0) {
      heap[0] = item;
      siftDown(0);
    }
  }
  return heap.sort(compare);
}
