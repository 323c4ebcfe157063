import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { canonicalJson } from './canonical-json.js';
import { LogVerificationError } from './log-errors.js';
import { decodeEventLeaf, type LogEventLeaf } from './log-events.js';

export { LogVerificationError } from './log-errors.js';
export { TILE_WIDTH, entryBundlePath, hashTilePath, splitEntryBundle } from './log-tiles.js';
export type { LogEventLeaf } from './log-events.js';

/**
 * Client-side verification of the registry's transparency log: C2SP signed-note checkpoints, RFC 6962
 * (RFC 9162 section 2.1) inclusion and consistency proofs, tlog-tiles entry bundles and the leaf format
 * of docs/transparency-log.md. No I/O: a follower passes in how it reads the log.
 */

/** What a leaf says a change was; a deactivation is logged as its own operation. */
export const LOG_OPERATIONS = ['register', 'update', 'deactivate', 'reputation'] as const;
export type LogOperation = (typeof LOG_OPERATIONS)[number];

/** A leaf of the registry's transparency log, as its data (RFC 8785 canonical JSON) reads. */
export interface LogLeaf {
  v: number;
  seq: number;
  did: string;
  op: LogOperation;
  /** The profile's updated_at (milliseconds since the epoch) as the change left it. */
  time: number;
  /** Lowercase hex SHA-256 of the canonical JSON of the profile without service_record and availability. */
  profile_sha256: string;
}

/** Any leaf of the log: a profile change or an event. */
export type AnyLogLeaf = LogLeaf | LogEventLeaf;

/** `GET /api/agents/{did}/log-proof`. */
export interface LogProof {
  leaf_index: number;
  tree_size: number;
  /** Base64 hashes in RFC 6962 audit path order. */
  inclusion_proof: string[];
  /** Base64 leaf data. */
  entry: string;
  /** The signed note the proof is against. */
  checkpoint: string;
}

/** A checkpoint whose signature verified. */
export interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export const fromBase64 = (text: string): Uint8Array => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/** Base64 a registry served, decoded; not base64 is a LogVerificationError naming `what` (atob throws a DOMException). */
function servedBase64(text: string, what: string): Uint8Array {
  try {
    return fromBase64(text);
  } catch {
    throw new LogVerificationError(`${what} is not base64`);
  }
}

/** A served hash, decoded: 32 bytes of base64 or a LogVerificationError naming `what`. */
function servedHash(text: string, what: string): Uint8Array {
  const hash = servedBase64(text, what);
  if (hash.length !== 32)
    throw new LogVerificationError(`${what} is ${hash.length} bytes, not a 32-byte hash`);
  return hash;
}

const isHash = (bytes: Uint8Array): boolean => bytes.length === 32;
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && a.every((byte, i) => byte === b[i]);

/** RFC 6962: SHA-256(0x00 || data) for a leaf. */
export const hashLeaf = (data: Uint8Array): Uint8Array => sha256(concat(Uint8Array.of(0), data));
/** RFC 6962: SHA-256(0x01 || left || right) for an interior node. */
export const hashChildren = (left: Uint8Array, right: Uint8Array): Uint8Array =>
  sha256(concat(Uint8Array.of(1), left, right));
/** The root of the empty tree: SHA-256 of nothing. */
export const EMPTY_TREE_ROOT: Uint8Array = sha256(new Uint8Array());

/** MTH of RFC 6962 over leaf hashes [start, start + n). */
export function merkleRoot(
  leafHashes: readonly Uint8Array[],
  start = 0,
  n = leafHashes.length - start,
): Uint8Array {
  if (n === 0) return EMPTY_TREE_ROOT;
  if (n === 1) return leafHashes[start] as Uint8Array;
  let k = 1;
  while (k * 2 < n) k *= 2;
  return hashChildren(merkleRoot(leafHashes, start, k), merkleRoot(leafHashes, start + k, n - k));
}

/** A C2SP signed-note verifier key `<name>+<hex key ID>+<base64(0x01 || Ed25519 public key)>`, checked. */
export function parseVerifierKey(verifierKey: string): {
  name: string;
  keyId: string;
  publicKey: Uint8Array;
} {
  // The base64 key material may itself hold "+": only the first two "+" separate.
  const [name = '', keyId = '', ...material] = verifierKey.trim().split('+');
  let keyBytes: Uint8Array;
  try {
    keyBytes = fromBase64(material.join('+'));
  } catch {
    throw new LogVerificationError(`the verifier key ${verifierKey} is not base64 after its name and key ID`);
  }
  if (name === '' || keyBytes[0] !== 0x01 || keyBytes.length !== 33) {
    throw new LogVerificationError(`the verifier key ${verifierKey} is not an Ed25519 note key`);
  }
  const expected = bytesToHex(sha256(concat(encoder.encode(`${name}\n`), keyBytes)).subarray(0, 4));
  if (expected !== keyId) throw new LogVerificationError('the verifier key ID does not match its key');
  return { name, keyId, publicKey: keyBytes.subarray(1) };
}

/** The checkpoint a C2SP signed note carries, once its Ed25519 signature by `verifierKey` verifies. */
export function verifyCheckpoint(note: string, verifierKey: string): Checkpoint {
  const { name, keyId, publicKey } = parseVerifierKey(verifierKey);
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new LogVerificationError('the checkpoint has no signature');
  const text = note.slice(0, split + 1);
  // signed-note: signatures by other keys are ignored; the one by this key (name and key ID) must verify.
  const signed = note
    .slice(split + 2)
    .split('\n')
    .map((line) => /^\u2014 (\S+) (\S+)$/.exec(line))
    .find((match) => match !== null && match[1] === name && safeKeyId(match[2] ?? '') === keyId);
  if (signed === undefined || signed === null) {
    throw new LogVerificationError(`the checkpoint carries no signature by ${name}`);
  }
  // A signature line is base64(key ID || 64-byte Ed25519 signature); @noble throws on another length.
  const signature = servedBase64(signed[2] ?? '', `the checkpoint's signature by ${name}`).subarray(4);
  if (signature.length !== 64) {
    throw new LogVerificationError(
      `the checkpoint's signature by ${name} is ${signature.length} bytes after its key ID, not 64`,
    );
  }
  let valid: boolean;
  try {
    valid = ed25519.verify(signature, encoder.encode(text), publicKey);
  } catch {
    valid = false;
  }
  if (!valid) {
    throw new LogVerificationError(`the checkpoint's signature by ${name} does not verify`);
  }
  const [origin = '', size = '', root = ''] = text.split('\n');
  if (!/^(0|[1-9]\d*)$/.test(size) || !Number.isSafeInteger(Number(size))) {
    throw new LogVerificationError('the checkpoint has no tree size');
  }
  let rootBytes: Uint8Array;
  try {
    rootBytes = fromBase64(root);
  } catch {
    rootBytes = new Uint8Array();
  }
  if (rootBytes.length !== 32) throw new LogVerificationError('the checkpoint has no 32-byte root hash');
  return { origin, size: Number(size), root: rootBytes };
}

function safeKeyId(signature: string): string {
  try {
    return bytesToHex(fromBase64(signature).subarray(0, 4));
  } catch {
    return '';
  }
}

/** RFC 9162 section 2.1.3.2: whether `proof` leads from the leaf hash at `index` to `root` of a tree of `size`. */
export function verifyInclusion(
  index: number,
  size: number,
  leafHash: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (index < 0 || index >= size || !isHash(leafHash) || !isHash(root) || !proof.every(isHash)) return false;
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = hashChildren(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = hashChildren(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && sameBytes(r, root);
}

/** RFC 9162 section 2.1.4.2: whether `proof` shows the tree of `secondSize` extends the tree of `firstSize`. */
export function verifyConsistency(
  firstSize: number,
  secondSize: number,
  proof: readonly Uint8Array[],
  firstRoot: Uint8Array,
  secondRoot: Uint8Array,
): boolean {
  if (firstSize < 0 || firstSize > secondSize) return false;
  if (!isHash(firstRoot) || !isHash(secondRoot) || !proof.every(isHash)) return false;
  if (firstSize === secondSize) return proof.length === 0 && sameBytes(firstRoot, secondRoot);
  if (firstSize === 0) return proof.length === 0;
  const path = (firstSize & (firstSize - 1)) === 0 ? [firstRoot, ...proof] : [...proof];
  const [head, ...rest] = path;
  if (head === undefined) return false;
  let fn = firstSize - 1;
  let sn = secondSize - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = head;
  let sr = head;
  for (const c of rest) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = hashChildren(c, fr);
      sr = hashChildren(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = hashChildren(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && sameBytes(fr, firstRoot) && sameBytes(sr, secondRoot);
}

/**
 * The part of a served profile a leaf vouches for: all of it but the live service_record and availability,
 * the provenance (where the reader found the agent, which the reader's registry states, not the agent)
 * and the moderation of a suspended agent (the operator's statement, logged as an event leaf of its own).
 */
export function loggedProfile(profile: object): Record<string, unknown> {
  const {
    service_record: _measured,
    availability: _observed,
    provenance: _whereFound,
    moderation: _operatorsDecision,
    ...logged
  } = profile as Record<string, unknown>;
  return logged;
}

/** The SHA-256 (lowercase hex) a leaf names for a profile: of the RFC 8785 canonical JSON of loggedProfile(). */
export function profileSha256(profile: object): string {
  return bytesToHex(sha256(encoder.encode(canonicalJson(loggedProfile(profile)))));
}

/** A leaf's data parsed and checked field by field; `index` only names the leaf in the error. */
export function decodeLeaf(entry: Uint8Array, index?: number): AnyLogLeaf {
  const where = index === undefined ? 'a log entry' : `log entry ${index}`;
  let leaf: unknown;
  try {
    leaf = JSON.parse(decoder.decode(entry));
  } catch {
    throw new LogVerificationError(`${where} is not UTF-8 JSON`);
  }
  if (leaf !== null && typeof leaf === 'object' && 'subject' in leaf && !('profile_sha256' in leaf)) {
    return decodeEventLeaf(leaf as Record<string, unknown>, where);
  }
  const l = leaf as Partial<Record<keyof LogLeaf, unknown>> | null;
  if (
    l === null ||
    typeof l !== 'object' ||
    typeof l.v !== 'number' ||
    !Number.isSafeInteger(l.seq) ||
    typeof l.did !== 'string' ||
    !(LOG_OPERATIONS as readonly unknown[]).includes(l.op) ||
    typeof l.time !== 'number' ||
    typeof l.profile_sha256 !== 'string' ||
    !/^[0-9a-f]{64}$/.test(l.profile_sha256)
  ) {
    throw new LogVerificationError(
      `${where} is not a leaf of the registry's format (v, seq, did, op, time, profile_sha256, or an event leaf: v, seq, op, subject, time)`,
    );
  }
  return leaf as LogLeaf;
}

/** True for a leaf that logs a profile change (register, update, deactivate, reputation). */
export function isProfileLeaf(leaf: AnyLogLeaf): leaf is LogLeaf {
  return !('subject' in leaf);
}

/** Throws unless `profile` hashes to what `leaf` (at log position `index`) names. */
export function checkProfileAgainstLeaf(profile: object, leaf: LogLeaf, index: number): void {
  const served = profileSha256(profile);
  if (served !== leaf.profile_sha256) {
    throw new LogVerificationError(
      `the profile served for ${leaf.did} (SHA-256 ${served}) is not the one logged at position ${index}, sequence ${leaf.seq} (${leaf.profile_sha256})`,
    );
  }
}

/**
 * A per-agent proof checked on its own: the checkpoint's signature, its size, the inclusion of the
 * entry at `leaf_index` and, when `did` is given, that the leaf is that agent's.
 */
export function verifyLogProof(
  proof: LogProof,
  verifierKey: string,
  did?: string,
): { checkpoint: Checkpoint; leaf: LogLeaf } {
  const checkpoint = verifyCheckpoint(proof.checkpoint, verifierKey);
  if (checkpoint.size !== proof.tree_size) {
    throw new LogVerificationError(
      `the proof is for tree size ${proof.tree_size} but its checkpoint is for ${checkpoint.size}`,
    );
  }
  const entry = servedBase64(proof.entry, "the proof's entry");
  const path = proof.inclusion_proof.map((hash, i) => servedHash(hash, `inclusion proof hash ${i}`));
  if (!verifyInclusion(proof.leaf_index, proof.tree_size, hashLeaf(entry), path, checkpoint.root)) {
    throw new LogVerificationError(
      `the inclusion proof of leaf ${proof.leaf_index} does not lead to the signed root of tree size ${proof.tree_size}`,
    );
  }
  const leaf = decodeLeaf(entry, proof.leaf_index);
  if (!isProfileLeaf(leaf)) {
    throw new LogVerificationError(
      `leaf ${proof.leaf_index} logs a "${leaf.op}" event about ${leaf.subject}, not a profile: an agent's proof names its latest profile change`,
    );
  }
  if (did !== undefined && leaf.did !== did) {
    throw new LogVerificationError(`the logged leaf is for ${leaf.did}, not ${did}`);
  }
  return { checkpoint, leaf };
}
