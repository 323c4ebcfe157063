import {
  CHAIN_ID_PATTERN,
  ed25519PublicKey,
  parsePublicKey,
  pkhDid,
  recoverEip191Signer,
  secp256k1PublicKey,
  signEd25519,
  signEip191,
  type KeyType,
} from '@agent-registry/protocol';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex } from '@noble/hashes/utils.js';

/** Anything that signs like `personal_sign` (EIP-191), e.g. an ethers `Wallet` or a browser wallet adapter. */
export interface Eip191Signer {
  signMessage(message: string): Promise<string>;
  /** ethers exposes the public key here (`0x04...`). */
  signingKey?: { publicKey: string };
  /** Or directly, hex with or without `0x`, compressed or not. */
  publicKey?: string;
}

type Backing =
  | { kind: 'ed25519'; privateKey: string }
  | { kind: 'secp256k1'; privateKey: string }
  | { kind: 'signer'; signer: Eip191Signer };

const HEX_KEY = /^(0x)?[0-9a-fA-F]{64}$/;
const REVEAL_MESSAGE = 'agent-registry: reveal the public key of this signer';

function checkChainId(chainId: string): string {
  if (!CHAIN_ID_PATTERN.test(chainId)) {
    throw new TypeError(`chainId "${chainId}" is not a CAIP-2 eip155 chain id such as "eip155:1"`);
  }
  return chainId;
}

function checkPrivateKey(hex: string, what: string): string {
  if (!HEX_KEY.test(hex)) throw new TypeError(`${what} private key must be 64 hex characters (0x optional)`);
  return hex.replace(/^0x/, '').toLowerCase();
}

/** What logging, inspecting or serialising a key shows instead of its private key. */
const REDACTED = '[redacted]';

/**
 * An agent's key: signs the registry's messages and knows its public key, address and (when it can) DID.
 * The private key lives in a true private field: `console.log`, `util.inspect`, `JSON.stringify`,
 * spreading and `structuredClone` never show it; only `exportPrivateKey()` does.
 */
export class AgentKey {
  #publicKeyCache: string | undefined;
  readonly #backing: Backing;

  private constructor(
    readonly keyType: KeyType,
    /** `eip155:<n>` for secp256k1 keys, null for Ed25519. */
    readonly chainId: string | null,
    backing: Backing,
  ) {
    this.#backing = backing;
  }

  /** What `JSON.stringify` writes: the key's kind, never its private part. */
  toJSON(): { keyType: KeyType; chainId: string | null; privateKey: string } {
    return { keyType: this.keyType, chainId: this.chainId, privateKey: REDACTED };
  }

  /** What `console.log` and `util.inspect` show (Node looks this symbol up by its registered name). */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `AgentKey ${JSON.stringify(this.toJSON())}`;
  }

  /** A new random Ed25519 key (a did:web agent; the registry assigns its DID at registration). */
  static generateEd25519(): AgentKey {
    return AgentKey.fromEd25519(bytesToHex(ed25519.utils.randomSecretKey()));
  }

  /** An Ed25519 key from its 32-byte private key (seed) in hex. */
  static fromEd25519(privateKeyHex: string): AgentKey {
    return new AgentKey('ed25519', null, {
      kind: 'ed25519',
      privateKey: checkPrivateKey(privateKeyHex, 'an Ed25519'),
    });
  }

  /** A secp256k1 key from a hex private key (`0x` optional) for a chain such as `eip155:1`. */
  static fromSecp256k1(privateKeyHex: string, chainId: string): AgentKey {
    return new AgentKey('secp256k1', checkChainId(chainId), {
      kind: 'secp256k1',
      privateKey: checkPrivateKey(privateKeyHex, 'a secp256k1'),
    });
  }

  /** Any EIP-191 signer (an ethers Wallet, a wallet adapter) for a chain such as `eip155:1`. */
  static fromEip191Signer(signer: Eip191Signer, chainId: string): AgentKey {
    if (typeof signer?.signMessage !== 'function') {
      throw new TypeError('an EIP-191 signer needs a signMessage(message: string) method');
    }
    return new AgentKey('secp256k1', checkChainId(chainId), { kind: 'signer', signer });
  }

  /** Public key as the registry stores it: 64 hex (Ed25519) or 66 hex compressed (secp256k1). */
  async publicKey(): Promise<string> {
    this.#publicKeyCache ??= await this.computePublicKey();
    return this.#publicKeyCache;
  }

  /** EIP-55 address of a secp256k1 key; null for Ed25519. */
  async address(): Promise<string | null> {
    if (this.keyType === 'ed25519') return null;
    return parsePublicKey('secp256k1', await this.publicKey()).address;
  }

  /** The DID known before registering: did:pkh for secp256k1; null for Ed25519 (the registry assigns it). */
  async did(): Promise<string | null> {
    const address = await this.address();
    return address === null || this.chainId === null ? null : pkhDid(this.chainId, address);
  }

  /** Signs a message text: Ed25519 hex signature of its UTF-8 bytes, or EIP-191 personal_sign (`0x...`). */
  async sign(message: string): Promise<string> {
    switch (this.#backing.kind) {
      case 'ed25519':
        return signEd25519(message, this.#backing.privateKey);
      case 'secp256k1':
        return signEip191(message, this.#backing.privateKey);
      case 'signer':
        return this.#backing.signer.signMessage(message);
    }
  }

  /** The private key as hex; a signer-backed key has none to give. */
  exportPrivateKey(): string {
    if (this.#backing.kind === 'signer') {
      throw new TypeError('this key is held by an external signer; it has no private key to export');
    }
    return this.#backing.privateKey;
  }

  private async computePublicKey(): Promise<string> {
    switch (this.#backing.kind) {
      case 'ed25519':
        return ed25519PublicKey(this.#backing.privateKey);
      case 'secp256k1':
        return secp256k1PublicKey(this.#backing.privateKey);
      case 'signer': {
        const { signer } = this.#backing;
        const given = signer.signingKey?.publicKey ?? signer.publicKey;
        if (given !== undefined) return compressed(given.replace(/^0x/, ''));
        // A signer that does not expose its key reveals it through one signature.
        const recovered = recoverEip191Signer(REVEAL_MESSAGE, await signer.signMessage(REVEAL_MESSAGE));
        if (recovered === null) throw new TypeError('the signer returned a signature that recovers no key');
        return recovered;
      }
    }
  }
}

function compressed(hex: string): string {
  const parsed = parsePublicKey('secp256k1', hex);
  return parsed.keyId.slice('secp256k1:'.length);
}
