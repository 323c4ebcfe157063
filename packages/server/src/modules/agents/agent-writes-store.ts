import type { Db } from '../../db/connect.js';
import { sqlDialect } from '../../db/dialect.js';
import type { TransactionRunner } from '../../db/group-commit.js';
import {
  insertRegisteredAgent,
  updateActiveAgent,
  type AgentPatch,
  type RegisteredAgentRow,
} from './agents-store.js';
import { advanceChangeHead, logStampedChange, stampAgentChange } from './change-feed-store.js';

/**
 * Writes that change what an agent's profile shows, each with the agent's place in the change feed in
 * the same transaction (the stamp last): every node's search index follows the feed, so a committed
 * write is in the next search everywhere.
 */

/**
 * Inserts a registered agent with its change-feed number, inside a transaction (or savepoint) the
 * caller holds; a unique violation propagates and leaves nothing. SQLite: the row takes its number in
 * the insert itself and the head moves after it (two statements). PostgreSQL: the stamp is a statement
 * of its own, after the insert, so the head's lock is taken last.
 */
export async function insertAgentIn(trx: Db, row: RegisteredAgentRow): Promise<void> {
  if (sqlDialect(trx) === 'sqlite') {
    await insertRegisteredAgent(trx, row, true);
    await advanceChangeHead(trx);
    await logStampedChange(trx, row.did, 'register');
    return;
  }
  await insertRegisteredAgent(trx, row, false);
  await stampAgentChange(trx, row.did, 'register');
}

/**
 * updateActiveAgent and the agent's place in the change feed, in one transaction, or (SQLite) in a
 * savepoint of a transaction shared with other writes of agents (db/group-commit.ts): the feed's head,
 * the log's last page and the commit are then written once for the group.
 */
export async function updateAgentAndStamp(
  writes: TransactionRunner,
  did: string,
  patch: AgentPatch,
): Promise<boolean> {
  return writes.run(async (trx) => {
    const updated = await updateActiveAgent(trx, did, patch);
    if (updated) await stampAgentChange(trx, did);
    return updated;
  });
}

export async function countActiveAgents(db: Db): Promise<number> {
  const row = await db
    .selectFrom('agents')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
