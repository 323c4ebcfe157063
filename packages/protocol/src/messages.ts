import { canonicalJson } from './canonical-json.js';
import type { Capability, KeyType, ProfileInput } from './types.js';

/** `purpose` of the registration message (interface section 5). */
export const REGISTRATION_PURPOSE = 'registration';
/** `purpose` of the message signed for `POST /api/auth/token`. */
export const AUTHENTICATION_PURPOSE = 'authenticate';

/**
 * How members the agent left out are written in the signed text. The interface names the explicit
 * nulls it requires; for the other optional members, clients serialise them either as null / []
 * (explicit) or not at all (what JSON.stringify does with undefined). Both are accepted, explicit
 * first for Ed25519 and omitted first for secp256k1, matching how each rule is worded. Our own
 * clients always sign the explicit form (docs/signing.md).
 */
type AbsentStyle = 'explicit' | 'omitted';

export interface RegistrationMessageInput {
  public_key: string;
  chain_id?: string | null;
  timestamp: number;
  profile: ProfileInput;
  /**
   * The registry the registration is meant for (its origin, e.g. `https://registry.example`). Not in the
   * interface's message: when present it is part of the signed object, so no other registry can accept
   * the same body.
   */
  audience?: string | null;
}

const absent = <T>(value: T | undefined | null, style: AbsentStyle, explicit: T): T | undefined | null =>
  value !== undefined ? value : style === 'explicit' ? explicit : undefined;

const withAudience = (audience: string | null | undefined): { audience?: string } =>
  audience === undefined || audience === null ? {} : { audience };

function ed25519RegistrationMessage(input: RegistrationMessageInput, style: AbsentStyle): string {
  const { profile } = input;
  return canonicalJson({
    ...withAudience(input.audience),
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
    purpose: REGISTRATION_PURPOSE,
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
    purpose: REGISTRATION_PURPOSE,
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
    ...withAudience(input.audience),
  });
}

/**
 * The registration text a client signs: the explicit form (absent optional members written as null,
 * absent tag lists as []), with `audience` when given.
 */
export function registrationMessage(keyType: KeyType, input: RegistrationMessageInput): string {
  return keyType === 'ed25519'
    ? ed25519RegistrationMessage(input, 'explicit')
    : secp256k1RegistrationMessage(input, 'explicit');
}

/** The texts a valid registration signature may cover, most likely first; usually one or two. */
export function registrationMessages(keyType: KeyType, input: RegistrationMessageInput): string[] {
  return [...registrationMessageCandidates(keyType, input)];
}

/**
 * registrationMessages one at a time, each built only when asked for: a verifier that stops at the
 * first text the signature covers serialises the message once (canonical JSON is a visible part of a
 * registration's cost).
 */
export function* registrationMessageCandidates(
  keyType: KeyType,
  input: RegistrationMessageInput,
): Generator<string, void, undefined> {
  const [first, second]: readonly [AbsentStyle, AbsentStyle] =
    keyType === 'ed25519' ? ['explicit', 'omitted'] : ['omitted', 'explicit'];
  const build = keyType === 'ed25519' ? ed25519RegistrationMessage : secp256k1RegistrationMessage;
  const text = build(input, first);
  yield text;
  const other = build(input, second);
  if (other !== text) yield other;
}

export interface AuthenticationMessageInput {
  /** The DID exactly as sent in the request body. */
  did: string;
  /** The registry's origin (its PUBLIC_URL), e.g. `https://registry.example`. */
  audience: string;
  /** Epoch milliseconds. */
  timestamp: number;
}

/**
 * Text signed to obtain a fresh token: `{purpose:"authenticate", did, audience, timestamp}`, as canonical
 * JSON for Ed25519 and as JSON in exactly that member order (EIP-191 personal_sign) for secp256k1.
 */
export function authenticationMessage(keyType: KeyType, input: AuthenticationMessageInput): string {
  return keyType === 'ed25519'
    ? canonicalJson({
        audience: input.audience,
        did: input.did,
        purpose: AUTHENTICATION_PURPOSE,
        timestamp: input.timestamp,
      })
    : JSON.stringify({
        purpose: AUTHENTICATION_PURPOSE,
        did: input.did,
        audience: input.audience,
        timestamp: input.timestamp,
      });
}
