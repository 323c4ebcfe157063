/**
 * Search side tables, one row per (agent, value), written in the same transaction as the agent row.
 * Values are lower-cased so filters are case-insensitive and use the (value, did) indexes.
 */
export interface AgentCapabilitiesTable {
  did: string;
  type: string;
}

export interface AgentTagsTable {
  did: string;
  tag: string;
}

export const agentCapabilitiesTableName = 'agent_capabilities';
export const agentTagsTableName = 'agent_tags';
export type AgentIndexPartial = {
  [agentCapabilitiesTableName]: AgentCapabilitiesTable;
  [agentTagsTableName]: AgentTagsTable;
};
