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

/**
 * `topK` for items ordered by a number each: `keys[item] * direction`, smallest first (an order's
 * labels, `direction` -1 for the reverse order). The heap holds the keys beside the items, so most
 * items are turned away by one comparison of two numbers, with no comparator call.
 */
export function topKByKey(
  items: ArrayLike<number>,
  k: number,
  keys: Float64Array,
  direction: 1 | -1,
): number[] {
  if (k <= 0) return [];
  const heapItems = new Uint32Array(k);
  const heapKeys = new Float64Array(k);
  let size = 0;
  // Max-heap by key: heapKeys[0] is the worst kept so far.
  const siftDown = (start: number) => {
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let largest = i;
      if (left < size && (heapKeys[left] as number) > (heapKeys[largest] as number)) largest = left;
      if (right < size && (heapKeys[right] as number) > (heapKeys[largest] as number)) largest = right;
      if (largest === i) return;
      const key = heapKeys[i] as number;
      const item = heapItems[i] as number;
      heapKeys[i] = heapKeys[largest] as number;
      heapItems[i] = heapItems[largest] as number;
      heapKeys[largest] = key;
      heapItems[largest] = item;
      i = largest;
    }
  };
  for (let index = 0; index < items.length; index += 1) {
    const item = items[index] as number;
    const key = direction * (keys[item] as number);
    if (size < k) {
      let i = size++;
      heapKeys[i] = key;
      heapItems[i] = item;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if ((heapKeys[parent] as number) >= key) break;
        heapKeys[i] = heapKeys[parent] as number;
        heapItems[i] = heapItems[parent] as number;
        heapKeys[parent] = key;
        heapItems[parent] = item;
        i = parent;
      }
    } else if (key < (heapKeys[0] as number)) {
      heapKeys[0] = key;
      heapItems[0] = item;
      siftDown(0);
    }
  }
  return Array.from(heapItems.subarray(0, size)).sort(
    (a, b) => direction * ((keys[a] as number) - (keys[b] as number)),
  );
}
