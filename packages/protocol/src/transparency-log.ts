import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { canonicalJson } from './canonical-json.js';

/**
 * Client-side verification of the registry's transparency log: C2SP signed-note checkpoints, RFC 6962
 * (RFC 9162 section 2.1) inclusion and consistency proofs, tlog-tiles entry bundles and the leaf format
 * of docs/transparency-log.md. No I/O: a follower passes in how it reads the log.
 */

/**
 * The transparency log does not back what was served: a bad checkpoint signature, a proof that does not
 * lead to the signed root, a rewound, forked or rewritten log, or a served profile that is not the logged one.
 */
export class LogVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LogVerificationError';
  }
}

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
  const signature = fromBase64(signed[2] ?? '').subarray(4);
  if (!ed25519.verify(signature, encoder.encode(text), publicKey)) {
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
  if (index < 0 || index >= size) return false;
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
 * The part of a served profile a leaf vouches for: all of it but the live service_record and availability
 * and the provenance (where the reader found the agent, which the reader's registry states, not the agent).
 */
export function loggedProfile(profile: object): Record<string, unknown> {
  const {
    service_record: _measured,
    availability: _observed,
    provenance: _whereFound,
    ...logged
  } = profile as Record<string, unknown>;
  return logged;
}

/** The SHA-256 (lowercase hex) a leaf names for a profile: of the RFC 8785 canonical JSON of loggedProfile(). */
export function profileSha256(profile: object): string {
  return bytesToHex(sha256(encoder.encode(canonicalJson(loggedProfile(profile)))));
}

/** A leaf's data parsed and checked field by field; `index` only names the leaf in the error. */
export function decodeLeaf(entry: Uint8Array, index?: number): LogLeaf {
  const where = index === undefined ? 'a log entry' : `log entry ${index}`;
  let leaf: unknown;
  try {
    leaf = JSON.parse(decoder.decode(entry));
  } catch {
    throw new LogVerificationError(`${where} is not UTF-8 JSON`);
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
      `${where} is not a leaf of the registry's format (v, seq, did, op, time, profile_sha256)`,
    );
  }
  return leaf as LogLeaf;
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
  const entry = fromBase64(proof.entry);
  if (
    !verifyInclusion(
      proof.leaf_index,
      proof.tree_size,
      hashLeaf(entry),
      proof.inclusion_proof.map(fromBase64),
      checkpoint.root,
    )
  ) {
    throw new LogVerificationError(
      `the inclusion proof of leaf ${proof.leaf_index} does not lead to the signed root of tree size ${proof.tree_size}`,
    );
  }
  const leaf = decodeLeaf(entry, proof.leaf_index);
  if (did !== undefined && leaf.did !== did) {
    throw new LogVerificationError(`the logged leaf is for ${leaf.did}, not ${did}`);
  }
  return { checkpoint, leaf };
}

/** tlog-tiles: N as 3-digit path elements, all but the last prefixed with x (1234067 is x001/x234/067). */
function tileIndex(index: number): string {
  const elements: string[] = [];
  let rest = index;
  do {
    elements.unshift(String(rest % 1000).padStart(3, '0'));
    rest = Math.floor(rest / 1000);
  } while (rest > 0);
  return elements.map((element, i) => (i < elements.length - 1 ? `x${element}` : element)).join('/');
}

/** Entries per tile (tlog-tiles). */
export const TILE_WIDTH = 256;

/** The path, relative to the log's prefix, of entry bundle `index` holding `width` entries. */
export const entryBundlePath = (index: number, width: number): string =>
  `tile/entries/${tileIndex(index)}${width < TILE_WIDTH ? `.p/${width}` : ''}`;

/** The path, relative to the log's prefix, of hash tile `index` of `level` holding `width` hashes. */
export const hashTilePath = (level: number, index: number, width: number): string =>
  `tile/${level}/${tileIndex(index)}${width < TILE_WIDTH ? `.p/${width}` : ''}`;

/** The entries of a bundle (each a big-endian uint16 length, then that many bytes); a torn bundle is an error. */
export function splitEntryBundle(bundle: Uint8Array): Uint8Array[] {
  const entries: Uint8Array[] = [];
  let at = 0;
  while (at < bundle.length) {
    if (at + 2 > bundle.length) throw new LogVerificationError('an entry bundle ends inside a length prefix');
    const length = ((bundle[at] ?? 0) << 8) | (bundle[at + 1] ?? 0);
    if (at + 2 + length > bundle.length)
      throw new LogVerificationError('an entry bundle ends inside an entry');
    entries.push(bundle.subarray(at + 2, at + 2 + length));
    at += 2 + length;
  }
  return entries;
}

/**
 * What a log follower keeps between catch-ups: the verified tree as its compact range, so that a
 * catch-up costs what is new, not what was verified before.
 */
export interface LogFollowState {
  size: number;
  /** Base64 root hash of the last verified checkpoint. */
  root: string;
  /**
   * The roots of the tree's complete subtrees along its right edge, largest (leftmost) first: one
   * per bit set in `size` (RFC 6962's tree, the "compact range" of transparency-dev).
   */
  range: Uint8Array[];
  /**
   * The leaf hashes of the entry bundle the tree ends inside (`size % TILE_WIDTH` of them), so that
   * re-reading that bundle checks its earlier entries against what was verified.
   */
  partialBundle: Uint8Array[];
}

/** How a log follower reads the log: its signed checkpoint and its entry bundles. */
export interface LogSource {
  checkpoint(): Promise<string>;
  entryBundle(index: number, width: number): Promise<Uint8Array>;
}

export interface LogExtension {
  state: LogFollowState;
  /** The leaves added since the previous state, in log order (the first at index previous.size). */
  entries: LogLeaf[];
  /** Their data as logged (the bytes each leaf hash is over). */
  entryData: Uint8Array[];
  checkpoint: string;
  origin: string;
}

export const EMPTY_FOLLOW_STATE: LogFollowState = Object.freeze({
  size: 0,
  root: toBase64(EMPTY_TREE_ROOT),
  range: [],
  partialBundle: [],
}) as LogFollowState;

/** How many bits are set in a (safe) integer: the number of subtrees in a tree's compact range. */
function bitCount(n: number): number {
  let count = 0;
  for (let rest = n; rest > 0; rest = Math.floor(rest / 2)) count += rest % 2;
  return count;
}

/**
 * Folds the leaf hash at index `size` into the compact range of a tree of `size` leaves, in place:
 * each complete subtree the new leaf completes merges with its left neighbour.
 */
export function appendToRange(range: Uint8Array[], size: number, leafHash: Uint8Array): void {
  let hash = leafHash;
  for (let rest = size; rest % 2 === 1; rest = Math.floor(rest / 2)) {
    hash = hashChildren(range.pop() as Uint8Array, hash);
  }
  range.push(hash);
}

/** The root of the tree a compact range stands for (MTH of RFC 6962): its subtrees folded from the right. */
export function rangeRoot(range: readonly Uint8Array[]): Uint8Array {
  let root = range[range.length - 1];
  if (root === undefined) return EMPTY_TREE_ROOT;
  for (let i = range.length - 2; i >= 0; i -= 1) root = hashChildren(range[i] as Uint8Array, root);
  return root;
}

/** The compact range of the tree over `leafHashes`. */
export function compactRange(leafHashes: readonly Uint8Array[]): Uint8Array[] {
  const range: Uint8Array[] = [];
  leafHashes.forEach((hash, size) => appendToRange(range, size, hash));
  return range;
}

/** The follow state of a verified tree given all its leaf hashes (to rebuild one from a stored copy). */
export function followStateOf(leafHashes: readonly Uint8Array[]): LogFollowState {
  const range = compactRange(leafHashes);
  const partial = leafHashes.length % TILE_WIDTH;
  return {
    size: leafHashes.length,
    root: toBase64(rangeRoot(range)),
    range,
    partialBundle: leafHashes.slice(leafHashes.length - partial),
  };
}

/**
 * Throws unless the state is whole: as many subtrees as bits in its size, folding to its root, and
 * the partial bundle's leaves making up its smallest subtrees. Costs at most one bundle's hashes.
 */
export function checkFollowState(state: LogFollowState): void {
  // A state saved by an earlier release held `leafHashes` instead: named, not a TypeError.
  if (!Array.isArray(state.range) || !Array.isArray(state.partialBundle)) {
    throw new LogVerificationError(
      'the follow state has no range and partialBundle (one saved by an earlier release holds leafHashes: rebuild it with followStateOf(leafHashes))',
    );
  }
  const partial = state.size % TILE_WIDTH;
  if (state.range.length !== bitCount(state.size) || state.partialBundle.length !== partial) {
    throw new LogVerificationError(
      `the verified state holds ${state.range.length} subtree hashes and ${state.partialBundle.length} leaf hashes of its last bundle for ${state.size} entries (expected ${bitCount(state.size)} and ${partial})`,
    );
  }
  const low = compactRange(state.partialBundle);
  const tail = state.range.slice(state.range.length - low.length);
  if (
    !sameBytes(rangeRoot(state.range), fromBase64(state.root)) ||
    !low.every((hash, i) => sameBytes(hash, tail[i] as Uint8Array))
  ) {
    throw new LogVerificationError('the verified state does not hash to its own root');
  }
}

/** A follow state as stored in JSON: hashes in base64. */
export interface StoredFollowState {
  size: number;
  root: string;
  range: string[];
  partial_bundle: string[];
}

export const storedFollowState = (state: LogFollowState): StoredFollowState => ({
  size: state.size,
  root: state.root,
  range: state.range.map(toBase64),
  partial_bundle: state.partialBundle.map(toBase64),
});

/** A stored follow state read back, its shape checked (whether it is whole is checkFollowState's). */
export function followStateFromStored(stored: unknown): LogFollowState {
  const s = stored as Partial<Record<keyof StoredFollowState, unknown>> | null;
  const hashes = (value: unknown): value is string[] =>
    Array.isArray(value) && value.every((item) => typeof item === 'string');
  if (
    s === null ||
    typeof s !== 'object' ||
    !Number.isSafeInteger(s.size) ||
    typeof s.root !== 'string' ||
    !hashes(s.range) ||
    !hashes(s.partial_bundle)
  ) {
    throw new LogVerificationError(
      'the stored follow state is not one of this release (size, root, range, partial_bundle)',
    );
  }
  return {
    size: s.size as number,
    root: s.root,
    range: s.range.map(fromBase64),
    partialBundle: s.partial_bundle.map(fromBase64),
  };
}

/**
 * One catch-up of a verifying follower: verifies the checkpoint's signature, refuses a log that shrank
 * (rewound) or forked (another root for a size already verified), re-reads the entry bundle it had only
 * partly and checks its earlier entries were not rewritten, then folds the new entries into the verified
 * compact range and checks it leads to the checkpoint's root (so the verified tree is a prefix of the new
 * one) before returning them. Throws LogVerificationError naming what was wrong.
 */
export async function extendLog(
  source: LogSource,
  verifierKey: string,
  previous: LogFollowState = EMPTY_FOLLOW_STATE,
): Promise<LogExtension> {
  const note = await source.checkpoint();
  const checkpoint = verifyCheckpoint(note, verifierKey);
  if (checkpoint.size < previous.size) {
    throw new LogVerificationError(
      `the log shrank from ${previous.size} entries (verified) to ${checkpoint.size}: it was rewound (a restore from an older backup) or rewritten; this mirror stops here`,
    );
  }
  if (checkpoint.size === previous.size && toBase64(checkpoint.root) !== previous.root) {
    throw new LogVerificationError(
      `forked checkpoint: two different roots for tree size ${checkpoint.size} (${previous.root} verified before, ${toBase64(checkpoint.root)} now)`,
    );
  }
  checkFollowState(previous);
  const range = [...previous.range];
  let lastBundle: Uint8Array[] = [];
  const added: Uint8Array[] = [];
  for (
    let bundle = Math.floor(previous.size / TILE_WIDTH);
    bundle * TILE_WIDTH < checkpoint.size;
    bundle += 1
  ) {
    const width = Math.min(TILE_WIDTH, checkpoint.size - bundle * TILE_WIDTH);
    const data = splitEntryBundle(await source.entryBundle(bundle, width));
    if (data.length !== width) {
      throw new LogVerificationError(
        `entry bundle ${bundle} holds ${data.length} entries, not ${width}: an entry was dropped or added`,
      );
    }
    lastBundle = data.map(hashLeaf);
    for (const [offset, hash] of lastBundle.entries()) {
      const index = bundle * TILE_WIDTH + offset;
      if (index < previous.size) {
        if (!sameBytes(previous.partialBundle[offset] as Uint8Array, hash)) {
          throw new LogVerificationError(`entry ${index} was rewritten since it was verified`);
        }
        continue;
      }
      appendToRange(range, index, hash);
      added.push(data[offset] as Uint8Array);
    }
  }
  if (!sameBytes(rangeRoot(range), checkpoint.root)) {
    const changed = previous.size > 0 ? await forkedSubtree(source, previous, checkpoint.size) : undefined;
    if (changed !== undefined) {
      const which =
        changed.from === changed.to
          ? `entry ${changed.from}`
          : `an entry among ${changed.from} to ${changed.to}`;
      throw new LogVerificationError(
        `forked log: ${which}, verified before, is another one now, so the tree of size ${previous.size} has two roots; the log was rewritten or rewound (a restore from an older backup) and grew again; this mirror stops here`,
      );
    }
    throw new LogVerificationError(
      `the entries do not hash to the checkpoint's root for size ${checkpoint.size}: an entry was changed, dropped or reordered`,
    );
  }
  // Decoded only once the root vouches for them: a changed entry is named as such, not as bad JSON.
  const entries = added.map((entry, i) => decodeLeaf(entry, previous.size + i));
  const partial = checkpoint.size % TILE_WIDTH;
  return {
    state: {
      size: checkpoint.size,
      root: toBase64(checkpoint.root),
      range,
      partialBundle: partial === 0 ? [] : lastBundle.slice(0, partial),
    },
    entries,
    entryData: added,
    checkpoint: note,
    origin: checkpoint.origin,
  };
}

/**
 * Read only when the new entries do not lead to the signed root, to tell a fork from a bad new entry:
 * the entries below previous.size as the log serves them now, folded again. The first subtree of the
 * verified compact range they no longer hash to (its first and last entry), or undefined if none.
 */
async function forkedSubtree(
  source: LogSource,
  previous: LogFollowState,
  size: number,
): Promise<{ from: number; to: number } | undefined> {
  const range: Uint8Array[] = [];
  for (let bundle = 0; bundle * TILE_WIDTH < previous.size; bundle += 1) {
    const width = Math.min(TILE_WIDTH, size - bundle * TILE_WIDTH);
    const data = splitEntryBundle(await source.entryBundle(bundle, width));
    for (const [offset, entry] of data.entries()) {
      const index = bundle * TILE_WIDTH + offset;
      if (index < previous.size) appendToRange(range, index, hashLeaf(entry));
    }
  }
  // A bundle that came back short leaves the range short: its missing subtrees differ too.
  let from = 0;
  for (const [i, verified] of previous.range.entries()) {
    let width = 1;
    while (width * 2 <= previous.size - from) width *= 2;
    const now = range[i];
    if (now === undefined || !sameBytes(now, verified)) return { from, to: from + width - 1 };
    from += width;
  }
  return undefined;
}
