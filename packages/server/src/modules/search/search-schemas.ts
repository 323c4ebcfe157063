import type { SearchOrder, SearchSort } from '@agent-registry/protocol';
import { Type, type Static } from '@sinclair/typebox';
import { SEARCH_RULES } from '../../kernel/discovery-rules.js';
import { LIMITS } from '../../kernel/limits.js';
import { Nullable, ref, StringEnum } from '../../http/common-schemas.js';
import { Capability } from '../agents/schemas.js';
import { Provenance } from '../agents/provenance-schemas.js';
import { Availability } from '../availability/schemas.js';
import { Observed } from './observed-schema.js';
import { HomeReport } from './home-report-schema.js';

export const SearchQuery = Type.Object(
  {
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: SEARCH_RULES.queryMaxLength,
        examples: ['translate french'],
        description:
          'Full-text words over name, description, capability types and descriptions, and tags; every word must match, the last also as a prefix. Results are ranked by relevance unless sort is given.',
      }),
    ),
    capability: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: LIMITS.capabilityTypeMaxLength,
        description: 'Capability type, case-insensitive',
        examples: ['translation'],
      }),
    ),
    tags: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: SEARCH_RULES.tagsMaxCount * (LIMITS.tagMaxLength + 1),
        description: 'Comma-separated tags, case-insensitive; an agent matches if it has any of them',
        examples: ['fr,de'],
      }),
    ),
    min_reputation: Type.Optional(
      Type.Number({
        minimum: SEARCH_RULES.minReputation.min,
        maximum: SEARCH_RULES.minReputation.max,
        examples: [60],
      }),
    ),
    min_success_rate: Type.Optional(
      Type.Number({
        minimum: SEARCH_RULES.minSuccessRate.min,
        maximum: SEARCH_RULES.minSuccessRate.max,
        description:
          'Extension: lowest 30-day success rate (0-1) the registry measured for the agent (service_record.last_30_days.success_rate); agents without a measured call are left out',
      }),
    ),
    active_within_days: Type.Optional(
      Type.Integer({
        minimum: SEARCH_RULES.activeWithinDays.min,
        maximum: SEARCH_RULES.activeWithinDays.max,
        description: 'Extension (liveness): only agents that completed a brokered call in the last N days',
      }),
    ),
    available: Type.Optional(
      StringEnum(['true', 'false'], {
        description:
          'Extension: true returns only agents whose availability.status is online now (docs/availability.md); false, the default, filters nothing',
        examples: ['true'],
      }),
    ),
    domain: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 260,
        description:
          'Extension: only agents holding this verified domain (docs/identity.md, "Domains and handles"); not combinable with available, sort=availability or the service-record filters and sorts',
        examples: ['example.com'],
      }),
    ),
    scope: Type.Optional(
      StringEnum(['local', 'federated'], {
        default: 'local',
        description:
          'Extension: local (the default) searches the agents registered here; federated also the read-only entries mirrored from peer registries and imported from A2A agent cards and MCP Registries (docs/federation.md). Remote entries have no reviews or service record here: they rank as unreviewed and never match min_reputation above 0, min_success_rate, active_within_days or available=true',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: SEARCH_RULES.limitMax, default: SEARCH_RULES.limitDefault }),
    ),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: SEARCH_RULES.offsetMax, default: 0 })),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: SEARCH_RULES.cursorMaxLength,
        description:
          'Extension: next_cursor of the previous page of the same search (same filters, sort and order), instead of offset. Pages follow on from the last agent seen: agents registered meanwhile neither repeat nor push others out, and there is no offset cap',
      }),
    ),
    sort: Type.Optional(
      Type.Unsafe<SearchSort>({
        type: 'string',
        enum: [...SEARCH_RULES.sorts],
        description: `Default: ${SEARCH_RULES.sortDefault}, or ${SEARCH_RULES.sortDefaultWithQuery} when q is given. Equal reputation scores are ordered by average_rating, then total_reviews, then created_at (relevance ties by the same reputation order, best first). success_rate and latency (extensions) sort by the 30-day measured service record; with order=desc (the default) the best come first (highest success rate, lowest median latency), and agents without a measured call come last either way. availability (extension) puts the agents online now first, each group by reputation in the given order`,
      }),
    ),
    order: Type.Optional(
      Type.Unsafe<SearchOrder>({
        type: 'string',
        enum: [...SEARCH_RULES.orders],
        default: SEARCH_RULES.orderDefault,
      }),
    ),
  },
  // Unknown parameters are refused (a typo such as name= would otherwise return unrelated agents).
  { additionalProperties: false },
);
/** GET /api/agents/search query; the route schema has already checked types and ranges. */
export type SearchRequest = Static<typeof SearchQuery>;

export const AgentSummary = Type.Object(
  {
    did: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    capabilities: Type.Array(ref(Capability)),
    tags: Type.Array(Type.String()),
    reputation_score: Type.Number(),
    average_rating: Type.Number(),
    total_reviews: Type.Integer(),
    created_at: Type.Integer(),
    status: StringEnum(['active']),
    home_registry: Type.String({
      description:
        "Extension: public URL of the registry the agent lives at (this registry's for its own agents)",
    }),
    provenance: ref(Provenance),
    availability: Type.Object(
      { status: Availability.properties.status, last_seen_at: Availability.properties.last_seen_at },
      {
        description:
          "Extension: the agent's availability now, as the profile's availability.status and last_seen_at (docs/availability.md); unknown with last_seen_at null for remote entries, which this registry does not observe",
      },
    ),
    capabilities_digest: Type.Optional(
      Type.String({
        description:
          'Extension, agents registered here: "sha256:" + hex(SHA-256(RFC 8785 canonical JSON of capabilities, as shown here, sorted by type)), the rule of an imported MCP server\'s observed.tools_digest (the protocol package\'s capabilitiesDigest), so callers pin local and imported agents alike',
      }),
    ),
    observed: Type.Optional(ref(Observed)),
    home: Type.Optional(ref(HomeReport)),
    domains: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'Extension, agents registered here that hold one: their verified domains, as on the profile (docs/identity.md, "Domains and handles")',
      }),
    ),
  },
  {
    $id: 'SearchHit',
    description:
      'An agent in search results. For a remote entry (scope=federated), did is the DID its source names or, without one, the entry id',
  },
);
export type AgentSummary = Static<typeof AgentSummary>;
/** A hit's availability: status and last sighting. */
export type HitAvailability = AgentSummary['availability'];

export const SearchResponse = Type.Object({
  agents: Type.Array(ref(AgentSummary)),
  total: Type.Integer({ description: 'Exact number of matching agents' }),
  limit: Type.Integer(),
  offset: Type.Integer({ description: 'The offset asked for; 0 when the page was asked by cursor' }),
  next_cursor: Nullable(
    Type.String({ description: 'Extension: pass as cursor for the next page; null after the last page' }),
  ),
});
export type SearchResponse = Static<typeof SearchResponse>;
