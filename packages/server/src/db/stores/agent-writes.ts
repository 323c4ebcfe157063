import type { Db } from '../connect.js';
import { insertAgent, updateActiveAgent, type AgentPatch, type NewAgentRow } from './agents.js';
import { stampAgentChange } from './change-feed.js';

/**
 * Writes that change what an agent's profile shows, each with the agent's place in the change feed in
 * the same transaction (the stamp last): every node's search index follows the feed, so a committed
 * write is in the next search everywhere.
 */

/** Inserts an agent, inside a transaction (or savepoint) the caller holds; a unique violation propagates. */
export async function insertAgentIn(trx: Db, row: NewAgentRow): Promise<void> {
  await insertAgent(trx, row);
  await stampAgentChange(trx, row.did);
}

/** updateActiveAgent and the agent's place in the change feed, in one transaction. */
export async function updateAgentAndStamp(db: Db, did: string, patch: AgentPatch): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
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
