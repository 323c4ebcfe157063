import { Type } from '@sinclair/typebox';

/** The ARD error envelope (ard-spec Appendix B). */
export const ArdError = Type.Object(
  {
    errorCode: Type.String(),
    message: Type.String(),
    code: Type.Optional(Type.String({ description: "The registry's own finer error code" })),
  },
  {
    $id: 'ArdError',
    description: 'ARD error envelope: errorCode (INVALID_ARGUMENT, NOT_FOUND, ...) and what to fix',
  },
);

/** Documentation of the answers; the routes write them as JSON text (modules/ard/entries.ts builds entries). */
const EntryDoc = Type.Object(
  {
    identifier: Type.String({ description: 'urn:air:<host>:agents:<name> (docs/ard.md, the URN mapping)' }),
    displayName: Type.String(),
    type: Type.String({ examples: ['application/a2a-agent-card+json'] }),
    url: Type.String({ format: 'uri', description: "The agent's signed A2A card" }),
  },
  { additionalProperties: true, description: 'An ARD catalog entry (ard-spec section 4.2)' },
);
export const ArdSearchAnswer = Type.Object({
  results: Type.Array(
    Type.Intersect([
      EntryDoc,
      Type.Object({ score: Type.Integer({ minimum: 0, maximum: 100 }), source: Type.String() }),
    ]),
  ),
  referrals: Type.Optional(
    Type.Array(
      Type.Object(
        {
          identifier: Type.String({ description: 'urn:air:<host>:registry:<path of its API base>' }),
          displayName: Type.String(),
          type: Type.Literal('application/ai-registry+json'),
          url: Type.String({ format: 'uri', description: "The referred registry's search route" }),
        },
        { description: 'A registry to query next (ard-spec section 8); only with federation referrals' },
      ),
      { minItems: 1 },
    ),
  ),
  pageToken: Type.Optional(Type.String()),
});
export const ArdListAnswer = Type.Object({
  items: Type.Array(EntryDoc),
  total: Type.Optional(
    Type.Integer({ description: 'Every active agent the listing holds; absent with a name or time filter' }),
  ),
  pageToken: Type.Optional(Type.String()),
});
export const ArdExploreAnswer = Type.Object({
  resultType: Type.Literal('facets'),
  facets: Type.Record(
    Type.String(),
    Type.Object({
      buckets: Type.Array(Type.Object({ value: Type.String(), count: Type.Integer() })),
      otherCount: Type.Optional(Type.Integer()),
    }),
  ),
});
export const ArdEntryAnswer = EntryDoc;
export const ArdCatalogAnswer = Type.Object(
  {
    specVersion: Type.Literal('1.0'),
    host: Type.Object({}, { additionalProperties: true }),
    entries: Type.Array(EntryDoc),
  },
  { description: 'An AI Catalog page (media type application/ai-catalog+json)' },
);
