import { Type, type Static } from '@sinclair/typebox';
import { SEARCH_RULES } from '../../kernel/discovery-rules.js';
import { PAGE_TOKEN_MAX_LENGTH } from './page-token.js';

/** Longest filter value: a tag, a capability type or a media type. */
export const FILTER_VALUE_MAX_LENGTH = 256;
export const FILTER_KEYS_MAX = 8;
export const PAGE_SIZE_MAX = 100;
/** Longest GET /agents filter expression: five constraints with room for their values. */
export const LIST_FILTER_MAX_LENGTH = 512;

const FilterValue = Type.String({ minLength: 1, maxLength: FILTER_VALUE_MAX_LENGTH });
const Filter = Type.Record(
  Type.String({ maxLength: 64 }),
  Type.Union([FilterValue, Type.Array(FilterValue, { minItems: 1, maxItems: SEARCH_RULES.tagsMaxCount })]),
  {
    maxProperties: FILTER_KEYS_MAX,
    description:
      'Keys are entry field paths (type, tags, capabilities, publisher, trustManifest.identityType, trustManifest.attestations.type); values an array or one string. OR within a key, AND across keys.',
  },
);
const Text = Type.String({
  minLength: 1,
  maxLength: SEARCH_RULES.queryMaxLength,
  description:
    'What the caller needs, in words: matched by the registry full-text search (every word must match).',
});

export const ArdQueryModel = Type.Object(
  { text: Type.Optional(Text), filter: Type.Optional(Filter) },
  { additionalProperties: false },
);
export type ArdQueryModel = Static<typeof ArdQueryModel>;

export const ArdSearchRequest = Type.Object(
  {
    query: Type.Object({ text: Text, filter: Type.Optional(Filter) }, { additionalProperties: false }),
    federation: Type.Optional(
      Type.Union([Type.Literal('auto'), Type.Literal('referrals'), Type.Literal('none')], {
        description:
          "auto and none search this registry's index only (it queries no other registry); referrals adds the registries its operator configured as referral objects, and no referrals member when there are none",
      }),
    ),
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_SIZE_MAX, default: 10 })),
    pageToken: Type.Optional(Type.String({ minLength: 1, maxLength: PAGE_TOKEN_MAX_LENGTH })),
  },
  { additionalProperties: false },
);
export type ArdSearchRequest = Static<typeof ArdSearchRequest>;

export const FACET_FIELDS = ['type', 'publisher', 'tags', 'capabilities'] as const;
export type FacetField = (typeof FACET_FIELDS)[number];

export const ArdExploreRequest = Type.Object(
  {
    query: Type.Optional(ArdQueryModel),
    resultType: Type.Object(
      {
        facets: Type.Array(
          Type.Object(
            {
              field: Type.String({ minLength: 1, maxLength: 64, description: FACET_FIELDS.join(', ') }),
              limit: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_SIZE_MAX, default: 20 })),
              minCount: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
            },
            { additionalProperties: false },
          ),
          { minItems: 1, maxItems: FACET_FIELDS.length },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type ArdExploreRequest = Static<typeof ArdExploreRequest>;

export const ArdListQuery = Type.Object(
  {
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_SIZE_MAX, default: 20 })),
    pageToken: Type.Optional(Type.String({ minLength: 1, maxLength: PAGE_TOKEN_MAX_LENGTH })),
    filter: Type.Optional(
      Type.String({
        maxLength: LIST_FILTER_MAX_LENGTH,
        description:
          "ARD filter expression (ard-spec Appendix A): field = 'value' constraints joined by AND over displayName (a part of the name, any case), type and publisherId (comma-separated alternatives), createdAfter and updatedAfter (> an ISO 8601 date or date-time). With displayName, createdAfter or updatedAfter the answer has no total, and a page may hold fewer entries than pageSize with a pageToken to go on.",
        examples: ["type = 'application/a2a-agent-card+json' AND createdAfter > '2026-01-01'"],
      }),
    ),
    orderBy: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'Only createdAt (or createdAt ASC): oldest first, the listing order',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ArdListQuery = Static<typeof ArdListQuery>;

export const ArdCatalogQuery = Type.Object(
  { pageToken: Type.Optional(Type.String({ minLength: 1, maxLength: PAGE_TOKEN_MAX_LENGTH })) },
  { additionalProperties: false },
);

export const ArdIdentifierParams = Type.Object({
  identifier: Type.String({
    description: 'The entry URN, urn:air:<host>:agents:<name>; percent-encoding optional',
  }),
});

/** The smallest useful body of each ARD POST route, as a refusal of a malformed body shows it. */
export const ARD_BODY_EXAMPLES = {
  search: '{"query": {"text": "weather", "filter": {"tags": ["maps"]}}, "pageSize": 10}',
  explore: '{"query": {"text": "weather"}, "resultType": {"facets": [{"field": "tags", "limit": 20}]}}',
} as const;
