import crypto from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';

const HEX = /^[0-9a-fA-F]+$/;
const strip0x = (hex: string): string => (hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex);

/** Detached Ed25519 signature (hex) over the UTF-8 message, checked with node:crypto (OpenSSL). */
export function verifyEd25519(message: string, signatureHex: string, publicKeyHex: string): boolean {
  const signature = strip0x(signatureHex);
  if (signature.length !== 128 || !HEX.test(signature)) return false;
  const publicKey = crypto.createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKeyHex, 'hex').toString('base64url') },
    format: 'jwk',
  });
  return crypto.verify(null, Buffer.from(message, 'utf8'), publicKey, Buffer.from(signature, 'hex'));
}

/** EIP-191 version 0x45 ("personal_sign") digest of a UTF-8 message. */
export function eip191Digest(message: string): Uint8Array {
  const body = new TextEncoder().encode(message);
  const prefix = new TextEncoder().encode(`\x19Ethereum Signed Message:\n${body.length}`);
  const data = new Uint8Array(prefix.length + body.length);
  data.set(prefix);
  data.set(body, prefix.length);
  return keccak_256(data);
}

/**
 * Recovers the signer of a personal_sign signature (65 bytes r||s||v, v in 27/28 or 0/1) and returns
 * its compressed public key as hex, or null when the signature is malformed or recovers nothing.
 */
export function recoverEip191Signer(message: string, signatureHex: string): string | null {
  const signature = strip0x(signatureHex);
  if (signature.length !== 130 || !HEX.test(signature)) return null;
  const bytes = hexToBytes(signature);
  const v = bytes[64] as number;
  const recovery = v >= 27 ? v - 27 : v;
  if (recovery !== 0 && recovery !== 1) return null;
  try {
    const point = secp256k1.Signature.fromBytes(bytes.subarray(0, 64), 'compact')
      .addRecoveryBit(recovery)
      .recoverPublicKey(eip191Digest(message));
    return bytesToHex(point.toBytes(true));
  } catch {
    return null;
  }
}
