/**
 * Keys, signatures and request bodies made before a timed run, the way clients make them: Ed25519 with
 * node:crypto over canonical JSON (section 5.1), secp256k1 with ethers' EIP-191 personal_sign (5.2).
 */
import crypto from 'node:crypto';
import { referenceCanonicalJson } from '@agent-registry/testkit';
import { Wallet } from 'ethers';
import { prng, registrationProfile, type SyntheticProfile } from './corpus.js';

export interface Ed25519Identity {
  publicKey: string;
  privateKey: crypto.KeyObject;
}

export function ed25519Identity(): Ed25519Identity {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' });
  return { publicKey: Buffer.from(jwk.x as string, 'base64url').toString('hex'), privateKey };
}

export const signEd25519 = (identity: Ed25519Identity, message: string): string =>
  crypto.sign(null, Buffer.from(message, 'utf8'), identity.privateKey).toString('hex');

export function ed25519RegistrationBody(
  identity: Ed25519Identity,
  profile: SyntheticProfile,
  timestamp: number,
): string {
  const message = referenceCanonicalJson({
    key_type: 'ed25519',
    profile: {
      avatar: null,
      capabilities: profile.capabilities,
      description: profile.description,
      name: profile.name,
      tags: profile.tags,
      website: null,
    },
    public_key: identity.publicKey,
    purpose: 'registration',
    timestamp,
  });
  return JSON.stringify({
    public_key: identity.publicKey,
    key_type: 'ed25519',
    profile,
    timestamp,
    signature: signEd25519(identity, message),
  });
}

export function secp256k1RegistrationBody(
  wallet: Wallet,
  profile: SyntheticProfile,
  timestamp: number,
): string {
  const publicKey = wallet.signingKey.publicKey.slice(2);
  const chainId = 'eip155:1';
  // Section 5.2: member order is part of the signed text.
  const message = JSON.stringify({
    purpose: 'registration',
    public_key: publicKey,
    key_type: 'secp256k1',
    chain_id: chainId,
    profile: {
      name: profile.name,
      description: profile.description,
      avatar: null,
      website: null,
      capabilities: profile.capabilities.map((capability) => ({
        type: capability.type,
        description: capability.description,
        tags: capability.tags ?? [],
      })),
      tags: profile.tags,
    },
    timestamp,
  });
  return JSON.stringify({
    public_key: publicKey,
    key_type: 'secp256k1',
    chain_id: chainId,
    profile,
    timestamp,
    signature: wallet.signMessageSync(message),
  });
}

/** `count` signed registration bodies with distinct keys, all stamped `timestamp` (within the 5-minute window). */
export function registrationBodies(
  keyType: 'ed25519' | 'secp256k1',
  count: number,
  timestamp: number,
  seed: number,
): string[] {
  const random = prng(seed);
  const bodies: string[] = [];
  for (let n = 0; n < count; n++) {
    const profile = registrationProfile(random, 1_000_000 + seed + n);
    bodies.push(
      keyType === 'ed25519'
        ? ed25519RegistrationBody(ed25519Identity(), profile, timestamp)
        : secp256k1RegistrationBody(
            new Wallet(`0x${crypto.randomBytes(32).toString('hex')}`),
            profile,
            timestamp,
          ),
    );
  }
  return bodies;
}
