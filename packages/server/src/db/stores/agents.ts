import type { Insertable, Selectable, Updateable } from 'kysely';
import { compiledOnce } from '../compiled.js';
import type { Db } from '../connect.js';
import type { AgentsTable } from '../schema/index.js';

export type AgentRow = Selectable<AgentsTable>;
export type NewAgentRow = Insertable<AgentsTable>;
export type AgentPatch = Updateable<AgentsTable>;

export async function insertAgent(db: Db, row: NewAgentRow): Promise<void> {
  await db.insertInto('agents').values(row).execute();
}

const agentByDid = compiledOnce(
  (db, did: string) => db.selectFrom('agents').selectAll().where('did', '=', did),
  ['\u0000did'] as const,
);

export async function findAgent(db: Db, did: string): Promise<AgentRow | undefined> {
  return (await agentByDid(db, did))[0];
}

export async function findActiveAgent(db: Db, did: string): Promise<AgentRow | undefined> {
  return db
    .selectFrom('agents')
    .selectAll()
    .where('did', '=', did)
    .where('status', '=', 'active')
    .executeTakeFirst();
}

const statusByDid = compiledOnce(
  (db, did: string) => db.selectFrom('agents').select('status').where('did', '=', did),
  ['\u0000did'] as const,
);

export async function findAgentStatus(db: Db, did: string): Promise<AgentRow['status'] | undefined> {
  return (await statusByDid(db, did))[0]?.status;
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
