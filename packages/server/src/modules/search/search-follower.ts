import type { Db } from '../../db/connect.js';
import { readChangeFeedHead, type ChangeFeedHead } from '../agents/change-feed-store.js';
import { SearchIndex, type IndexedAgent } from '@agent-registry/search-index';
import { INDEXED_AGENT_COLUMNS } from './agent-search-store.js';

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
    .select(INDEXED_AGENT_COLUMNS)
    .where('change_seq', '>', seq)
    .orderBy('change_seq')
    .limit(BATCH);
}

/**
 * Keeps a node's search index equal to the database: loads every active agent once, then before each
 * search reads the change-feed head (one indexed row) and applies the agents changed since the index's
 * position. Sequence order is commit order (modules/agents/change-feed-store.ts), so a head read after a write
 * committed on any node makes that write part of the next search.
 *
 * The head only grows, except when the database is restored from a backup: then it is behind the
 * index's position (or, on PostgreSQL, held by a recreated table), the index holds agents the restore
 * removed and would skip changes numbered below its position. The node then loads a fresh index.
 */
export class SearchIndexFollower {
  private position = 0;
  private generation: string | null = null;
  private loaded = false;
  private catchingUp: Promise<void> | undefined;
  private current: SearchIndex;

  constructor(
    private readonly db: Db,
    index: SearchIndex,
    /** Called after a reload from a restored database, with the agents now indexed. */
    private readonly onReload: (agents: number) => void = () => {},
  ) {
    this.current = index;
  }

  get index(): SearchIndex {
    return this.current;
  }

  get ready(): boolean {
    return this.loaded;
  }

  /** Reads every active agent in change order, yielding to the event loop between batches. */
  async load(signal?: AbortSignal): Promise<void> {
    const head = await this.fill(this.current, signal);
    if (head === undefined) return;
    this.position = head.seq;
    this.generation = head.generation;
    this.loaded = true;
    await this.catchUp();
  }

  /** Brings the index up to the latest committed change; concurrent callers share one catch-up. */
  async catchUp(): Promise<void> {
    let head = await readChangeFeedHead(this.db);
    if (!this.behind(head)) return;
    while (this.catchingUp !== undefined) {
      await this.catchingUp;
      // The restore seen before waiting may be the one the other caller has just reloaded from.
      if (this.restored(head)) head = await readChangeFeedHead(this.db);
    }
    if (!this.behind(head)) return;
    const work = this.restored(head) ? this.reload() : this.applyChangesUpTo(head.seq);
    this.catchingUp = work.finally(() => {
      this.catchingUp = undefined;
    });
    await this.catchingUp;
  }

  private restored(head: ChangeFeedHead): boolean {
    return head.seq < this.position || head.generation !== this.generation;
  }

  private behind(head: ChangeFeedHead): boolean {
    return head.seq > this.position || this.restored(head);
  }

  /**
   * Everything up to the returned head is in `index` (changes after it, even to agents loaded, are
   * re-read by the next catch-up); undefined when aborted.
   */
  private async fill(index: SearchIndex, signal?: AbortSignal): Promise<ChangeFeedHead | undefined> {
    const head = await readChangeFeedHead(this.db);
    let seq = 0;
    index.beginLoad();
    for (;;) {
      if (signal?.aborted === true) return undefined;
      const rows = await changedAfter(this.db, seq);
      index.loadBatch(rows.filter((row) => row.status === 'active'));
      const last = rows.at(-1);
      if (last === undefined || rows.length < BATCH) break;
      seq = Number(last.change_seq);
      await new Promise((resolve) => setImmediate(resolve));
    }
    index.endLoad();
    return head;
  }

  /** A fresh index from the restored database, swapped in whole: searches meanwhile wait for it. */
  private async reload(): Promise<void> {
    const fresh = new SearchIndex();
    const head = await this.fill(fresh);
    if (head === undefined) return;
    this.current = fresh;
    this.position = head.seq;
    this.generation = head.generation;
    this.onReload(fresh.size);
  }

  private async applyChangesUpTo(head: number): Promise<void> {
    while (this.position < head) {
      const rows = await changedAfter(this.db, this.position);
      for (const row of rows) this.current.apply(row);
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
