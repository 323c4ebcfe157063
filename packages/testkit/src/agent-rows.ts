/**
 * A row of the agents table as a registration writes it, for the server's tests and the bench that
 * write the database below the API (migrations, seeding at scale).
 */
import type { RegisteredAgentRow } from '@agent-registry/server/src/modules/agents/agents-store.js';

/** A registration's row as RegistrationService builds it: every column `insertAgentIn` writes. */
export const registeredAgentRow = (
  did: string,
  overrides: Partial<RegisteredAgentRow> = {},
): RegisteredAgentRow => ({
  did,
  key_type: 'ed25519',
  public_key: did,
  key_id: `ed25519:${did}`,
  chain_id: null,
  name: did.slice(-4),
  description: null,
  avatar: null,
  website: null,
  capabilities: '[{"type":"general"}]',
  tags: '[]',
  status: 'active',
  invocation_enabled: 0,
  delivery_mode: 'none',
  webhook_url: null,
  webhook_secret: null,
  referrer: null,
  average_rating: 0,
  reputation_score: 0,
  total_reviews: 0,
  created_at: 1,
  updated_at: 1,
  deactivated_at: null,
  ...overrides,
});
