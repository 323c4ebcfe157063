import type { Generated } from 'kysely';
import type { DeliveryMode, KeyType } from '@agent-registry/protocol';

/** `suspended`: an operator's decision (docs/moderation.md), undone by a restoration. */
export type AgentStatus = 'active' | 'deactivated' | 'suspended';

/** One row per registered agent; capabilities and tags are JSON text so one schema serves both dialects. */
export interface AgentsTable {
  did: string;
  key_type: KeyType;
  /** Lower-case hex, in the form the agent registered it. */
  public_key: string;
  /** `<key_type>:<compressed key hex>`: unique, so two encodings of one key are one agent. */
  key_id: string;
  chain_id: string | null;
  name: string;
  description: string | null;
  avatar: string | null;
  website: string | null;
  capabilities: string;
  tags: string;
  status: AgentStatus;
  invocation_enabled: number;
  delivery_mode: DeliveryMode;
  webhook_url: string | null;
  webhook_secret: string | null;
  /** 1 unless the agent opted out of availability probes of its webhook (migration 015). */
  webhook_probes: Generated<number>;
  referrer: string | null;
  average_rating: number;
  reputation_score: number;
  total_reviews: number;
  /**
   * 30-day; null until a counted call ends (docs/decisions/service-record.md, "Where the record is written").
   */
  service_success_rate: number | null;
  service_latency_p50_ms: number | null;
  service_calls_30d: Generated<number>;
  service_last_completed_at: number | null;
  created_at: number;
  updated_at: number;
  deactivated_at: number | null;
  /** Position in the change feed of this agent's latest public change (migration 008); null only mid-transaction. */
  change_seq: number | null;
  /** How many times the key was replaced (migration 023): tokens of a rotated agent name it. */
  key_generation: Generated<number>;
}

export const agentsTableName = 'agents';
export type AgentsPartial = { [agentsTableName]: AgentsTable };
