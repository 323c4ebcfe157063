import { InvalidPublicKeyError, parsePublicKey, type ParsedPublicKey } from '@agent-registry/protocol';

const P = 2n ** 255n - 19n;

/**
 * The canonical encodings of the eight points of small order (the curve's torsion subgroup; a test
 * derives them with @noble/curves). A key among them admits signatures that verify for any message.
 */
const SMALL_ORDER = new Set([
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
]);

/** y = 1 and y = p - 1 have x = 0, whose sign bit must be clear (RFC 8032, 5.1.3). */
const ZERO_X_WITH_SIGN = new Set([
  '0100000000000000000000000000000000000000000000000000000000000080',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
]);

const invalidEncoding = (): InvalidPublicKeyError =>
  new InvalidPublicKeyError('public_key is not a valid Ed25519 point encoding');

/**
 * An Ed25519 public key checked as parsePublicKey checks it, except whether the point is on the curve:
 * hex form, canonical y (below p), no x = 0 with a sign bit, not of small order. The on-curve check (a
 * square root in pure JavaScript, most of parsePublicKey's cost) is `confirmOnCurve`: a key off the curve
 * has no valid signature (OpenSSL refuses to decode it), so a verifying caller needs it only when that
 * fails, to name the key (docs/decisions/performance.md, "Ed25519 key check").
 */
export function parseEd25519KeyQuickly(raw: string): ParsedPublicKey {
  if (raw.length !== 64 || !/^[0-9a-fA-F]{64}$/.test(raw)) return parsePublicKey('ed25519', raw);
  const hex = raw.toLowerCase();
  const last = Number.parseInt(hex.slice(62), 16) & 0x7f;
  const y = BigInt(`0x${last.toString(16).padStart(2, '0')}${reverseBytes(hex.slice(0, 62))}`);
  if (y >= P || ZERO_X_WITH_SIGN.has(hex)) throw invalidEncoding();
  if (SMALL_ORDER.has(hex))
    throw new InvalidPublicKeyError('public_key is a small-order (weak) Ed25519 point');
  return { keyType: 'ed25519', hex, keyId: `ed25519:${hex}`, address: null };
}

/** Throws parsePublicKey's error when the key's point is not on the curve. */
export function confirmOnCurve(key: ParsedPublicKey): void {
  parsePublicKey(key.keyType, key.hex);
}

function reverseBytes(hex: string): string {
  let reversed = '';
  for (let index = hex.length - 2; index >= 0; index -= 2) reversed += hex.slice(index, index + 2);
  return reversed;
}
