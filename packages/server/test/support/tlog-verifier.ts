/**
 * An independent verifier of the registry's transparency log, written from RFC 6962 / RFC 9162 and
 * the C2SP signed-note, tlog-checkpoint and tlog-tiles texts. It deliberately imports nothing of the
 * server: its hashing is @noble/hashes, its signatures @noble/curves.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';

const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};
const equal = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && a.every((byte, i) => byte === b[i]);

export const hashLeaf = (data: Uint8Array): Uint8Array => sha256(concat(new Uint8Array([0]), data));
export const hashChildren = (left: Uint8Array, right: Uint8Array): Uint8Array =>
  sha256(concat(new Uint8Array([1]), left, right));

/** MTH of RFC 6962 section 2.1, straight from the definition. */
export function merkleRoot(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return sha256(new Uint8Array());
  if (leaves.length === 1) return hashLeaf(leaves[0]!);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return hashChildren(merkleRoot(leaves.slice(0, k)), merkleRoot(leaves.slice(k)));
}

/** RFC 9162 section 2.1.3.2: verifies an inclusion proof. */
export function verifyInclusion(
  index: number,
  size: number,
  leafHashValue: Uint8Array,
  proof: Uint8Array[],
  root: Uint8Array,
): boolean {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leafHashValue;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = hashChildren(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = hashChildren(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equal(r, root);
}

/** RFC 9162 section 2.1.4.2: verifies a consistency proof between two tree heads. */
export function verifyConsistency(
  first: number,
  second: number,
  firstRoot: Uint8Array,
  secondRoot: Uint8Array,
  given: Uint8Array[],
): boolean {
  if (first > second) return false;
  if (first === second) return given.length === 0 && equal(firstRoot, secondRoot);
  if (first === 0) return given.length === 0;
  const proof = (first & (first - 1)) === 0 ? [firstRoot, ...given] : [...given];
  if (proof.length === 0) return false;
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = proof[0]!;
  let sr = proof[0]!;
  for (const c of proof.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = hashChildren(c, fr);
      sr = hashChildren(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = hashChildren(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equal(fr, firstRoot) && equal(sr, secondRoot);
}

export interface VerifiedCheckpoint {
  origin: string;
  size: number;
  root: Uint8Array;
}

/** Verifies a C2SP signed note against one Ed25519 verifier key and parses it as a checkpoint. */
export function verifyCheckpoint(note: string, verifierKey: string): VerifiedCheckpoint {
  const text = verifyNote(note, verifierKey);
  const [origin, size, root] = text.split('\n');
  if (origin === undefined || size === undefined || root === undefined || !/^(0|[1-9]\d*)$/.test(size)) {
    throw new Error('the note is not a checkpoint');
  }
  return { origin, size: Number(size), root: Uint8Array.from(Buffer.from(root, 'base64')) };
}

/** The note's text once one signature by the key verifies (signed-note: unknown signatures ignored). */
export function verifyNote(note: string, verifierKey: string): string {
  // The key material is base64, which may itself hold "+": only the first two "+" separate.
  const [name, idHex, ...rest] = verifierKey.trim().split('+');
  const material = rest.join('+');
  const keyBytes = Uint8Array.from(Buffer.from(material, 'base64'));
  if (name === undefined || idHex === undefined || keyBytes[0] !== 0x01 || keyBytes.length !== 33) {
    throw new Error('not an Ed25519 verifier key');
  }
  const publicKey = keyBytes.subarray(1);
  const keyId = sha256(concat(new TextEncoder().encode(`${name}\n`), keyBytes)).subarray(0, 4);
  if (Buffer.from(keyId).toString('hex') !== idHex) throw new Error('verifier key ID does not match its key');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new Error('the note has no signature block');
  const text = note.slice(0, split + 1);
  for (const line of note.slice(split + 2).split('\n')) {
    const match = /^\u2014 (\S+) (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const signature = Uint8Array.from(Buffer.from(match[2]!, 'base64'));
    if (Buffer.from(signature.subarray(0, 4)).toString('hex') !== idHex) continue;
    if (!ed25519.verify(signature.subarray(4), new TextEncoder().encode(text), publicKey)) {
      throw new Error('the checkpoint signature does not verify');
    }
    return text;
  }
  throw new Error('no signature by the log key');
}

/** Splits an entry bundle (big-endian uint16 length-prefixed entries). */
export function splitBundle(bundle: Uint8Array): Uint8Array[] {
  const entries: Uint8Array[] = [];
  let at = 0;
  while (at < bundle.length) {
    const length = (bundle[at]! << 8) | bundle[at + 1]!;
    entries.push(bundle.subarray(at + 2, at + 2 + length));
    at += 2 + length;
  }
  return entries;
}
