import { ed25519 } from '@noble/curves/ed25519.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import type { KeyType } from './types.js';

export interface ParsedPublicKey {
  keyType: KeyType;
  /** Lower-case hex as registered. */
  hex: string;
  /** Unique identity of the key whatever its encoding. */
  keyId: string;
  /** EIP-55 checksummed Ethereum address, for secp256k1 keys. */
  address: string | null;
}

export class InvalidPublicKeyError extends Error {}

const HEX = /^[0-9a-fA-F]*$/;

export function parsePublicKey(keyType: KeyType, raw: string): ParsedPublicKey {
  if (/^0[xX][0-9a-fA-F]*$/.test(raw)) {
    // ethers and viem print keys with 0x (e.g. wallet.signingKey.publicKey, 0x04 + 128 hex).
    throw new InvalidPublicKeyError(
      `public_key starts with 0x: drop the 0x prefix and send the ${raw.length - 2} hex characters after it`,
    );
  }
  if (!HEX.test(raw)) throw new InvalidPublicKeyError('public_key must be hexadecimal without a 0x prefix');
  const hex = raw.toLowerCase();
  if (keyType === 'ed25519') {
    if (hex.length !== 64) {
      throw new InvalidPublicKeyError(`an ed25519 public_key is 64 hex characters, got ${hex.length}`);
    }
    let point;
    try {
      point = ed25519.Point.fromHex(hex, false);
    } catch {
      throw new InvalidPublicKeyError('public_key is not a valid Ed25519 point encoding');
    }
    // A small-order key admits signatures that verify for any message: anyone could act as it.
    if (point.isSmallOrder())
      throw new InvalidPublicKeyError('public_key is a small-order (weak) Ed25519 point');
    const canonical = bytesToHex(point.toBytes());
    if (canonical !== hex)
      throw new InvalidPublicKeyError('public_key is not the canonical encoding of its point');
    return { keyType, hex, keyId: `ed25519:${hex}`, address: null };
  }
  if (hex.length !== 66 && hex.length !== 130) {
    throw new InvalidPublicKeyError(
      `a secp256k1 public_key is 66 (compressed) or 130 (uncompressed) hex characters, got ${hex.length}`,
    );
  }
  if (hex.length === 66 && !hex.startsWith('02') && !hex.startsWith('03')) {
    throw new InvalidPublicKeyError('a compressed secp256k1 public_key starts with 02 or 03');
  }
  if (hex.length === 130 && !hex.startsWith('04')) {
    throw new InvalidPublicKeyError('an uncompressed secp256k1 public_key starts with 04');
  }
  let point;
  try {
    point = secp256k1.Point.fromBytes(hexToBytes(hex));
    point.assertValidity();
  } catch {
    throw new InvalidPublicKeyError('public_key is not a point on the secp256k1 curve');
  }
  const compressed = bytesToHex(point.toBytes(true));
  return {
    keyType,
    hex,
    keyId: `secp256k1:${compressed}`,
    address: ethereumAddress(point.toBytes(false)),
  };
}

/** Address of an uncompressed secp256k1 key (65 bytes, 0x04 prefix), EIP-55 checksummed. */
export function ethereumAddress(uncompressed: Uint8Array): string {
  const lower = bytesToHex(keccak_256(uncompressed.subarray(1)).subarray(12));
  return toChecksumAddress(lower);
}

/** EIP-55 mixed-case checksum encoding of a 20-byte address given as hex (any case, optional 0x). */
export function toChecksumAddress(address: string): string {
  const lower = address.toLowerCase().replace(/^0x/, '');
  const hash = bytesToHex(keccak_256(new TextEncoder().encode(lower)));
  let out = '0x';
  for (let i = 0; i < lower.length; i++) {
    const char = lower[i] as string;
    out += parseInt(hash[i] as string, 16) >= 8 ? char.toUpperCase() : char;
  }
  return out;
}
