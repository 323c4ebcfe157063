import { base58 } from '@scure/base';
import { hexToBytes } from '@noble/hashes/utils.js';
import type { KeyType } from '@agent-registry/protocol';
import type { DidDocument } from './schemas.js';

const DID_V1 = 'https://www.w3.org/ns/did/v1';
const MULTIKEY_V1 = 'https://w3id.org/security/multikey/v1';
const ED25519_MULTICODEC = Uint8Array.of(0xed, 0x01);

export interface DidSubject {
  did: string;
  keyType: KeyType;
  publicKeyHex: string;
  chainId: string | null;
  address: string | null;
  profileUrl: string;
  /** The agent's A2A agent card listed as a second service. */
  agentCardUrl: string;
}

/** Multibase (base58btc, `z`) of the multicodec-prefixed Ed25519 key: the `z6Mk...` form. */
export function ed25519Multibase(publicKeyHex: string): string {
  const key = hexToBytes(publicKeyHex);
  const prefixed = new Uint8Array(ED25519_MULTICODEC.length + key.length);
  prefixed.set(ED25519_MULTICODEC);
  prefixed.set(key, ED25519_MULTICODEC.length);
  return `z${base58.encode(prefixed)}`;
}

/** W3C DID Core document: Multikey for did:web, EcdsaSecp256k1RecoveryMethod2020 as did:pkh defines it. */
export function buildDidDocument(subject: DidSubject): DidDocument {
  const service: DidDocument['service'] = [
    {
      id: `${subject.did}#registry-profile`,
      type: 'AgentRegistryProfile',
      serviceEndpoint: subject.profileUrl,
    },
    { id: `${subject.did}#a2a`, type: 'A2AAgentCard', serviceEndpoint: subject.agentCardUrl },
  ];
  if (subject.keyType === 'ed25519') {
    const keyId = `${subject.did}#key-1`;
    return {
      '@context': [DID_V1, MULTIKEY_V1],
      id: subject.did,
      verificationMethod: [
        {
          id: keyId,
          type: 'Multikey',
          controller: subject.did,
          publicKeyMultibase: ed25519Multibase(subject.publicKeyHex),
        },
      ],
      authentication: [keyId],
      assertionMethod: [keyId],
      service,
    };
  }
  const keyId = `${subject.did}#blockchainAccountId`;
  return {
    '@context': [
      DID_V1,
      {
        blockchainAccountId: 'https://w3id.org/security#blockchainAccountId',
        EcdsaSecp256k1RecoveryMethod2020:
          'https://identity.foundation/EcdsaSecp256k1RecoverySignature2020#EcdsaSecp256k1RecoveryMethod2020',
      },
    ],
    id: subject.did,
    verificationMethod: [
      {
        id: keyId,
        type: 'EcdsaSecp256k1RecoveryMethod2020',
        controller: subject.did,
        blockchainAccountId: `${subject.chainId}:${subject.address}`,
      },
    ],
    authentication: [keyId],
    assertionMethod: [keyId],
    service,
  };
}
