/**
 * Agents as clients make them, written independently of the server's code: Ed25519 keys from
 * node:crypto over canonical JSON (section 5.1), secp256k1 keys with ethers' EIP-191 personal_sign
 * (section 5.2), and the signed bodies and paths of the REST API.
 */
import crypto from 'node:crypto';
import { Wallet } from 'ethers';

/** PUBLIC_URL of test registries: the audience their signed messages name. */
export const TEST_PUBLIC_URL = 'http://localhost:8080';

export interface Capability {
  type: string;
  description?: string | null;
  tags?: string[] | null;
  input_schema?: Record<string, unknown> | null;
  output_schema?: Record<string, unknown> | null;
}

export interface Profile {
  name: string;
  description?: string | null;
  capabilities: Capability[];
  tags?: string[] | null;
  avatar?: string | null;
  website?: string | null;
}

export const defaultProfile = (): Profile => ({
  name: 'Translator',
  description: 'Translates text between languages',
  capabilities: [{ type: 'translation', description: 'English to French', tags: ['en', 'fr'] }],
  tags: ['language'],
});

/** Canonical JSON written out independently of the library the service uses: the rule of section 5.1. */
export function referenceCanonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(referenceCanonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${referenceCanonicalJson(member)}`).join(',')}}`;
}

export interface TestAgent {
  keyType: 'ed25519' | 'secp256k1';
  publicKey: string;
  chainId: string | null;
  sign(message: string): Promise<string>;
  /** `audience`, when given, is added as the extension member docs/signing.md describes. */
  registrationMessage(profile: Profile, timestamp: number, audience?: string): string;
  /** Bound to `audience`, by default the test registry's PUBLIC_URL. */
  authenticationMessage(did: string, timestamp: number, audience?: string): string;
}

/** Ed25519 keys and signatures from node:crypto. */
export function ed25519Agent(): TestAgent & { seed: Uint8Array } {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' });
  const publicKeyHex = Buffer.from(jwk.x as string, 'base64url').toString('hex');
  return {
    /** The 32-byte private seed, for signing with other libraries (did-jwt). */
    seed: new Uint8Array(Buffer.from(privateKey.export({ format: 'jwk' }).d as string, 'base64url')),
    keyType: 'ed25519',
    publicKey: publicKeyHex,
    chainId: null,
    sign: async (message) => crypto.sign(null, Buffer.from(message, 'utf8'), privateKey).toString('hex'),
    registrationMessage: (profile, timestamp, audience) =>
      referenceCanonicalJson({
        audience,
        key_type: 'ed25519',
        profile: {
          avatar: profile.avatar ?? null,
          capabilities: profile.capabilities,
          description: profile.description ?? null,
          name: profile.name,
          tags: profile.tags ?? [],
          website: profile.website ?? null,
        },
        public_key: publicKeyHex,
        purpose: 'registration',
        timestamp,
      }),
    authenticationMessage: (did, timestamp, audience = TEST_PUBLIC_URL) =>
      referenceCanonicalJson({ audience, did, purpose: 'authenticate', timestamp }),
  };
}

/** secp256k1 keys and EIP-191 personal_sign signatures from ethers. */
export function secp256k1Agent(
  options: { chainId?: string; compressed?: boolean; wallet?: Wallet } = {},
): TestAgent & { wallet: Wallet } {
  const wallet = options.wallet ?? (Wallet.createRandom() as unknown as Wallet);
  const publicKey = (
    options.compressed ? wallet.signingKey.compressedPublicKey : wallet.signingKey.publicKey
  ).slice(2);
  const chainId = options.chainId ?? 'eip155:1';
  return {
    wallet,
    keyType: 'secp256k1',
    publicKey,
    chainId,
    sign: (message) => wallet.signMessage(message),
    registrationMessage: (profile, timestamp, audience) =>
      JSON.stringify({
        purpose: 'registration',
        public_key: publicKey,
        key_type: 'secp256k1',
        chain_id: chainId,
        profile: {
          name: profile.name,
          description: profile.description,
          avatar: profile.avatar ?? null,
          website: profile.website ?? null,
          capabilities: profile.capabilities.map((capability) => ({
            type: capability.type,
            description: capability.description,
            tags: capability.tags ?? [],
          })),
          tags: profile.tags,
        },
        timestamp,
        audience,
      }),
    authenticationMessage: (did, timestamp, audience = TEST_PUBLIC_URL) =>
      JSON.stringify({ purpose: 'authenticate', did, audience, timestamp }),
  };
}

export async function registrationBody(
  agent: TestAgent,
  profile: Profile,
  timestamp: number,
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {
    public_key: agent.publicKey,
    key_type: agent.keyType,
    profile,
    timestamp,
    signature: await agent.sign(
      agent.registrationMessage(profile, timestamp, extra.audience as string | undefined),
    ),
    ...extra,
  };
  if (agent.chainId !== null) body.chain_id = agent.chainId;
  return body;
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
export const agentPath = (did: string, suffix = ''): string =>
  `/api/agents/${encodeURIComponent(did)}${suffix}`;
