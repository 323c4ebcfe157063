import { Type, type Static } from '@sinclair/typebox';

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
    id: Type.String({
      description: 'The DID: did:web:<domain>:agent:<32 hex> or did:pkh:eip155:<chain>:<address>',
      pattern:
        '^did:(web:[^:]+:agent:[0-9a-f]{32}|pkh:[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}:0x[0-9a-fA-F]{40})$',
    }),
    verificationMethod: Type.Array(VerificationMethod),
    authentication: Type.Array(Type.String()),
    assertionMethod: Type.Array(Type.String()),
    service: Type.Array(
      Type.Object({
        id: Type.String(),
        type: Type.String(),
        serviceEndpoint: Type.String({ format: 'uri' }),
      }),
    ),
  },
  { $id: 'DIDDocument', description: 'W3C DID Core document' },
);
/** The W3C DID Core document the registry serves for an agent (modules/identity/did-document.ts). */
export type DidDocument = Static<typeof DidDocument>;
