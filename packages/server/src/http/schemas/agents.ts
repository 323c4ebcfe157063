import { Type, type Static } from '@sinclair/typebox';
import { DELIVERY_MODES, KEY_TYPES } from '../../identity/types.js';
import { LIMITS } from '../../services/limits.js';
import { JsonObject, Nullable } from './common.js';

const KeyType = Type.Unsafe<'ed25519' | 'secp256k1'>({ type: 'string', enum: [...KEY_TYPES] });
const DeliveryMode = Type.Unsafe<'none' | 'webhook' | 'queue'>({ type: 'string', enum: [...DELIVERY_MODES] });

const Tags = Type.Array(Type.String({ maxLength: LIMITS.tagMaxLength }), { maxItems: LIMITS.tagsMaxCount });
const Url = Type.String({ maxLength: LIMITS.urlMaxLength, description: 'http:// or https:// URL' });

export const Capability = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: LIMITS.capabilityTypeMaxLength, examples: ['translation'] }),
    description: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.capabilityDescriptionMaxLength }))),
    tags: Type.Optional(Nullable(Tags)),
    input_schema: Type.Optional(Nullable(JsonObject)),
    output_schema: Type.Optional(Nullable(JsonObject)),
  },
  { $id: 'Capability' },
);
const CapabilityRef = Type.Unsafe<Static<typeof Capability>>(Type.Ref('Capability'));

const Capabilities = Type.Array(CapabilityRef, {
  minItems: LIMITS.capabilitiesMinCount,
  maxItems: LIMITS.capabilitiesMaxCount,
});

export const ProfileInput = Type.Object({
  name: Type.String({ minLength: 1, maxLength: LIMITS.nameMaxLength }),
  description: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.descriptionMaxLength }))),
  capabilities: Capabilities,
  tags: Type.Optional(Nullable(Tags)),
  avatar: Type.Optional(Nullable(Url)),
  website: Type.Optional(Nullable(Url)),
});

export const RegisterRequest = Type.Object({
  public_key: Type.String({ description: '64 hex (ed25519); 66 or 130 hex (secp256k1)', maxLength: 130 }),
  key_type: Type.Optional(KeyType),
  chain_id: Type.Optional(Nullable(Type.String({ maxLength: 64, examples: ['eip155:1'] }))),
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
});

export const TokenResponse = Type.Object({
  did: Type.String(),
  token: Type.String({ description: 'EdDSA-signed JWT; send as Authorization: Bearer <token>' }),
  expires_at: Type.Integer({ description: 'Epoch milliseconds when the token expires' }),
});

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

export const UpdateProfileRequest = Type.Object({
  name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: LIMITS.nameMaxLength }))),
  description: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.descriptionMaxLength }))),
  capabilities: Type.Optional(Nullable(Capabilities)),
  tags: Type.Optional(Nullable(Tags)),
  avatar: Type.Optional(Nullable(Url)),
  website: Type.Optional(Nullable(Url)),
});

const Endpoint = Type.Object({
  type: Type.String({ enum: ['did_document', 'invoke'] }),
  url: Type.String(),
});

export const AgentProfile = Type.Object(
  {
    did: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    avatar: Nullable(Type.String()),
    website: Nullable(Type.String()),
    public_key: Type.String({ description: 'hex' }),
    key_type: KeyType,
    chain_id: Nullable(Type.String()),
    capabilities: Type.Array(CapabilityRef),
    tags: Type.Array(Type.String()),
    endpoints: Type.Array(Endpoint),
    status: Type.String({ enum: ['active', 'deactivated'] }),
    invocation_enabled: Type.Boolean(),
    delivery_mode: DeliveryMode,
    average_rating: Type.Number(),
    reputation_score: Type.Number(),
    total_reviews: Type.Integer(),
    created_at: Type.Integer(),
    updated_at: Type.Integer(),
    service_record: Type.Ref('ServiceRecord', {
      description:
        'Extension (issue 17): the measured service record; every field of section 2.4 is unchanged',
    }),
  },
  { $id: 'AgentProfile' },
);

export const DeactivateResponse = Type.Object({
  did: Type.String(),
  status: Type.Literal('deactivated'),
  deactivated_at: Type.Integer(),
});

export const InvocationConfig = Type.Object({
  enabled: Type.Boolean(),
  delivery_mode: DeliveryMode,
});

export const UpdateInvocationConfigRequest = Type.Object({
  delivery_mode: DeliveryMode,
  enabled: Type.Boolean(),
  webhook_url: Type.Optional(Nullable(Url)),
  webhook_secret: Type.Optional(
    Nullable(
      Type.String({
        maxLength: LIMITS.webhookSecretMaxLength,
        description:
          'whsec_<base64> (Standard Webhooks) or any 16-256 character string; generated when omitted',
      }),
    ),
  ),
});

export const OwnerInvocationConfig = Type.Object({
  enabled: Type.Boolean(),
  delivery_mode: DeliveryMode,
  webhook_url: Nullable(Type.String()),
  webhook_secret: Type.Optional(
    Type.String({ description: 'Present only when the registry generated the secret in this request' }),
  ),
});

export const PaymentAddress = Type.Object({
  chain_id: Type.String(),
  address: Type.String(),
  source: Type.Literal('did'),
});
