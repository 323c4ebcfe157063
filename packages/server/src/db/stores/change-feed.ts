import { sql } from 'kysely';
import type { Db } from '../connect.js';
import type { AgentRow } from './agents.js';

/**
 * Gives the agent the next change sequence number. Call it as the last statement of the transaction
 * that changed the agent: the head row stays locked until commit, so numbers commit in order.
 */
export async function stampAgentChange(db: Db, did: string): Promise<number> {
  const { rows } = await sql<{ seq: number | string }>`update change_feed_head set seq = seq + 1
    where id = 1 returning seq`.execute(db);
  const seq = Number(rows[0]?.seq);
  if (!Number.isSafeInteger(seq)) throw new Error('change_feed_head row is missing (migration 008)');
  await db.updateTable('agents').set({ change_seq: seq }).where('did', '=', did).execute();
  return seq;
}

/** The last change sequence number committed: every change up to it is readable. */
export async function readChangeHead(db: Db): Promise<number> {
  const row = await db.selectFrom('change_feed_head').select('seq').where('id', '=', 1).executeTakeFirst();
  return Number(row?.seq ?? 0);
}

/** Agents whose latest change comes after `seq`, in change order (each agent once, at its latest state). */
export async function agentsChangedAfter(db: Db, seq: number, limit: number): Promise<AgentRow[]> {
  return db
    .selectFrom('agents')
    .selectAll()
    .where('change_seq', '>', seq)
    .orderBy('change_seq')
    .limit(limit)
    .execute();
}
