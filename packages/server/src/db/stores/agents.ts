import type { Insertable, Updateable } from 'kysely';
import type { Db } from '../connect.js';
import type { AgentsTable } from '../schema/index.js';

export type AgentRow = AgentsTable;
export type NewAgentRow = Insertable<AgentsTable>;
export type AgentPatch = Updateable<AgentsTable>;

export async function insertAgent(db: Db, row: NewAgentRow): Promise<void> {
  await db.insertInto('agents').values(row).execute();
}

export async function findAgent(db: Db, did: string): Promise<AgentRow | undefined> {
  return db.selectFrom('agents').selectAll().where('did', '=', did).executeTakeFirst();
}

export async function findActiveAgent(db: Db, did: string): Promise<AgentRow | undefined> {
  return db
    .selectFrom('agents')
    .selectAll()
    .where('did', '=', did)
    .where('status', '=', 'active')
    .executeTakeFirst();
}

export async function findAgentStatus(db: Db, did: string): Promise<AgentRow['status'] | undefined> {
  const row = await db.selectFrom('agents').select('status').where('did', '=', did).executeTakeFirst();
  return row?.status;
}

/** Applies a patch to an active agent; returns false when no active agent has that DID. */
export async function updateActiveAgent(db: Db, did: string, patch: AgentPatch): Promise<boolean> {
  const result = await db
    .updateTable('agents')
    .set(patch)
    .where('did', '=', did)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
