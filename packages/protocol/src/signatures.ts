import { ed25519 } from '@noble/curves/ed25519.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';

const HEX = /^[0-9a-fA-F]+$/;
const encoder = new TextEncoder();

export const strip0x = (hex: string): string =>
  hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;

function privateKeyBytes(privateKeyHex: string, what: string): Uint8Array {
  const hex = strip0x(privateKeyHex);
  if (hex.length !== 64 || !HEX.test(hex))
    throw new TypeError(`${what} private key must be 64 hex characters`);
  return hexToBytes(hex);
}

/** Public key (64 hex) of an Ed25519 private key given as its 32-byte seed in hex. */
export function ed25519PublicKey(privateKeyHex: string): string {
  return bytesToHex(ed25519.getPublicKey(privateKeyBytes(privateKeyHex, 'an Ed25519')));
}

/** Detached Ed25519 signature (128 hex) over the UTF-8 bytes of the message. */
export function signEd25519(message: string, privateKeyHex: string): string {
  return bytesToHex(ed25519.sign(encoder.encode(message), privateKeyBytes(privateKeyHex, 'an Ed25519')));
}

/** Ed25519 verification in pure JavaScript (for browsers; the registry itself verifies with OpenSSL). */
export function verifyEd25519(message: string, signatureHex: string, publicKeyHex: string): boolean {
  const signature = strip0x(signatureHex);
  if (signature.length !== 128 || !HEX.test(signature) || !/^[0-9a-fA-F]{64}$/.test(publicKeyHex))
    return false;
  try {
    return ed25519.verify(hexToBytes(signature), encoder.encode(message), hexToBytes(publicKeyHex));
  } catch {
    return false;
  }
}

/** Compressed public key (66 hex) of a secp256k1 private key in hex (`0x` optional). */
export function secp256k1PublicKey(privateKeyHex: string): string {
  return bytesToHex(secp256k1.getPublicKey(privateKeyBytes(privateKeyHex, 'a secp256k1'), true));
}

/** EIP-191 version 0x45 ("personal_sign") digest of a UTF-8 message. */
export function eip191Digest(message: string): Uint8Array {
  const body = encoder.encode(message);
  const prefix = encoder.encode(`\x19Ethereum Signed Message:\n${body.length}`);
  const data = new Uint8Array(prefix.length + body.length);
  data.set(prefix);
  data.set(body, prefix.length);
  return keccak_256(data);
}

/** personal_sign as wallets produce it: `0x` + r (32 bytes) + s (32 bytes, low-S) + v (27 or 28). */
export function signEip191(message: string, privateKeyHex: string): string {
  const recovered = secp256k1.sign(eip191Digest(message), privateKeyBytes(privateKeyHex, 'a secp256k1'), {
    prehash: false,
    format: 'recovered',
  });
  const signature = secp256k1.Signature.fromBytes(recovered, 'recovered');
  const v = (signature.recovery ?? 0) + 27;
  return `0x${bytesToHex(signature.toBytes('compact'))}${v.toString(16)}`;
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
