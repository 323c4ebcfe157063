import { base58 } from '@scure/base';
import { hexToBytes } from '@noble/hashes/utils.js';
import type { KeyType } from '@agent-registry/protocol';
import type { DidDocument } from './schemas.js';

const DID_V1 = 'https://www.w3.org/ns/did/v1';
const MULTIKEY_V1 = 'https://w3id.org/security/multikey/v1';
const ED25519_MULTICODEC = Uint8Array.of(0xed, 0x01);
/** secp256k1-pub, for a did:web agent that rotated to a secp256k1 key (its compressed form). */
const SECP256K1_MULTICODEC = Uint8Array.of(0xe7, 0x01);

export interface DidSubject {
  did: string;
  keyType: KeyType;
  publicKeyHex: string;
  chainId: string | null;
  address: string | null;
  profileUrl: string;
  /** The agent's A2A agent card listed as a second service. */
  agentCardUrl: string;
  /** Times the key was replaced: a did:web document names its key `#key-<generation + 1>`. */
  keyGeneration?: number;
}

/** Multibase (base58btc, `z`) of the multicodec-prefixed Ed25519 key: the `z6Mk...` form. */
export function ed25519Multibase(publicKeyHex: string): string {
  return multibase(ED25519_MULTICODEC, publicKeyHex);
}

function multibase(codec: Uint8Array, publicKeyHex: string): string {
  const key = hexToBytes(publicKeyHex);
  const prefixed = new Uint8Array(codec.length + key.length);
  prefixed.set(codec);
  prefixed.set(key, codec.length);
  return `z${base58.encode(prefixed)}`;
}

/**
 * W3C DID Core document: Multikey for did:web (`publicKeyHex` of a secp256k1 key is its compressed form),
 * EcdsaSecp256k1RecoveryMethod2020 as did:pkh defines it.
 */
export function buildDidDocument(subject: DidSubject): DidDocument {
  const service: DidDocument['service'] = [
    {
      id: `${subject.did}#registry-profile`,
      type: 'AgentRegistryProfile',
      serviceEndpoint: subject.profileUrl,
    },
    { id: `${subject.did}#a2a`, type: 'A2AAgentCard', serviceEndpoint: subject.agentCardUrl },
  ];
  // A did:pkh DID is its secp256k1 key; a did:web agent's key is a Multikey of either type.
  if (!subject.did.startsWith('did:pkh:')) {
    const keyId = `${subject.did}#key-${(subject.keyGeneration ?? 0) + 1}`;
    return {
      '@context': [DID_V1, MULTIKEY_V1],
      id: subject.did,
      verificationMethod: [
        {
          id: keyId,
          type: 'Multikey',
          controller: subject.did,
          publicKeyMultibase:
            subject.keyType === 'ed25519'
              ? ed25519Multibase(subject.publicKeyHex)
              : multibase(SECP256K1_MULTICODEC, subject.publicKeyHex),
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
