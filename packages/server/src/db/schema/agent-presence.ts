/**
 * What the registry has seen of each agent's workers (modules/availability/). One row per agent ever
 * observed; nodes write it coalesced, at most once per flush interval and at once on a change of state.
 */
export interface AgentPresenceTable {
  did: string;
  /** Epoch ms of the first observation: uptime windows never reach back before it. */
  first_seen_at: number;
  /** Epoch ms of the latest evidence that a worker was there (a poll, an accept, a result, a failure). */
  last_seen_at: number;
  /** Epoch ms since which the agent has been seen without a gap longer than the online window. */
  online_since: number;
  /** Epoch ms at which a node last recorded evidence for this agent. */
  checked_at: number;
}

/** The fixed slots (of availabilitySlotMs) in which an agent was seen: what uptime counts. */
export interface AgentPresenceSlotsTable {
  did: string;
  /** floor(epoch ms / availabilitySlotMs). */
  slot: number;
}

export type AgentPresencePartial = {
  agent_presence: AgentPresenceTable;
  agent_presence_slots: AgentPresenceSlotsTable;
};
