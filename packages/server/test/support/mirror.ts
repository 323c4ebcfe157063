import assert from 'node:assert/strict';

export interface Change {
  did: string;
  status: 'active' | 'deactivated';
  updated_at: number;
  deactivated_at: number | null;
  profile: (Record<string, unknown> & { did: string; name: string; reputation_score: number }) | null;
}

export interface ChangePage {
  changes: Change[];
  next_cursor: string;
  has_more: boolean;
}

/** Reads one page of GET /api/agents/changes with the given query string, from some node. */
export type ReadPage = (query: string) => Promise<ChangePage>;

/** A mirror as docs/mirroring.md describes it: replay from the start, then poll with next_cursor. */
export class Mirror {
  readonly agents = new Map<string, NonNullable<Change['profile']>>();
  readonly seen: Change[] = [];
  cursor: string | undefined;

  /** Reads pages until the feed has nothing more right now; returns how many changes it applied. */
  async drain(read: ReadPage, limit = 7): Promise<number> {
    let applied = 0;
    for (;;) {
      const page = await read(`limit=${limit}${this.cursor === undefined ? '' : `&since=${this.cursor}`}`);
      assert.equal(typeof page.next_cursor, 'string');
      for (const change of page.changes) {
        this.seen.push(change);
        if (change.profile === null) this.agents.delete(change.did);
        else this.agents.set(change.did, change.profile);
        applied += 1;
      }
      this.cursor = page.next_cursor;
      if (!page.has_more) return applied;
    }
  }
}
