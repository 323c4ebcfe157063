import { Type, type Static } from '@sinclair/typebox';
import { DELIVERY_MODES, KEY_TYPES, MODERATION_REASONS } from '@agent-registry/protocol';
import { LIMITS } from '../../kernel/limits.js';
import { SCHEMA_LIMITS } from '../capabilities/schema-limits.js';
import { Nullable, checkedByService, ref, StringEnum } from '../../http/common-schemas.js';
import type { AgentStatus } from '../../db/schema/index.js';
import type { ServiceRecord } from '../service-record/schemas.js';
import type { Availability } from '../availability/schemas.js';
import type { Provenance } from './provenance-schemas.js';

const L = SCHEMA_LIMITS;
/** The limits a published capability schema must keep, stated where client generators read them. */
const CAPABILITY_SCHEMA_RULES =
  `A JSON Schema (draft 2020-12 keywords as Ajv supports them). At most ${L.schemaMaxBytes} bytes of JSON, ` +
  `${L.schemaMaxProperties} properties (names under properties and patternProperties, at every level), ` +
  `${L.schemaMaxSubschemas} subschemas (JSON objects) and ${L.schemaMaxDepth} levels of nesting; all schemas of ` +
  `a profile together at most ${L.profileSchemaMaxBytes} bytes, ${L.profileSchemaMaxProperties} properties and ` +
  `${L.profileSchemaMaxSubschemas} subschemas (400 CAPABILITY_SCHEMA_TOO_LARGE). Patterns use RE2 syntax and ` +
  `match in linear time (no lookaround or backreferences). uniqueItems needs scalar item types or maxItems <= ` +
  `${L.uniqueItemsMaxItems}.`;
// Typed as a record: the bare object schema's static type, `{}`, would admit any value but null.
const CapabilitySchema = (role: string) =>
  Nullable(
    Type.Unsafe<Record<string, unknown>>(
      Type.Object({}, { additionalProperties: true, description: `${role}. ${CAPABILITY_SCHEMA_RULES}` }),
    ),
  );

const KeyType = Type.Unsafe<'ed25519' | 'secp256k1'>({ type: 'string', enum: [...KEY_TYPES] });

const HEX_PUBLIC_KEY = '^([0-9a-fA-F]{64}|0[23][0-9a-fA-F]{64}|04[0-9a-fA-F]{128})$';
const DeliveryMode = Type.Unsafe<'none' | 'webhook' | 'queue'>({ type: 'string', enum: [...DELIVERY_MODES] });

const Tags = Type.Array(Type.String({ maxLength: LIMITS.tagMaxLength }), { maxItems: LIMITS.tagsMaxCount });
const Url = Type.String({
  maxLength: LIMITS.urlMaxLength,
  format: 'uri',
  description: 'http:// or https:// URL',
});
// The service checks these with messages naming the field; the format is for the document.
const ProfileUrl = checkedByService(Url, ['format']);

export const Capability = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: LIMITS.capabilityTypeMaxLength, examples: ['translation'] }),
    description: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.capabilityDescriptionMaxLength }))),
    tags: Type.Optional(Nullable(Tags)),
    input_schema: Type.Optional(CapabilitySchema('Invocation input is validated against it')),
    output_schema: Type.Optional(CapabilitySchema('Describes the output; published, not enforced')),
  },
  { $id: 'Capability' },
);
const CapabilityRef = ref(Capability);

const Capabilities = Type.Array(CapabilityRef, {
  minItems: LIMITS.capabilitiesMinCount,
  maxItems: LIMITS.capabilitiesMaxCount,
});

const NAME_RULES =
  'At least one visible character (letter, digit, symbol or punctuation); no control or bidirectional-control ' +
  'characters (400 INVALID_NAME). Stored exactly as sent.';

export const ProfileInput = Type.Object({
  name: Type.String({ minLength: 1, maxLength: LIMITS.nameMaxLength, description: NAME_RULES }),
  description: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.descriptionMaxLength }))),
  capabilities: Capabilities,
  tags: Type.Optional(Nullable(Tags)),
  avatar: Type.Optional(Nullable(ProfileUrl)),
  website: Type.Optional(Nullable(ProfileUrl)),
});

const REGISTER_EXAMPLE = {
  public_key: '3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29',
  key_type: 'ed25519',
  profile: {
    name: 'Translator',
    description: 'Translates text between European languages',
    capabilities: [
      {
        type: 'translation',
        description: 'Translate text',
        tags: ['fr', 'de'],
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
    ],
    tags: ['language'],
  },
  timestamp: 1767225600000,
  signature: '<128 hex characters: Ed25519 signature over the canonical registration message>',
};

export const RegisterRequest = Type.Object(
  {
    public_key: checkedByService(
      Type.String({
        description:
          'Hex without 0x: 64 characters (ed25519), 66 (compressed secp256k1, 02/03...) or 130 (uncompressed, 04...)',
        maxLength: 130,
        pattern: HEX_PUBLIC_KEY,
      }),
      ['maxLength', 'pattern'],
    ),
    key_type: Type.Optional(
      Type.Unsafe<'ed25519' | 'secp256k1'>({ type: 'string', enum: [...KEY_TYPES], default: 'ed25519' }),
    ),
    chain_id: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 64,
          examples: ['eip155:1'],
          description: 'CAIP-2 chain of a secp256k1 key (required then); absent or null for ed25519',
        }),
      ),
    ),
    profile: ProfileInput,
    timestamp: Type.Integer({ description: 'Epoch milliseconds; within 5 minutes of server time' }),
    signature: Type.String({ maxLength: 200, description: 'Ed25519 hex, or 0x-prefixed EIP-191 signature' }),
    referrer: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.referrerMaxLength }))),
    audience: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 2048,
          description:
            'Origin of the registry this registration is meant for (its PUBLIC_URL, e.g. https://registry.example). ' +
            'Not in the original interface: when present it is a member of the signed object and must name this registry, ' +
            'so the body cannot be replayed to another registry. Required when the operator sets REQUIRE_REGISTRATION_AUDIENCE=true. ' +
            'See docs/signing.md, section "Audience".',
        }),
      ),
    ),
    proof_of_work: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 64,
          description:
            'Extension, only when the operator sets REGISTRATION_POW_BITS: a nonce such that SHA-256 of ' +
            '"agent-registry-pow:<public_key>:<timestamp>:<proof_of_work>" starts with that many zero bits ' +
            '(docs/operations.md, section "Registration cost (proof of work)"). Not part of the signed message.',
        }),
      ),
    ),
  },
  {
    $id: 'RegisterRequest',
    examples: [REGISTER_EXAMPLE],
    // A secp256k1 key names its chain; the service answers CHAIN_ID_REQUIRED with the supported chains.
    if: { properties: { key_type: { const: 'secp256k1' } }, required: ['key_type'] },
    then: checkedByService(
      {
        properties: { chain_id: { type: 'string', description: 'The CAIP-2 chain' } },
        required: ['chain_id'],
      } as never,
      ['properties', 'required'],
    ),
  },
);
export type RegisterCommand = Static<typeof RegisterRequest>;

export const TokenResponse = Type.Object(
  {
    did: Type.String({ examples: ['did:web:registry.example:agent:4f2a9c0e1b7d4e8f9a6b3c2d1e0f9a8b'] }),
    token: Type.String({ description: 'EdDSA-signed JWT; send as Authorization: Bearer <token>' }),
    expires_at: Type.Integer({ description: 'Epoch milliseconds when the token expires' }),
  },
  { $id: 'TokenResponse' },
);
export type TokenResponse = Static<typeof TokenResponse>;

export const TokenRequest = Type.Object({
  did: Type.String({ maxLength: 512 }),
  timestamp: Type.Integer({
    description: 'Epoch milliseconds; at most 5 minutes before and 60 seconds after server time',
  }),
  signature: Type.String({
    maxLength: 200,
    description:
      'Ed25519: hex signature over the canonical JSON of {"audience","did","purpose":"authenticate","timestamp"}. ' +
      'secp256k1: EIP-191 personal_sign over {"purpose":"authenticate","did":...,"audience":...,"timestamp":...} in that order. ' +
      "audience is this registry's origin (PUBLIC_URL). Each signed message gives one token. " +
      'Byte-for-byte rules and worked examples: docs/signing.md, section "Authentication (POST /api/auth/token)".',
  }),
  audience: Type.Optional(
    Type.String({
      maxLength: 2048,
      description:
        'Optional: the registry origin you signed for. It is part of the signed message either way; sending it gets a clear AUDIENCE_MISMATCH instead of INVALID_SIGNATURE when it names another registry.',
    }),
  ),
});
export type TokenRequest = Static<typeof TokenRequest>;

export const UpdateProfileRequest = Type.Object({
  name: Type.Optional(
    Nullable(Type.String({ minLength: 1, maxLength: LIMITS.nameMaxLength, description: NAME_RULES })),
  ),
  description: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.descriptionMaxLength }))),
  capabilities: Type.Optional(Nullable(Capabilities)),
  tags: Type.Optional(Nullable(Tags)),
  avatar: Type.Optional(Nullable(ProfileUrl)),
  website: Type.Optional(Nullable(ProfileUrl)),
});
/** Absent or null leaves a field as it is; "" clears description, avatar, website. */
export type UpdateProfileRequest = Static<typeof UpdateProfileRequest>;

const Endpoint = Type.Object({
  type: StringEnum(['did_document', 'invoke', 'a2a_agent_card', 'mcp']),
  url: Type.String({ format: 'uri' }),
});
export type AgentEndpoint = Static<typeof Endpoint>;

export const AgentProfile = Type.Object(
  {
    did: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    avatar: Nullable(Type.String({ format: 'uri' })),
    website: Nullable(Type.String({ format: 'uri' })),
    public_key: Type.String({ description: 'hex, without 0x', pattern: HEX_PUBLIC_KEY }),
    key_type: KeyType,
    chain_id: Nullable(Type.String()),
    capabilities: Type.Array(CapabilityRef),
    tags: Type.Array(Type.String()),
    endpoints: Type.Array(Endpoint),
    status: StringEnum<readonly AgentStatus[]>(['active', 'deactivated', 'suspended'], {
      description:
        'Extension value `suspended`: an operator suspended the agent (docs/moderation.md); `moderation` says why',
    }),
    invocation_enabled: Type.Boolean(),
    delivery_mode: DeliveryMode,
    average_rating: Type.Number(),
    reputation_score: Type.Number(),
    total_reviews: Type.Integer(),
    created_at: Type.Integer(),
    updated_at: Type.Integer(),
    service_record: Type.Unsafe<ServiceRecord>(
      Type.Ref('ServiceRecord', {
        description: 'Extension: the measured service record; every field the interface defines is unchanged',
      }),
    ),
    availability: Type.Unsafe<Availability>(
      Type.Ref('Availability', {
        description:
          'Extension: whether the agent answers now, measured by the registry (docs/availability.md)',
      }),
    ),
    provenance: Type.Unsafe<Provenance>(
      Type.Ref('Provenance', {
        description:
          'Extension: where the agent comes from; always kind "registered" here (docs/federation.md). Not covered by the transparency log leaf',
      }),
    ),
    domains: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'Extension, present only when the agent holds one: domains it has proven it holds, re-checked on a schedule (docs/identity.md, "Domains and handles")',
      }),
    ),
    handle: Type.Optional(
      Type.String({
        description:
          'Extension, present only when the agent has one: its readable handle under a verified domain, e.g. com.example/translator (GET /api/agents/by-handle/{handle})',
      }),
    ),
    key_recovery: Type.Optional(
      Type.Object(
        {
          new_key_type: KeyType,
          new_public_key: Type.String(),
          started_at: Type.Integer(),
          completes_at: Type.Integer(),
        },
        {
          description:
            "Extension, present only while a key recovery is pending: the key that becomes the agent's at completes_at unless its current key cancels (docs/identity.md)",
        },
      ),
    ),
    moderation: Type.Optional(
      Type.Object(
        {
          state: Type.Literal('suspended'),
          reason: StringEnum(MODERATION_REASONS),
          note: Nullable(Type.String()),
          since: Type.Integer({ description: 'When the operator suspended the agent (epoch ms)' }),
        },
        {
          description:
            "Extension, present only while the agent is suspended: the operator's decision (docs/moderation.md). Not covered by the transparency log leaf",
        },
      ),
    ),
  },
  { $id: 'AgentProfile' },
);
/**
 * Section 2.4 profile, plus description, avatar, website, chain_id and endpoints (docs/decisions/profiles.md).
 */
export type AgentProfile = Static<typeof AgentProfile>;
/** A pending key recovery as the profile shows it. */
export type PendingKeyRecovery = NonNullable<AgentProfile['key_recovery']>;
/** An operator's suspension as the profile shows it. */
export type ProfileModeration = NonNullable<AgentProfile['moderation']>;

export const PublishedProfile = Type.Omit(
  AgentProfile,
  ['service_record', 'availability', 'provenance', 'key_recovery', 'domains', 'handle', 'moderation'],
  {
    $id: 'PublishedProfile',
    description:
      'An agent profile as GET /api/agents/{did} returns it, without the live service_record and availability and without provenance (a change feed entry carries it beside the profile)',
  },
);
/** The profile as the change feed carries it: everything but the live members and the provenance. */
export type PublishedProfile = Static<typeof PublishedProfile>;

export const DeactivateResponse = Type.Object({
  did: Type.String(),
  status: Type.Literal('deactivated'),
  deactivated_at: Type.Integer(),
});
export type DeactivateResponse = Static<typeof DeactivateResponse>;

/** Whether the agent's webhook is probed, as its owner and the public profile see it. */
const ProbedWebhook = Type.Optional(
  Type.Boolean({
    description:
      'Extension: whether the registry probes the webhook for availability (docs/availability.md); present for webhook agents',
  }),
);

export const InvocationConfig = Type.Object({
  enabled: Type.Boolean(),
  delivery_mode: DeliveryMode,
  probes: ProbedWebhook,
});
export type InvocationConfig = Static<typeof InvocationConfig>;

export const UpdateInvocationConfigRequest = Type.Object({
  delivery_mode: DeliveryMode,
  enabled: Type.Boolean(),
  webhook_url: Type.Optional(Nullable(ProfileUrl)),
  webhook_secret: Type.Optional(
    Nullable(
      Type.String({
        maxLength: LIMITS.webhookSecretMaxLength,
        description:
          'whsec_<base64> (Standard Webhooks) or any 16-256 character string; generated when omitted',
      }),
    ),
  ),
  probes: Type.Optional(
    Type.Boolean({
      description:
        'Extension: false opts the agent out of availability probes of its webhook (its availability is then unknown); true opts back in; omitted keeps the current choice (probed by default)',
      examples: [false],
    }),
  ),
});
export type UpdateInvocationConfigRequest = Static<typeof UpdateInvocationConfigRequest>;

export const OwnerInvocationConfig = Type.Object({
  enabled: Type.Boolean(),
  delivery_mode: DeliveryMode,
  webhook_url: Nullable(Type.String({ format: 'uri' })),
  webhook_secret: Type.Optional(
    Type.String({ description: 'Present only when the registry generated the secret in this request' }),
  ),
  probes: ProbedWebhook,
});
/** What the owner sees after configuring: the secret only when the registry generated it just now. */
export type OwnerInvocationConfig = Static<typeof OwnerInvocationConfig>;

export const PaymentAddress = Type.Object({
  chain_id: Type.String(),
  address: Type.String(),
  source: Type.Literal('did'),
});
export type PaymentAddress = Static<typeof PaymentAddress>;

/** The registry's token-signing public keys (GET /.well-known/jwks.json). */
export const Jwks = Type.Object({
  keys: Type.Array(Type.Object({}, { additionalProperties: true })),
});
