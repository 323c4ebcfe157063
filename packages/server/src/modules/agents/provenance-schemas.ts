import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../../http/common-schemas.js';

/**
 * Where an entry comes from and how far this registry verified it (docs/federation.md). An added member
 * of the profile, search results, the change feed, MCP tools, ARD entries and web pages: the fields the
 * interface defines keep their meaning. One object with the members of its kind, not a union, so every
 * face serialises it the same way.
 */
export const Provenance = Type.Object(
  {
    kind: StringEnum(['registered', 'mirrored', 'imported'], {
      description:
        'registered: registered here, its key proven to this registry; mirrored: copied from a peer registry whose transparency log this registry verified; imported: read from an A2A agent card or an MCP Registry',
    }),
    home_registry: Type.String({
      description: 'Public URL of the registry the agent lives at (for an imported card, the card origin)',
    }),
    checkpoint: Type.Optional(
      Type.Object(
        {
          origin: Type.String(),
          size: Type.Integer(),
          root_hash: Type.String({ description: 'base64, as in the signed checkpoint' }),
        },
        { description: "mirrored: the peer's signed log checkpoint the entry was verified against" },
      ),
    ),
    state: Type.Optional(
      StringEnum(['verified', 'unverified'], {
        description:
          'mirrored: unverified once the peer forked its log or served a record that did not match it',
      }),
    ),
    verified_at: Type.Optional(
      Type.Integer({ description: 'mirrored: when the checkpoint was verified (epoch ms)' }),
    ),
    source_url: Type.Optional(Type.String({ description: 'imported: the URL the entry was read from' })),
    format: Type.Optional(StringEnum(['a2a-agent-card', 'mcp-registry'])),
    verification: Type.Optional(
      StringEnum<readonly ImportVerification[]>(['verified', 'signed-untrusted', 'unsigned', 'invalid'], {
        description:
          'imported: verified (a signature checked against the trust root: did and kid say whose), signed-untrusted (signed, but no key of the trust root verifies it), unsigned, invalid (a signature that does not verify)',
      }),
    ),
    did: Type.Optional(
      Type.String({ description: 'imported and verified: the DID whose key verified the card' }),
    ),
    kid: Type.Optional(
      Type.String({ description: 'imported and verified: the key (a DID URL or JWKS kid)' }),
    ),
    reason: Type.Optional(Type.String({ description: 'Why the entry is not verified, when it is not' })),
    fetched_at: Type.Optional(Type.Integer({ description: 'imported: when it was last read (epoch ms)' })),
  },
  { $id: 'Provenance', additionalProperties: false },
);
export type Provenance = Static<typeof Provenance>;
export type ImportVerification = 'verified' | 'signed-untrusted' | 'unsigned' | 'invalid';

/** The provenance of every agent registered here. */
export const registeredProvenance = (publicUrl: string): Provenance => ({
  kind: 'registered',
  home_registry: publicUrl,
});

/** The members in the schema's order, so that stored JSON text is what the schema's serializer writes. */
const ORDER = [
  'kind',
  'home_registry',
  'checkpoint',
  'state',
  'verified_at',
  'source_url',
  'format',
  'verification',
  'did',
  'kid',
  'reason',
  'fetched_at',
] as const satisfies readonly (keyof Provenance)[];

/** A provenance as JSON text, its members (and a checkpoint's) in the schema's order. */
export function provenanceJson(provenance: Provenance): string {
  const ordered: Record<string, unknown> = {};
  for (const key of ORDER) {
    const value = provenance[key];
    if (value === undefined) continue;
    ordered[key] =
      key === 'checkpoint' && provenance.checkpoint !== undefined
        ? {
            origin: provenance.checkpoint.origin,
            size: provenance.checkpoint.size,
            root_hash: provenance.checkpoint.root_hash,
          }
        : value;
  }
  return JSON.stringify(ordered);
}
