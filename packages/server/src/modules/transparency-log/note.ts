import crypto, { type KeyObject } from 'node:crypto';

/**
 * C2SP signed-note Ed25519 signatures (https://c2sp.org/signed-note): key ID = the first four bytes of
 * SHA-256(name || 0x0A || 0x01 || public key); a signature line is "— <name> base64(key ID || sig)".
 */
const ED25519_TYPE = 0x01;

export class NoteSigner {
  readonly keyId: Buffer;
  readonly publicKey: Buffer;

  constructor(
    readonly name: string,
    private readonly privateKey: KeyObject,
  ) {
    if (name === '' || /[\s+]/u.test(name))
      throw new Error(`note key name ${JSON.stringify(name)} has a space or "+"`);
    const jwk = crypto.createPublicKey(privateKey).export({ format: 'jwk' });
    this.publicKey = Buffer.from(jwk.x ?? '', 'base64url');
    this.keyId = crypto
      .createHash('sha256')
      .update(`${name}\n`)
      .update(Buffer.from([ED25519_TYPE]))
      .update(this.publicKey)
      .digest()
      .subarray(0, 4);
  }

  /** `<name>+<hex key ID>+<base64(0x01 || public key)>`. */
  get verifierKey(): string {
    const material = Buffer.concat([Buffer.from([ED25519_TYPE]), this.publicKey]).toString('base64');
    return `${this.name}+${this.keyId.toString('hex')}+${material}`;
  }

  /** The signed note: the text (ending in a newline), a blank line, one signature line. */
  sign(text: string): string {
    if (!text.endsWith('\n')) throw new Error('note text must end with a newline');
    const signature = crypto.sign(null, Buffer.from(text, 'utf8'), this.privateKey);
    return `${text}\n\u2014 ${this.name} ${Buffer.concat([this.keyId, signature]).toString('base64')}\n`;
  }
}

/** The checkpoint body of C2SP tlog-checkpoint: origin, tree size, base64 root hash, one per line. */
export function checkpointText(origin: string, size: number, root: Uint8Array): string {
  return `${origin}\n${size}\n${Buffer.from(root).toString('base64')}\n`;
}
