import { ByteBoundedCache } from '../byte-bounded-cache.js';

interface CachedProfile {
  changeSeq: number;
  body: string;
}

const BEYOND_LATIN1 = /[\u0100-\uffff]/;

/** What the entry holds in memory: V8 keeps a string one byte a character unless it needs two. */
const entryBytes = (did: string, body: string): number =>
  did.length + (BEYOND_LATIN1.test(body) ? 2 : 1) * body.length + 96;

/**
 * Serialised public profiles of agents without a service record, each with the change number it was
 * read at (issue 18: the per-agent part of a profile read, done once per agent version instead of once
 * per request). Never trusted on its own: a read hands it the agent's current change number from the
 * database, so a write on any node is seen by the next read on every node.
 */
export class ProfileCache {
  private readonly entries: ByteBoundedCache<CachedProfile>;
  hits = 0;
  misses = 0;

  constructor(maxBytes: number) {
    this.entries = new ByteBoundedCache(maxBytes);
  }

  /** Whether any body of this agent is cached (at whatever change number). */
  holds(did: string): boolean {
    return this.entries.has(did);
  }

  /** The body cached for this agent at exactly this change number. */
  get(did: string, changeSeq: number): string | undefined {
    const entry = this.entries.get(did);
    if (entry !== undefined && entry.changeSeq === changeSeq) {
      this.hits++;
      return entry.body;
    }
    this.misses++;
    return undefined;
  }

  set(did: string, changeSeq: number, body: string): void {
    if (this.entries.maxBytes === 0) return;
    this.entries.set(did, { changeSeq, body }, entryBytes(did, body));
  }

  get bytes(): number {
    return this.entries.bytes;
  }

  get size(): number {
    return this.entries.size;
  }
}
