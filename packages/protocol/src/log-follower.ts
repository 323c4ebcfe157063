/**
 * A verifying follower of the registry's transparency log (the SDK's followLog, the CLI's mirror, a
 * registry following its peers): the verified tree kept as its compact range, extended one catch-up at a time.
 */
import {
  LogVerificationError,
  fromBase64,
  toBase64,
  sameBytes,
  hashLeaf,
  hashChildren,
  EMPTY_TREE_ROOT,
  verifyCheckpoint,
  splitEntryBundle,
  TILE_WIDTH,
  decodeLeaf,
  type Checkpoint,
  type AnyLogLeaf,
} from './transparency-log.js';

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
  entries: AnyLogLeaf[];
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
    const left = range.pop();
    if (left === undefined) {
      throw new LogVerificationError(
        `a compact range of ${range.length} subtrees cannot hold ${size} entries`,
      );
    }
    hash = hashChildren(left, hash);
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
  checkGrowth(checkpoint, previous);
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
    const folded = foldBundle(bundle, width, await source.entryBundle(bundle, width), previous, range);
    lastBundle = folded.hashes;
    added.push(...folded.added);
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
 * Folds entry bundle `bundle` into `range` (changed in place): its entry count checked against `width`,
 * the entries `verified` already holds compared with their hashes, the new ones appended. Returns the
 * bundle's leaf hashes and its new entries (copied out of `raw`).
 */
export function foldBundle(
  bundle: number,
  width: number,
  raw: Uint8Array,
  verified: Pick<LogFollowState, 'size' | 'partialBundle'>,
  range: Uint8Array[],
): { hashes: Uint8Array[]; added: Uint8Array[] } {
  const data = splitEntryBundle(raw, width);
  if (data.length !== width) {
    throw new LogVerificationError(
      `entry bundle ${bundle} holds ${data.length} entries, not ${width}: an entry was dropped or added`,
    );
  }
  const hashes = data.map(hashLeaf);
  const added: Uint8Array[] = [];
  for (const [offset, hash] of hashes.entries()) {
    const index = bundle * TILE_WIDTH + offset;
    if (index < verified.size) {
      if (!sameBytes(verified.partialBundle[offset] as Uint8Array, hash)) {
        throw new LogVerificationError(`entry ${index} was rewritten since it was verified`);
      }
      continue;
    }
    appendToRange(range, index, hash);
    added.push(data[offset] as Uint8Array);
  }
  return { hashes, added };
}

/**
 * Read only when the new entries do not lead to the signed root, to tell a fork from a bad new entry:
 * the entries below previous.size as the log serves them now, folded again. The first subtree of the
 * verified compact range they no longer hash to (its first and last entry), or undefined if none.
 */
export async function forkedSubtree(
  source: LogSource,
  previous: LogFollowState,
  size: number,
): Promise<{ from: number; to: number } | undefined> {
  const range: Uint8Array[] = [];
  for (let bundle = 0; bundle * TILE_WIDTH < previous.size; bundle += 1) {
    const width = Math.min(TILE_WIDTH, size - bundle * TILE_WIDTH);
    const data = splitEntryBundle(await source.entryBundle(bundle, width));
    // A bundle that came back short ends the fold: the subtree it falls in is the one that changed.
    if (data.length !== width) break;
    for (const [offset, entry] of data.entries()) {
      const index = bundle * TILE_WIDTH + offset;
      if (index < previous.size) appendToRange(range, index, hashLeaf(entry));
    }
  }
  // A range folded short (a short bundle) lacks or differs in the subtrees from there on.
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

/** Refuses a checkpoint for a log that shrank, or another root for the size already verified. */
export function checkGrowth(checkpoint: Checkpoint, previous: LogFollowState): void {
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
}
