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
  /** Epoch ms at which its worker last said it was stopping; offline while no evidence is newer. */
  stopped_at: number | null;
}

/** The fixed slots (of availabilitySlotMs) in which an agent was seen: what uptime counts. */
export interface AgentPresenceSlotsTable {
  did: string;
  /** floor(epoch ms / availabilitySlotMs). */
  slot: number;
}

/** The probe schedule of each webhook agent that is probed (migration 015). */
export interface WebhookProbesTable {
  did: string;
  /** Epoch ms from which the next probe may be sent; a node claims a probe by moving it forward. */
  due_at: number;
  /** Probes failed in a row since the last success: the backoff's exponent. */
  failures: number;
  /** Epoch ms of the latest probe's answer (or failure), null until the first. */
  last_probed_at: number | null;
  /** Epoch ms of the latest probe if it failed; null once a probe is answered. */
  last_failed_at: number | null;
}

export type AgentPresencePartial = {
  agent_presence: AgentPresenceTable;
  agent_presence_slots: AgentPresenceSlotsTable;
  webhook_probes: WebhookProbesTable;
};
