import { Type, type Static } from '@sinclair/typebox';
import { Nullable, ref, StringEnum } from '../../http/common-schemas.js';
import { Capability } from '../agents/schemas.js';
import { Provenance } from '../agents/provenance-schemas.js';
import { Observed } from '../search/observed-schema.js';
import { HomeReport } from '../search/home-report-schema.js';

export const FEDERATION_RULES = { listLimitDefault: 50, listLimitMax: 200, idMaxLength: 2048 } as const;

export const RemoteEndpoint = Type.Object({
  type: Type.String({ description: 'e.g. a2a, mcp, invoke, profile' }),
  url: Type.String(),
});

export const RemoteEntry = Type.Object(
  {
    id: Type.String({ description: 'The entry id here: never a DID (begins with peer:, a2a: or mcp:)' }),
    did: Nullable(Type.String({ description: 'The DID its source names, if any' })),
    name: Type.String(),
    description: Nullable(Type.String()),
    capabilities: Type.Array(ref(Capability)),
    tags: Type.Array(Type.String()),
    endpoints: Type.Array(RemoteEndpoint, { description: 'Where the agent is reached at its home' }),
    status: StringEnum(['active']),
    created_at: Type.Integer({ description: 'First seen by this registry (epoch ms)' }),
    updated_at: Type.Integer({ description: 'Last changed here (epoch ms)' }),
    home_registry: Type.String(),
    provenance: ref(Provenance),
    observed: Type.Optional(ref(Observed)),
    home: Type.Optional(ref(HomeReport)),
  },
  { $id: 'RemoteEntry', description: 'A read-only entry of an agent that lives elsewhere' },
);
export type RemoteEntry = Static<typeof RemoteEntry>;

export const RemoteEntryParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: FEDERATION_RULES.idMaxLength }),
});

export const RemoteEntriesQuery = Type.Object(
  {
    source: Type.Optional(Type.String({ minLength: 1, maxLength: FEDERATION_RULES.idMaxLength })),
    kind: Type.Optional(StringEnum(['mirrored', 'imported'])),
    verification: Type.Optional(
      StringEnum(['verified', 'signed-untrusted', 'unsigned', 'invalid', 'unverified'], {
        description: "An imported entry's verification, or a mirrored entry's state (verified, unverified)",
      }),
    ),
    after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: FEDERATION_RULES.idMaxLength,
        description: 'next_after of the previous page',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: FEDERATION_RULES.listLimitMax,
        default: FEDERATION_RULES.listLimitDefault,
      }),
    ),
  },
  { additionalProperties: false },
);
export type RemoteEntriesQuery = Static<typeof RemoteEntriesQuery>;

export const RemoteEntriesPage = Type.Object({
  entries: Type.Array(ref(RemoteEntry)),
  next_after: Nullable(Type.String({ description: 'Pass as after for the next page; null after the last' })),
});
export type RemoteEntriesPage = Static<typeof RemoteEntriesPage>;

export const SourceStatus = Type.Object({
  id: Type.String(),
  kind: StringEnum(['peer', 'a2a', 'mcp']),
  url: Type.String(),
  state: StringEnum(['ok', 'error', 'stopped'], {
    description:
      'ok; error (the last attempt failed: last_error says why, entries kept); stopped (a peer forked its log or served mismatching records: no longer followed, its entries unverified)',
  }),
  last_error: Type.Optional(
    Nullable(
      Type.String({
        description:
          "Why the last attempt failed, or a note on it (skipped servers, a card's signature check); it may quote what the remote host answered. Operator's view only: absent from the public summary",
      }),
    ),
  ),
  last_attempt_at: Nullable(Type.Integer()),
  last_success_at: Nullable(Type.Integer()),
  entries: Type.Integer({ description: 'Active entries from this source' }),
  checkpoint: Type.Optional(
    Type.Object(
      {
        origin: Type.String(),
        size: Type.Integer({ description: "Entries of the peer's log verified so far" }),
        root_hash: Type.String({ description: 'base64, as in the signed checkpoint' }),
      },
      {
        description: 'peer: the last checkpoint of its log this registry verified (absent before the first)',
      },
    ),
  ),
  resumed: Type.Optional(
    Type.Object(
      {
        by: Type.String(),
        at: Type.Integer({ description: 'epoch ms' }),
        reason: Type.String({ description: 'Why the peer had stopped being followed' }),
      },
      {
        description:
          "peer: the last time an operator resumed it after a stop, and who (operator's view only)",
      },
    ),
  ),
});
export type SourceStatus = Static<typeof SourceStatus>;

export const ResumePeerRequest = Type.Object(
  {
    peer: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'The peer origin, as in FEDERATION_PEERS',
    }),
    by: Type.String({ minLength: 1, maxLength: 200, description: 'Who resumes it (recorded on the status)' }),
  },
  { additionalProperties: false },
);
export type ResumePeerRequest = Static<typeof ResumePeerRequest>;

export const FederationStatus = Type.Object({
  view: Type.Optional(
    StringEnum(['public', 'operator'], {
      description:
        "public: the summary anyone may read (no error texts, no resumed); operator: with METRICS_TOKEN or FEDERATION_ADMIN_TOKEN, each source's last_error and resumed too",
    }),
  ),
  sources: Type.Array(SourceStatus),
  search_index: Type.Object(
    {
      state: StringEnum(['idle', 'loading', 'ready'], {
        description:
          'idle: not loaded (the registry had no remote entries or sources at start, and no federated search has run); loading: being built (started at start when it had either); ready',
      }),
      indexed: Type.Integer({
        description: 'Rows in the index: active local agents and active remote entries (0 until ready)',
      }),
      loaded_at: Nullable(Type.Integer({ description: 'When the load ended (epoch ms)' })),
    },
    {
      description:
        'The index that serves scope=federated searches on this node; a federated search made while it loads waits for it',
    },
  ),
});
export type FederationStatus = Static<typeof FederationStatus>;
