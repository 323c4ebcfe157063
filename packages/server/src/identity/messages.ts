import { canonicalJson } from './canonical-json.js';
import type { Capability, KeyType, ProfileInput } from './types.js';

/**
 * How members the agent left out are written in the signed text. The interface names the explicit
 * nulls it requires; for the other optional members, clients serialise them either as null / []
 * (explicit) or not at all (what JSON.stringify does with undefined). Both are accepted, explicit
 * first for Ed25519 and omitted first for secp256k1, matching how each rule is worded.
 */
type AbsentStyle = 'explicit' | 'omitted';

export interface RegistrationMessageInput {
  public_key: string;
  chain_id?: string | null;
  timestamp: number;
  profile: ProfileInput;
}

const absent = <T>(value: T | undefined, style: AbsentStyle, explicit: T): T | undefined =>
  value !== undefined ? value : style === 'explicit' ? explicit : undefined;

function ed25519RegistrationMessage(input: RegistrationMessageInput, style: AbsentStyle): string {
  const { profile } = input;
  return canonicalJson({
    key_type: 'ed25519',
    profile: {
      avatar: profile.avatar ?? null,
      capabilities: profile.capabilities,
      description: absent(profile.description, style, null),
      name: profile.name,
      tags: absent(profile.tags, style, []),
      website: absent(profile.website, style, null),
    },
    public_key: input.public_key,
    purpose: 'registration',
    timestamp: input.timestamp,
  });
}

const secpCapability = (capability: Capability, style: AbsentStyle) => ({
  type: capability.type,
  description: absent(capability.description, style, null),
  tags: capability.tags ?? [],
});

function secp256k1RegistrationMessage(input: RegistrationMessageInput, style: AbsentStyle): string {
  const { profile } = input;
  // Member order is part of the signed text (section 5.2): JSON.stringify keeps insertion order.
  return JSON.stringify({
    purpose: 'registration',
    public_key: input.public_key,
    key_type: 'secp256k1',
    chain_id: input.chain_id,
    profile: {
      name: profile.name,
      description: absent(profile.description, style, null),
      avatar: profile.avatar ?? null,
      website: profile.website ?? null,
      capabilities: profile.capabilities.map((capability) => secpCapability(capability, style)),
      tags: absent(profile.tags, style, []),
    },
    timestamp: input.timestamp,
  });
}

/** The texts a valid registration signature may cover, most likely first; usually one or two. */
export function registrationMessages(keyType: KeyType, input: RegistrationMessageInput): string[] {
  const candidates =
    keyType === 'ed25519'
      ? [ed25519RegistrationMessage(input, 'explicit'), ed25519RegistrationMessage(input, 'omitted')]
      : [secp256k1RegistrationMessage(input, 'omitted'), secp256k1RegistrationMessage(input, 'explicit')];
  return [...new Set(candidates)];
}

/** Text signed to obtain a fresh token: `{purpose:"authenticate", did, timestamp}` by the key type's rule. */
export function authenticationMessage(keyType: KeyType, did: string, timestamp: number): string {
  return keyType === 'ed25519'
    ? canonicalJson({ did, purpose: 'authenticate', timestamp })
    : JSON.stringify({ purpose: 'authenticate', did, timestamp });
}
