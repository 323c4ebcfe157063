import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { canonicalJson } from '@agent-registry/protocol';
import { LogVerificationError } from '../errors.js';
import type { AgentProfile } from '../types.js';
import { enc, type Transport } from './transport.js';

/** `GET /api/agents/{did}/log-proof` (docs/transparency-log.md). */
export interface LogProof {
  leaf_index: number;
  tree_size: number;
  inclusion_proof: string[];
  entry: string;
  checkpoint: string;
}

/** A leaf of the registry's transparency log, as its data reads. */
export interface LogLeaf {
  v: number;
  seq: number;
  did: string;
  op: 'register' | 'update' | 'deactivate' | 'reputation';
  time: number;
  profile_sha256: string;
}

export interface VerifiedAgent {
  did: string;
  /** The leaf's position in the log. */
  leafIndex: number;
  treeSize: number;
  origin: string;
  /** The base64 root hash of the checkpoint the leaf was proven against. */
  rootHash: string;
  leaf: LogLeaf;
  profile: AgentProfile;
  checkpoint: string;
}

const encoder = new TextEncoder();
const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};
const fromBase64 = (text: string): Uint8Array => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
const toBase64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));
const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && a.every((byte, i) => byte === b[i]);

/** RFC 6962: SHA-256(0x00 || data) for a leaf, SHA-256(0x01 || left || right) for a node. */
export const hashLeaf = (data: Uint8Array): Uint8Array => sha256(concat(Uint8Array.of(0), data));
export const hashChildren = (left: Uint8Array, right: Uint8Array): Uint8Array =>
  sha256(concat(Uint8Array.of(1), left, right));

/** The checkpoint a C2SP signed note carries, once its Ed25519 signature by `verifierKey` verifies. */
export function verifyCheckpoint(
  note: string,
  verifierKey: string,
): { origin: string; size: number; root: Uint8Array } {
  const [name = '', keyIdHex = '', ...material] = verifierKey.trim().split('+');
  const keyBytes = fromBase64(material.join('+'));
  if (keyBytes[0] !== 0x01 || keyBytes.length !== 33) {
    throw new LogVerificationError(`the verifier key ${verifierKey} is not an Ed25519 note key`);
  }
  const keyId = bytesToHex(sha256(concat(encoder.encode(`${name}\n`), keyBytes)).subarray(0, 4));
  if (keyId !== keyIdHex) throw new LogVerificationError('the verifier key ID does not match its key');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new LogVerificationError('the checkpoint has no signature');
  const text = note.slice(0, split + 1);
  const signed = note
    .slice(split + 2)
    .split('\n')
    .map((line) => /^\u2014 (\S+) (\S+)$/.exec(line))
    .find(
      (match) =>
        match !== null &&
        match[1] === name &&
        bytesToHex(fromBase64(match[2] ?? '').subarray(0, 4)) === keyId,
    );
  if (signed === undefined || signed === null) {
    throw new LogVerificationError(`the checkpoint carries no signature by ${name}`);
  }
  const signature = fromBase64(signed[2] ?? '').subarray(4);
  if (!ed25519.verify(signature, encoder.encode(text), keyBytes.subarray(1))) {
    throw new LogVerificationError(`the checkpoint's signature by ${name} does not verify`);
  }
  const [origin = '', size = '', root = ''] = text.split('\n');
  if (!/^(0|[1-9]\d*)$/.test(size)) throw new LogVerificationError('the checkpoint has no tree size');
  return { origin, size: Number(size), root: fromBase64(root) };
}

/** RFC 9162 section 2.1.3.2: whether `proof` leads from the leaf to `root`. */
export function verifyInclusion(
  index: number,
  size: number,
  leafHash: Uint8Array,
  proof: Uint8Array[],
  root: Uint8Array,
): boolean {
  if (index >= size) return false;
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

/** The SHA-256 a leaf names for a profile: canonical JSON (RFC 8785) without service_record and availability. */
export function profileSha256(profile: object): string {
  const {
    service_record: _measured,
    availability: _observed,
    ...logged
  } = profile as Record<string, unknown>;
  return bytesToHex(sha256(encoder.encode(canonicalJson(logged))));
}

/**
 * Checks that the profile the registry serves for `did` is the latest one its transparency log holds:
 * the checkpoint's signature, the inclusion proof, and the profile's digest against the leaf.
 */
export async function verifyAgent(
  transport: Transport,
  did: string,
  verifierKey?: string,
): Promise<VerifiedAgent> {
  const [proof, profile, key] = await Promise.all([
    transport.request<LogProof>('GET', `/api/agents/${enc(did)}/log-proof`),
    transport.request<AgentProfile>('GET', `/api/agents/${enc(did)}`),
    verifierKey ?? transport.request<string>('GET', '/log/verifier-key', { text: true }),
  ]);
  const checkpoint = verifyCheckpoint(proof.checkpoint, key);
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
  const leaf = JSON.parse(new TextDecoder().decode(entry)) as LogLeaf;
  if (leaf.did !== did) throw new LogVerificationError(`the logged leaf is for ${leaf.did}, not ${did}`);
  const served = profileSha256(profile);
  if (served !== leaf.profile_sha256) {
    throw new LogVerificationError(
      `the profile served for ${did} (SHA-256 ${served}) is not the one logged at position ${proof.leaf_index} (${leaf.profile_sha256})`,
    );
  }
  return {
    did,
    leafIndex: proof.leaf_index,
    treeSize: proof.tree_size,
    origin: checkpoint.origin,
    rootHash: toBase64(checkpoint.root),
    leaf,
    profile,
    checkpoint: proof.checkpoint,
  };
}

/** What a log follower keeps between catch-ups: the verified tree, as the hashes of its leaves. */
export interface LogFollowState {
  size: number;
  /** Base64 root hash of the last verified checkpoint. */
  root: string;
  leafHashes: Uint8Array[];
}

export interface LogCatchUp {
  state: LogFollowState;
  /** The leaves added since the previous state, in log order. */
  entries: LogLeaf[];
  checkpoint: string;
}

/** MTH of RFC 6962 over leaf hashes. */
function rootOf(leafHashes: Uint8Array[], start = 0, n = leafHashes.length): Uint8Array {
  if (n === 0) return sha256(new Uint8Array());
  if (n === 1) return leafHashes[start] as Uint8Array;
  let k = 1;
  while (k * 2 < n) k *= 2;
  return hashChildren(rootOf(leafHashes, start, k), rootOf(leafHashes, start + k, n - k));
}

function bundlePath(index: number, width: number): string {
  const elements: string[] = [];
  let rest = index;
  do {
    elements.unshift(String(rest % 1000).padStart(3, '0'));
    rest = Math.floor(rest / 1000);
  } while (rest > 0);
  const n = elements.map((element, i) => (i < elements.length - 1 ? `x${element}` : element)).join('/');
  return `/log/tile/entries/${n}${width < 256 ? `.p/${width}` : ''}`;
}

function splitBundle(bundle: Uint8Array): Uint8Array[] {
  const entries: Uint8Array[] = [];
  let at = 0;
  while (at + 2 <= bundle.length) {
    const length = ((bundle[at] ?? 0) << 8) | (bundle[at + 1] ?? 0);
    entries.push(bundle.subarray(at + 2, at + 2 + length));
    at += 2 + length;
  }
  return entries;
}

/**
 * One catch-up of a verifying log follower: verifies the checkpoint's signature, refuses a log that
 * shrank or forked (another root for a size already verified), re-reads the entry bundle it had only
 * partly and checks its earlier entries were not rewritten, and recomputes the root from every leaf
 * before returning the new entries. Throws LogVerificationError naming what was wrong.
 */
export async function followLog(
  transport: Transport,
  getBytes: (path: string) => Promise<Uint8Array>,
  verifierKey: string,
  previous: LogFollowState = { size: 0, root: toBase64(sha256(new Uint8Array())), leafHashes: [] },
): Promise<LogCatchUp> {
  const note = await transport.request<string>('GET', '/log/checkpoint', { text: true });
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
  const leafHashes = previous.leafHashes.slice(0, previous.size);
  const added: Uint8Array[] = [];
  for (let bundle = Math.floor(previous.size / 256); bundle * 256 < checkpoint.size; bundle += 1) {
    const width = Math.min(256, checkpoint.size - bundle * 256);
    const data = splitBundle(await getBytes(bundlePath(bundle, width)));
    if (data.length !== width) {
      throw new LogVerificationError(`entry bundle ${bundle} holds ${data.length} entries, not ${width}`);
    }
    for (const [offset, entry] of data.entries()) {
      const index = bundle * 256 + offset;
      const hash = hashLeaf(entry);
      const known = previous.leafHashes[index];
      if (index < previous.size) {
        if (known === undefined || !sameBytes(known, hash)) {
          throw new LogVerificationError(`entry ${index} was rewritten since it was verified`);
        }
        continue;
      }
      leafHashes.push(hash);
      added.push(entry);
    }
  }
  if (!sameBytes(rootOf(leafHashes.slice(0, previous.size)), fromBase64(previous.root))) {
    throw new LogVerificationError('the verified state does not hash to its own root');
  }
  if (!sameBytes(rootOf(leafHashes), checkpoint.root)) {
    throw new LogVerificationError(
      `the entries do not hash to the checkpoint's root for size ${checkpoint.size}: an entry was changed, dropped or reordered`,
    );
  }
  // Parsed only once the root vouches for them: a changed entry is named as such, not as bad JSON.
  const entries = added.map((entry) => JSON.parse(new TextDecoder().decode(entry)) as LogLeaf);
  return {
    state: { size: checkpoint.size, root: toBase64(checkpoint.root), leafHashes },
    entries,
    checkpoint: note,
  };
}
