import type { Db } from '../db/connect.js';
import { readChangeHead } from '../db/stores/change-feed.js';
import type { IndexedAgent, SearchIndex } from './search-index.js';

/** Rows read per query while loading or catching up. */
const BATCH = 2000;

type ChangeRow = IndexedAgent & { change_seq: number | string | null };

/**
 * Agents changed after `seq`, in change order, through the change_seq index. No status condition in SQL:
 * with one, SQLite's planner (no ANALYZE) took the (status, created_at) index and sorted every active
 * agent for each batch, so loading grew with the square of the registry (minutes at 1,000,000 agents).
 */
async function changedAfter(db: Db, seq: number): Promise<ChangeRow[]> {
  return changedAfterQuery(db, seq).execute();
}

export function changedAfterQuery(db: Db, seq: number) {
  return db
    .selectFrom('agents')
    .select([
      'did',
      'name',
      'description',
      'capabilities',
      'tags',
      'status',
      'reputation_score',
      'average_rating',
      'total_reviews',
      'created_at',
      'change_seq',
    ])
    .where('change_seq', '>', seq)
    .orderBy('change_seq')
    .limit(BATCH);
}

/**
 * Keeps a node's search index equal to the database: loads every active agent once, then before each
 * search reads the change-feed head (one indexed row) and applies the agents changed since the index's
 * position. Sequence order is commit order (db/stores/change-feed.ts), so a head read after a write
 * committed on any node makes that write part of the next search.
 */
export class SearchIndexFollower {
  private position = 0;
  private loaded = false;
  private catchingUp: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    readonly index: SearchIndex,
  ) {}

  get ready(): boolean {
    return this.loaded;
  }

  /** Reads every active agent in change order, yielding to the event loop between batches. */
  async load(signal?: AbortSignal): Promise<void> {
    const head = await readChangeHead(this.db);
    let seq = 0;
    this.index.beginLoad();
    for (;;) {
      if (signal?.aborted === true) return;
      const rows = await changedAfter(this.db, seq);
      this.index.loadBatch(rows.filter((row) => row.status === 'active'));
      const last = rows.at(-1);
      if (last === undefined || rows.length < BATCH) break;
      seq = Number(last.change_seq);
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.index.endLoad();
    // Everything up to `head` was read; changes after it (even to agents loaded above) are re-read.
    this.position = head;
    this.loaded = true;
    await this.catchUp();
  }

  /** Brings the index up to the latest committed change; concurrent callers share one catch-up. */
  async catchUp(): Promise<void> {
    const head = await readChangeHead(this.db);
    if (head <= this.position) return;
    while (this.catchingUp !== undefined) await this.catchingUp;
    if (head <= this.position) return;
    this.catchingUp = this.applyChangesUpTo(head).finally(() => {
      this.catchingUp = undefined;
    });
    await this.catchingUp;
  }

  private async applyChangesUpTo(head: number): Promise<void> {
    while (this.position < head) {
      const rows = await changedAfter(this.db, this.position);
      for (const row of rows) this.index.apply(row);
      const last = rows.at(-1);
      // Fewer rows than asked: every change up to the head is applied (later ones may be, too).
      if (last === undefined || rows.length < BATCH) {
        this.position = Math.max(head, last === undefined ? 0 : Number(last.change_seq));
        return;
      }
      this.position = Number(last.change_seq);
    }
  }
}
