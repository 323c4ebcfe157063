import type { AgentProfileRow } from './agents-store.js';
import type { Capability } from '@agent-registry/protocol';
import type { ServiceRecord } from '../service-record/schemas.js';
import type { Availability } from '../availability/schemas.js';
import type { AgentEndpoint, AgentProfile, PublishedProfile } from './schemas.js';
import { registeredProvenance } from './provenance-schemas.js';

/** The agent's A2A base URL: the DID percent-encoded as one path segment, with the trailing slash. */
export const a2aBaseUrl = (publicUrl: string, did: string): string =>
  `${publicUrl}/a2a/${encodeURIComponent(did)}/`;

/** A2A clients resolve the card relative to the base, so it sits under the base's own well-known path. */
export const a2aAgentCardUrl = (publicUrl: string, did: string): string =>
  `${a2aBaseUrl(publicUrl, did)}.well-known/agent-card.json`;

export const mcpAgentUrl = (publicUrl: string, did: string): string =>
  `${publicUrl}/mcp/agents/${encodeURIComponent(did)}`;

export function toAgentProfile(
  row: AgentProfileRow,
  publicUrl: string,
  serviceRecord: ServiceRecord,
  availability: Availability,
): AgentProfile {
  // Added to the published profile rather than spread into a copy: this runs on every profile read.
  const profile = toPublishedProfile(row, publicUrl) as AgentProfile;
  // The record says whether the agent answers, not only how it answered when it did (per agent).
  profile.service_record = {
    ...serviceRecord,
    uptime_24h: availability.uptime_24h,
    uptime_7d: availability.uptime_7d,
  };
  profile.availability = availability;
  profile.provenance = registeredProvenance(publicUrl);
  return profile;
}

export function toPublishedProfile(row: AgentProfileRow, publicUrl: string): PublishedProfile {
  const invocationEnabled = row.invocation_enabled === 1;
  const endpoints: AgentEndpoint[] = [
    { type: 'did_document', url: `${publicUrl}/api/did/${encodeURIComponent(row.did)}` },
  ];
  if (row.status === 'active') {
    endpoints.push({ type: 'a2a_agent_card', url: a2aAgentCardUrl(publicUrl, row.did) });
  }
  if (invocationEnabled && row.delivery_mode !== 'none' && row.status === 'active') {
    endpoints.push({ type: 'invoke', url: `${publicUrl}/api/invoke` });
    endpoints.push({ type: 'mcp', url: mcpAgentUrl(publicUrl, row.did) });
  }
  return {
    did: row.did,
    name: row.name,
    description: row.description,
    avatar: row.avatar,
    website: row.website,
    public_key: row.public_key,
    key_type: row.key_type,
    chain_id: row.chain_id,
    capabilities: JSON.parse(row.capabilities) as Capability[],
    tags: JSON.parse(row.tags) as string[],
    endpoints,
    status: row.status,
    invocation_enabled: invocationEnabled,
    delivery_mode: row.delivery_mode,
    average_rating: row.average_rating,
    reputation_score: row.reputation_score,
    total_reviews: row.total_reviews,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}
