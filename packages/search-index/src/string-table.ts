import { withRoom } from './typed-arrays.js';

/** Bucket value of a removed entry: probing goes on past it, an insert may take its place. */
const REMOVED = -1;
const EMPTY = 0;

/**
 * Strings under numbers the caller chooses (slots), kept outside the JavaScript heap: their UTF-8
 * bytes in one buffer and a hash table (open addressing over a typed array) from string to slot. The
 * search index keeps its DIDs (one per agent) and its stems (about one per agent: a name's serial)
 * in two of these. At a million agents a string and a Map entry each are millions more objects for
 * every garbage collection to pass over (docs/decisions/performance.md, "Search index DIDs off the JavaScript
 * heap"); typed arrays are one object each whatever they hold.
 *
 * Strings compare by their UTF-8 bytes, which is code point order (SQLite's and PostgreSQL's "C"
 * order; for ASCII, also JavaScript's). A string must be well-formed Unicode: a lone surrogate would
 * be stored as U+FFFD (the index's DIDs are ASCII, its stems come out of String.normalize).
 */
export class StringTable {
  private bytes = Buffer.alloc(1 << 16);
  private used = 0;
  /** Bytes of strings no slot holds any more; reclaimed when the buffer is full. */
  private garbage = 0;
  private starts = new Int32Array(1024);
  /** Byte length of each slot's string; 0 when the slot holds none. */
  private lengths = new Int32Array(1024);
  /** Bytes reserved for each slot's string: a slot given back to the same string reuses them. */
  private capacities = new Int32Array(1024);
  private hashes = new Int32Array(1024);
  /** slot + 1 per bucket, EMPTY or REMOVED; a power of two long, at most half full. */
  private buckets = new Int32Array(2048);
  private entries = 0;
  private removedBuckets = 0;
  /** A string being looked up, encoded. */
  private scratch = Buffer.alloc(256);
  private probe = Buffer.alloc(0);

  /** Gives `slot` (which must hold none, and is not PROBE_SLOT) the string `text`. */
  set(slot: number, text: string): void {
    if (slot === PROBE_SLOT) throw new Error('string table: slot 0 stands for the probe');
    if (slot >= this.lengths.length) this.growSlots(slot + 1);
    if (this.lengths[slot] !== 0) throw new Error(`string table: slot ${slot} already holds a string`);
    // Before this slot holds its string, so that a rehash does not place it as well.
    if ((this.entries + this.removedBuckets + 1) * 2 > this.buckets.length) this.rehash();
    const length = this.encode(text);
    if (length === 0) throw new Error('string table: a string cannot be empty');
    // A slot is usually given back to the string it held (an agent's profile update): its old bytes fit.
    if ((this.capacities[slot] as number) >= length) {
      this.garbage -= this.capacities[slot] as number;
    } else {
      if (this.used + length > this.bytes.length) this.makeRoom(length);
      this.starts[slot] = this.used;
      this.capacities[slot] = length;
      this.used += length;
    }
    this.scratch.copy(this.bytes, this.starts[slot] as number, 0, length);
    this.lengths[slot] = length;
    const hash = hashBytes(this.scratch, length);
    this.hashes[slot] = hash;
    this.insertBucket(slot, hash);
    this.entries += 1;
  }

  /** The slot holding `text`, or undefined. */
  slotOf(text: string): number | undefined {
    const length = this.encode(text);
    const hash = hashBytes(this.scratch, length);
    const mask = this.buckets.length - 1;
    for (let bucket = hash & mask; ; bucket = (bucket + 1) & mask) {
      const entry = this.buckets[bucket] as number;
      if (entry === EMPTY) return undefined;
      if (entry === REMOVED) continue;
      const slot = entry - 1;
      if (this.hashes[slot] === hash && this.holdsScratch(slot, length)) return slot;
    }
  }

  has(text: string): boolean {
    return this.slotOf(text) !== undefined;
  }

  /** The string of `slot`, which must hold one. */
  get(slot: number): string {
    const start = this.starts[slot] as number;
    return this.bytes.toString('utf8', start, start + (this.lengths[slot] as number));
  }

  /** Forgets the string of `slot`. */
  delete(slot: number): void {
    if (slot >= this.lengths.length) return;
    const length = this.lengths[slot] as number;
    if (length === 0) return;
    const hash = this.hashes[slot] as number;
    const mask = this.buckets.length - 1;
    for (let bucket = hash & mask; ; bucket = (bucket + 1) & mask) {
      const entry = this.buckets[bucket] as number;
      if (entry === EMPTY) break;
      if (entry === slot + 1) {
        this.buckets[bucket] = REMOVED;
        this.removedBuckets += 1;
        break;
      }
    }
    this.entries -= 1;
    this.lengths[slot] = 0;
    this.garbage += this.capacities[slot] as number;
  }

  /** The string `PROBE_SLOT` stands for in `compare` (a cursor's DID, a query's prefix), which no slot holds. */
  setProbe(text: string): void {
    this.probe = Buffer.from(text, 'utf8');
  }

  /** Whether the string of `slot` begins with the probe's. */
  startsWithProbe(slot: number): boolean {
    const length = this.probe.length;
    if ((this.lengths[slot] as number) < length) return false;
    const start = this.starts[slot] as number;
    for (let index = 0; index < length; index += 1) {
      if (this.bytes[start + index] !== this.probe[index]) return false;
    }
    return true;
  }

  /** Byte order of two slots' strings; `PROBE_SLOT` stands for the probe's. */
  compare(a: number, b: number): number {
    const bytesA = a === PROBE_SLOT ? this.probe : this.bytes;
    const startA = a === PROBE_SLOT ? 0 : (this.starts[a] as number);
    const lengthA = a === PROBE_SLOT ? this.probe.length : (this.lengths[a] as number);
    const bytesB = b === PROBE_SLOT ? this.probe : this.bytes;
    const startB = b === PROBE_SLOT ? 0 : (this.starts[b] as number);
    const lengthB = b === PROBE_SLOT ? this.probe.length : (this.lengths[b] as number);
    const common = Math.min(lengthA, lengthB);
    for (let index = 0; index < common; index += 1) {
      const difference = (bytesA[startA + index] as number) - (bytesB[startB + index] as number);
      if (difference !== 0) return difference;
    }
    return lengthA - lengthB;
  }

  /** Encodes `text` into the scratch buffer; returns its byte length. */
  private encode(text: string): number {
    if (text.length * 3 > this.scratch.length) this.scratch = Buffer.alloc(text.length * 3);
    return this.scratch.write(text, 0, 'utf8');
  }

  private holdsScratch(slot: number, length: number): boolean {
    if (this.lengths[slot] !== length) return false;
    const start = this.starts[slot] as number;
    for (let index = 0; index < length; index += 1) {
      if (this.bytes[start + index] !== this.scratch[index]) return false;
    }
    return true;
  }

  private insertBucket(slot: number, hash: number): void {
    const mask = this.buckets.length - 1;
    let bucket = hash & mask;
    while ((this.buckets[bucket] as number) > EMPTY) bucket = (bucket + 1) & mask;
    if (this.buckets[bucket] === REMOVED) this.removedBuckets -= 1;
    this.buckets[bucket] = slot + 1;
  }

  /** Rebuilds the buckets without removed entries, doubling them when they are half full of live ones. */
  private rehash(): void {
    const size = (this.entries + 1) * 4 > this.buckets.length ? this.buckets.length * 2 : this.buckets.length;
    this.buckets = new Int32Array(size);
    this.removedBuckets = 0;
    for (let slot = 0; slot < this.lengths.length; slot += 1) {
      if ((this.lengths[slot] as number) > 0) this.insertBucket(slot, this.hashes[slot] as number);
    }
  }

  private growSlots(length: number): void {
    this.starts = withRoom(this.starts, length);
    this.lengths = withRoom(this.lengths, length);
    this.capacities = withRoom(this.capacities, length);
    this.hashes = withRoom(this.hashes, length);
  }

  /** Compacts away strings no slot holds, and grows the buffer when that is not enough. */
  private makeRoom(needed: number): void {
    const live = this.used - this.garbage;
    const bytes = Buffer.alloc(Math.max(this.bytes.length, 2 * (live + needed)));
    let used = 0;
    for (let slot = 0; slot < this.lengths.length; slot += 1) {
      const length = this.lengths[slot] as number;
      this.capacities[slot] = length;
      if (length === 0) continue;
      const start = this.starts[slot] as number;
      this.bytes.copy(bytes, used, start, start + length);
      this.starts[slot] = used;
      used += length;
    }
    this.bytes = bytes;
    this.used = used;
    this.garbage = 0;
  }
}

/** The slot that stands for the probe in `compare`: never a string's own. */
export const PROBE_SLOT = 0;

/** FNV-1a over bytes, as a 31-bit non-negative number. */
function hashBytes(bytes: Uint8Array, length: number): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < length; index += 1) {
    hash ^= bytes[index] as number;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 1;
}
