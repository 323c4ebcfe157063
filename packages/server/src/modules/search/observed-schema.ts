import { OBSERVED_STATUSES } from '@agent-registry/protocol';
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../../http/common-schemas.js';

const statusDescription =
  'answers: the endpoint answered its protocol (MCP initialize and tools/list; A2A GetTask for an unknown id with TaskNotFoundError -32001); ' +
  'needs_auth: it answered 401 or 403; not_mcp / not_a2a: it answered HTTP, but not its protocol; ' +
  'unreachable: no answer (connection refused, DNS, timeout, a 5xx, or an address the network policy refuses)';

const digestDescription =
  '"sha256:" + hex(SHA-256(RFC 8785 canonical JSON of every tool object tools/list returned, all pages, as returned, sorted by name)); the protocol package\'s toolsDigest recomputes it. A2A entries have none (null)';

/** What this registry's probes of an imported entry found (docs/federation.md, "Observed"). */
export const Observed = Type.Object(
  {
    status: StringEnum(OBSERVED_STATUSES, { description: statusDescription }),
    checked_at: Type.Integer({ description: 'The latest probe (epoch ms)' }),
    last_answered_at: Nullable(
      Type.Integer({ description: 'The latest probe whose status was answers (epoch ms)' }),
    ),
    first_seen_at: Type.Integer({ description: 'The first probe of this entry (epoch ms)' }),
    tools_count: Nullable(Type.Integer({ description: 'Tools listed at the latest answer with a digest' })),
    tools_digest: Nullable(Type.String({ description: digestDescription })),
    tools_changed_at: Nullable(
      Type.Integer({ description: 'When the current tools_digest was first observed (epoch ms)' }),
    ),
  },
  {
    $id: 'Observed',
    description:
      "Extension: what this registry found probing an imported MCP server or A2A card endpoint, or reading a mirrored agent's profile at its home, on its schedule (FEDERATION_PROBE_INTERVAL_SECONDS); absent before the first probe",
  },
);
export type Observed = Static<typeof Observed>;
