import { ByteBoundedCache } from '../../kernel/byte-bounded-cache.js';

interface CachedProfile {
  changeSeq: number;
  body: string;
}

const BEYOND_LATIN1 = /[\u0100-\uffff]/;

/** What the entry holds in memory: V8 keeps a string one byte a character unless it needs two. */
const entryBytes = (did: string, body: string): number =>
  did.length + (BEYOND_LATIN1.test(body) ? 2 : 1) * body.length + 96;

/**
 * Serialised public profiles of agents without a service record, each with the change number it was read at:
 * the per-agent part of a profile read, done once per agent version (docs/decisions/performance.md, "Profile
 * cache"). Never trusted on its own: a read hands it the agent's current change number from the database, so
 * a write on any node is seen by the next read on every node.
 */
export class ProfileCache {
  private readonly entries: ByteBoundedCache<CachedProfile>;
  private hitCount = 0;
  private missCount = 0;

  constructor(maxBytes: number) {
    this.entries = new ByteBoundedCache(maxBytes);
  }

  /** Whether any body of this agent is cached (at whatever change number). */
  holds(did: string): boolean {
    return this.entries.has(did);
  }

  /**
   * The body cached for this agent at exactly this change number; `null` (the agent cannot be cached
   * now: it has a service record) is a miss, like a different number.
   */
  get(did: string, changeSeq: number | null): string | undefined {
    const entry = changeSeq === null ? undefined : this.entries.get(did);
    if (entry !== undefined && entry.changeSeq === changeSeq) {
      this.hitCount++;
      return entry.body;
    }
    this.missCount++;
    return undefined;
  }

  /** A read of an agent the cache does not hold (no check was made). */
  recordMiss(): void {
    this.missCount++;
  }

  /** Keeps the body at its change number; `null` (not cacheable) drops what the cache held for the agent. */
  keep(did: string, changeSeq: number | null, body: string): void {
    if (changeSeq === null) this.entries.delete(did);
    else if (this.entries.maxBytes > 0) this.entries.set(did, { changeSeq, body }, entryBytes(did, body));
  }

  /** Forgets every body: after a restore from backup, change numbers are handed out a second time. */
  clear(): void {
    this.entries.clear();
  }

  get hits(): number {
    return this.hitCount;
  }

  get misses(): number {
    return this.missCount;
  }

  get bytes(): number {
    return this.entries.bytes;
  }

  get size(): number {
    return this.entries.size;
  }
}
