import type { Db } from '../../db/connect.js';
import { agentsChangedAfter, readChangeHead } from './change-feed-store.js';
import { BadRequestError } from '../../kernel/errors.js';
import { toPublishedProfile } from './agent-view.js';
import { registeredProvenance } from './provenance-schemas.js';
import { CHANGE_FEED_RULES, type ChangeFeedQuery, type ChangePage } from './change-feed-schemas.js';

export interface ChangeFeedDeps {
  db: Db;
  publicUrl: string;
}

/**
 * The change feed mirrors follow: agents created, updated or deactivated after a cursor, in commit
 * order (the change sequence of change-feed-store.ts, which commits in order on every node).
 */
export class ChangeFeedService {
  constructor(private readonly deps: ChangeFeedDeps) {}

  async changes(request: ChangeFeedQuery): Promise<ChangePage> {
    const after = request.since === undefined ? 0 : decodeFeedCursor(request.since);
    const limit = request.limit ?? CHANGE_FEED_RULES.limitDefault;
    const rows = await agentsChangedAfter(this.deps.db, after, limit + 1);
    if (rows.length === 0) await this.assertNotAhead(after);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      changes: page.map((row) => ({
        did: row.did,
        status: row.status,
        updated_at: Number(row.updated_at),
        deactivated_at: row.deactivated_at === null ? null : Number(row.deactivated_at),
        profile: row.status === 'active' ? toPublishedProfile(row, this.deps.publicUrl) : null,
        // The feed holds this registry's own changes only: remote entries are never re-published.
        provenance: registeredProvenance(this.deps.publicUrl),
      })),
      next_cursor: encodeFeedCursor(last === undefined ? after : Number(last.change_seq)),
      has_more: rows.length > limit,
    };
  }

  /**
   * Every cursor this feed hands out is at or below the head, and the head only grows. A cursor past it
   * comes from another registry or from before a restore from backup; following it would wait until
   * the numbers catch up and then skip every change numbered below it, so the mirror must replay.
   * Checked only on an empty page: a page with changes after the cursor proves it is not ahead.
   */
  private async assertNotAhead(after: number): Promise<void> {
    const head = await readChangeHead(this.deps.db);
    if (after <= head) return;
    throw new BadRequestError(
      'INVALID_CURSOR',
      `since is ahead of this registry's change feed (position ${after}, feed at ${head}): it comes from another registry or from before the registry was restored from a backup; replay the feed from the beginning (omit since) and rebuild the mirror`,
    );
  }
}

function encodeFeedCursor(seq: number): string {
  return Buffer.from(JSON.stringify({ v: 1, seq })).toString('base64url');
}

function decodeFeedCursor(cursor: string): number {
  try {
    const body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      v?: unknown;
      seq?: unknown;
    };
    if (body.v === 1 && typeof body.seq === 'number' && Number.isSafeInteger(body.seq) && body.seq >= 0) {
      return body.seq;
    }
  } catch {
    // answered below
  }
  throw new BadRequestError(
    'INVALID_CURSOR',
    'since must be a next_cursor returned by this feed, unchanged (omit it to start from the beginning)',
  );
}
