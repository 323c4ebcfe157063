import type { Db } from '../../db/connect.js';
import type { AgentsTable } from '../../db/schema/index.js';

export type AgentLabelRow = Pick<AgentsTable, 'did' | 'name' | 'status' | 'service_success_rate'>;

/** Name, status and 30-day success rate of these agents, in one query by primary key. */
export async function readAgentLabels(db: Db, dids: readonly string[]): Promise<AgentLabelRow[]> {
  if (dids.length === 0) return [];
  return db
    .selectFrom('agents')
    .select(['did', 'name', 'status', 'service_success_rate'])
    .where('did', 'in', dids)
    .execute();
}
