import { Type } from '@sinclair/typebox';

const VerificationMethod = Type.Object(
  {
    id: Type.String(),
    type: Type.String(),
    controller: Type.String(),
    publicKeyMultibase: Type.Optional(Type.String()),
    blockchainAccountId: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const DidDocument = Type.Object(
  {
    '@context': Type.Array(Type.Union([Type.String(), Type.Record(Type.String(), Type.String())])),
    id: Type.String(),
    verificationMethod: Type.Array(VerificationMethod),
    authentication: Type.Array(Type.String()),
    assertionMethod: Type.Array(Type.String()),
    service: Type.Array(
      Type.Object({ id: Type.String(), type: Type.String(), serviceEndpoint: Type.String() }),
    ),
  },
  { $id: 'DIDDocument', description: 'W3C DID Core document' },
);

export const Chain = Type.Object(
  {
    chain_id: Type.String({ examples: ['eip155:1'] }),
    namespace: Type.String(),
    reference: Type.String(),
    name: Type.String(),
    native_currency: Type.Object({ name: Type.String(), symbol: Type.String(), decimals: Type.Integer() }),
    explorer_url: Type.String(),
    testnet: Type.Boolean(),
  },
  { $id: 'Chain' },
);

export const ChainParams = Type.Object({
  chain_id: Type.String({ description: 'CAIP-2 id, e.g. eip155:1' }),
});
export const AgentIdParams = Type.Object({ id: Type.String({ description: '32 hexadecimal characters' }) });

export const Jwks = Type.Object({
  keys: Type.Array(Type.Object({}, { additionalProperties: true })),
});
