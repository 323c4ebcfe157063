/**
 * A least-recently-used map bounded by the bytes its entries stand for, not by their number: compiled
 * validators keep memory roughly in proportion to their schema's JSON, so a thousand small schemas fit
 * where a handful of large ones would not. `onEvict` lets the owner release what the entry held.
 */
export class ByteBoundedCache<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private used = 0;

  constructor(
    readonly maxBytes: number,
    private readonly onEvict: (value: V) => void = () => {},
  ) {}

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Whether the key is cached, without marking it used. */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Drops the key, if cached (its value goes to `onEvict`). */
  delete(key: string): void {
    const existing = this.entries.get(key);
    if (existing === undefined) return;
    this.entries.delete(key);
    this.used -= existing.bytes;
    this.onEvict(existing.value);
  }

  /** Drops every entry (each value goes to `onEvict`). */
  clear(): void {
    for (const key of [...this.entries.keys()]) this.delete(key);
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    // Map keeps insertion order: re-inserting marks the entry most recently used.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Keeps the value unless it alone exceeds the budget; evicts the least recently used to make room. */
  set(key: string, value: V, bytes: number): void {
    const existing = this.entries.get(key);
    if (existing !== undefined) {
      this.entries.delete(key);
      this.used -= existing.bytes;
      this.onEvict(existing.value);
    }
    if (bytes > this.maxBytes) {
      this.onEvict(value);
      return;
    }
    while (this.used + bytes > this.maxBytes) {
      const oldest = this.entries.entries().next();
      if (oldest.done === true) break;
      const [oldestKey, entry] = oldest.value;
      this.entries.delete(oldestKey);
      this.used -= entry.bytes;
      this.onEvict(entry.value);
    }
    this.entries.set(key, { value, bytes });
    this.used += bytes;
  }
}
