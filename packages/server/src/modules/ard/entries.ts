import type { Capability } from '@agent-registry/protocol';
import type { AgentSearchRow } from '../search/agent-search-store.js';
import { capabilitiesDigestOf } from '../search/capabilities-digest.js';
import { a2aAgentCardUrl, mcpAgentUrl } from '../agents/agent-view.js';
import { registeredProvenance, type Provenance } from '../agents/provenance-schemas.js';
import { capabilityTitle } from '../capabilities/capability-title.js';
import { didToUrn } from './urn.js';

export const A2A_CARD_TYPE = 'application/a2a-agent-card+json';
export const REGISTRY_TYPE = 'application/ai-registry+json';
export const CATALOG_TYPE = 'application/ai-catalog+json';
/** An AI Catalog entry naming an MCP Server Card (SEP-2127). */
export const MCP_SERVER_CARD_TYPE = 'application/mcp-server-card+json';
export const CATALOG_SPEC_VERSION = '1.0';
/** The attestation types of every agent entry, in their order there. */
export const ATTESTATION_TYPES: readonly string[] = [
  'agent-registry:service-record',
  'agent-registry:capability-schemas',
];
/** Where the ARD registry API is served, under PUBLIC_URL. */
export const ARD_BASE = '/ard';

/** What an entry needs of the registry: where it is and the publisher segment of its URNs. */
export interface ArdSite {
  publicUrl: string;
  publisher: string;
}

/** One ARD catalog entry (ard-spec section 4.2); `publisher` is the URN's publisher, for filters. */
export interface ArdEntry {
  identifier: string;
  displayName: string;
  type: string;
  url: string;
  description: string;
  tags: string[];
  capabilities: string[];
  representativeQueries: string[];
  updatedAt: string;
  publisher: string;
  /** AI Catalog metadata: every value a string, number, boolean or null (ai-catalog.schema.json). */
  metadata: {
    did: string;
    profileUrl: string;
    mcpEndpoint: string;
    provenanceKind: Provenance['kind'];
    homeRegistry: string;
    /** The search result's capabilities_digest: callers pin an agent found here as they pin one found by search. */
    capabilitiesDigest: string;
    /** The domains the agent proved it holds, comma-separated (docs/identity.md); absent when none. */
    verifiedDomains?: string;
  };
  trustManifest: {
    identity: string;
    identityType: 'did';
    attestations: { type: string; uri: string; mediaType: string }[];
    provenance: ArdProvenanceLink[];
  };
}

/** ard-spec section 5.3's Provenance Link: the entry's lineage, in the trust manifest. */
export interface ArdProvenanceLink {
  relation: 'derivedFrom' | 'publishedFrom' | 'copiedFrom';
  sourceId: string;
}

const QUERY_MAX_LENGTH = 120;
const QUERIES_MAX = 5;

/** The first sentence of a text, cut at a word near the length an example query reads at. */
function firstSentence(text: string): string {
  const sentence = (text.split(/(?<=[.!?])\s/)[0] ?? '').trim().replace(/[.!?]+$/, '');
  if (sentence.length <= QUERY_MAX_LENGTH) return sentence;
  const cut = sentence.slice(0, QUERY_MAX_LENGTH);
  return cut.slice(0, Math.max(cut.lastIndexOf(' '), 1)).trim();
}

/**
 * 2-5 example queries from the profile (docs/ard.md, "Representative queries"): what each of the first
 * capabilities does, then one naming the tags, then the agent itself; duplicates dropped.
 */
export function representativeQueries(
  name: string,
  description: string | null,
  capabilities: Capability[],
  tags: string[],
): string[] {
  const queries: string[] = [];
  for (const capability of capabilities.slice(0, 3)) {
    const said = capability.description == null ? '' : firstSentence(capability.description);
    queries.push(said !== '' ? said : `${capabilityTitle(capability.type).toLowerCase()} for me`);
  }
  if (tags.length > 0) queries.push(`find an agent for ${tags.slice(0, 3).join(', ')}`);
  const about = description === null ? '' : firstSentence(description);
  if (about !== '') queries.push(about);
  queries.push(`use ${name}`);
  const seen = new Set<string>();
  const unique = queries.filter((query) => {
    const key = query.toLowerCase();
    if (query === '' || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (unique.length < 2) unique.push(`find the agent ${name}`);
  return unique.slice(0, QUERIES_MAX);
}

/**
 * An active agent's ARD entry: it points at the agent's signed A2A card, which carries its JSON Schemas.
 * Made of the profile's published fields only, so it changes only when `updated_at` does.
 */
export function agentEntry(row: AgentSearchRow, site: ArdSite, domains?: readonly string[]): ArdEntry {
  const capabilities = JSON.parse(row.capabilities) as Capability[];
  const tags = JSON.parse(row.tags) as string[];
  const cardUrl = a2aAgentCardUrl(site.publicUrl, row.did);
  const profileUrl = `${site.publicUrl}/api/agents/${encodeURIComponent(row.did)}`;
  const provenance = registeredProvenance(site.publicUrl);
  return {
    identifier: didToUrn(row.did, site.publisher),
    displayName: row.name,
    type: A2A_CARD_TYPE,
    url: cardUrl,
    description: row.description ?? `${row.name}, an agent registered at ${site.publicUrl}`,
    tags,
    capabilities: capabilities.map((capability) => capability.type),
    representativeQueries: representativeQueries(row.name, row.description, capabilities, tags),
    updatedAt: new Date(Number(row.updated_at)).toISOString(),
    publisher: site.publisher,
    metadata: {
      did: row.did,
      profileUrl,
      mcpEndpoint: mcpAgentUrl(site.publicUrl, row.did),
      // The registry's own provenance (docs/federation.md) as scalars: catalog metadata holds no objects.
      provenanceKind: provenance.kind,
      homeRegistry: provenance.home_registry,
      capabilitiesDigest: capabilitiesDigestOf(row.capabilities),
      ...(domains === undefined || domains.length === 0 ? {} : { verifiedDomains: domains.join(',') }),
    },
    trustManifest: {
      identity: row.did,
      identityType: 'did',
      attestations: [
        // The registry's own measurements of the agent: its service record is a member of the profile.
        { type: 'agent-registry:service-record', uri: profileUrl, mediaType: 'application/json' },
        // Each capability's input and output JSON Schemas, in the signed card's extension.
        { type: 'agent-registry:capability-schemas', uri: cardUrl, mediaType: A2A_CARD_TYPE },
      ],
      // In ARD's own terms: the entry is published from the profile registered here.
      provenance: [{ relation: 'publishedFrom', sourceId: profileUrl }],
    },
  };
}

/** The entry naming this registry's ARD search service (ard-spec section 7: its base URL). */
export function registryEntry(site: ArdSite): Record<string, unknown> {
  return {
    identifier: `urn:air:${site.publisher}:registry:ard`,
    displayName: 'Agent Registry',
    type: REGISTRY_TYPE,
    url: `${site.publicUrl}${ARD_BASE}`,
    description:
      'Search every active agent of this registry: POST /search, GET /agents/{identifier}, GET /agents, POST /explore',
    tags: ['registry', 'search', 'agents'],
    publisher: site.publisher,
  };
}

/** A registry an ARD client may query next (ard-spec section 8, `RegistryReferral`). */
export interface ArdReferral {
  identifier: string;
  displayName: string;
  type: typeof REGISTRY_TYPE;
  url: string;
}

/**
 * The referral to another ARD registry, from its API base (ARD_REFERRALS): `url` is its search route,
 * as ARD's referral objects carry it; `identifier` names it by its host and the path of its base, the
 * only names the setting gives (docs/ard.md, "Federation").
 */
export function referral(base: string): ArdReferral {
  const url = new URL(base);
  const segments = url.pathname
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => segment.replace(/[^a-zA-Z0-9._-]/g, '-'));
  const where = `${url.host}${url.pathname.replace(/\/+$/, '')}`;
  return {
    identifier: `urn:air:${url.hostname}:registry:${segments.length > 0 ? segments.join(':') : 'root'}`,
    displayName: `ARD registry at ${where}`,
    type: REGISTRY_TYPE,
    url: `${base}/search`,
  };
}
