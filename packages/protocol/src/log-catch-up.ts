/**
 * A follower's catch-up one proved entry bundle at a time (a registry following its peers): each bundle
 * is proved part of the signed tree through the log's hash tiles and handed over before the next is read.
 */
import {
  LogVerificationError,
  toBase64,
  sameBytes,
  hashChildren,
  verifyCheckpoint,
  TILE_WIDTH,
  decodeLeaf,
  merkleRoot,
  verifyConsistency,
  type Checkpoint,
} from './transparency-log.js';
import {
  type LogFollowState,
  type LogSource,
  type LogExtension,
  rangeRoot,
  checkFollowState,
  checkGrowth,
  foldBundle,
  forkedSubtree,
} from './log-follower.js';

/** A log source that also serves its hash tiles (tlog-tiles), so that each bundle is proved as it comes. */
export interface TiledLogSource extends LogSource {
  /** Hash tile `index` of `level` holding `width` hashes (32 bytes each). */
  hashTile(level: number, index: number, width: number): Promise<Uint8Array>;
}

/** One proved bundle of a stepwise catch-up, with the signed checkpoint it was proved against. */
export interface LogStep extends LogExtension {
  signed: Checkpoint;
}

/** What one stepwise catch-up may do before it stops, its progress kept, for the next to resume. */
export interface CatchUpBounds {
  /** New entries verified, counted in whole bundles (the step that reaches it is the last). */
  maxEntries: number;
  /** Entry bundle bytes read. */
  maxBytes: number;
  /** Ends the catch-up after the step in progress (a fetch under way may throw its own error). */
  signal?: AbortSignal;
}

/** How a stepwise catch-up ended: caught up with the checkpoint, or stopped by one of its bounds. */
export interface CatchUpResult {
  state: LogFollowState;
  /** The signed checkpoint's size: the catch-up is complete when state.size reaches it. */
  checkpointSize: number;
  origin: string;
  stoppedBy?: 'entries' | 'bytes' | 'signal';
}

/** Tile levels are 8 tree levels apart (tlog-tiles). */
const TILE_HEIGHT = 8;
/** Hash tiles kept while proving consecutive bundles: the right edge and the tiles the proofs walk. */
const TILE_CACHE_SIZE = 32;

/** The largest power of two below n (n > 1): RFC 6962's split point. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * The hashes of the tree of `size` leaves that a peer's hash tiles give: any complete subtree, read
 * from the tile at the level below it at the width the tree size gives (tlog-tiles), a few tiles
 * cached. Nothing read here is trusted: a consistency proof built from it is checked against roots.
 */
class TileHashes {
  private readonly tiles = new Map<string, Uint8Array>();

  constructor(
    private readonly source: TiledLogSource,
    private readonly size: number,
  ) {}

  /** The hash of the complete subtree of `2 ** height` leaves, the `index`th at that height. */
  async node(height: number, index: number): Promise<Uint8Array> {
    const level = Math.floor(height / TILE_HEIGHT);
    const span = 2 ** (height - level * TILE_HEIGHT);
    const first = index * span;
    const tileIndex = Math.floor(first / TILE_WIDTH);
    const width = Math.min(TILE_WIDTH, Math.floor(this.size / TILE_WIDTH ** level) - tileIndex * TILE_WIDTH);
    const offset = first - tileIndex * TILE_WIDTH;
    if (offset + span > width) {
      throw new LogVerificationError(
        `no complete subtree of height ${height} at ${index} in a tree of ${this.size} entries`,
      );
    }
    const tile = await this.tile(level, tileIndex, width);
    const hashes: Uint8Array[] = [];
    for (let i = offset; i < offset + span; i += 1) hashes.push(tile.subarray(i * 32, i * 32 + 32));
    return merkleRoot(hashes);
  }

  /** MTH of RFC 6962 over leaves [start, start + n), from complete subtrees. */
  async range(start: number, n: number): Promise<Uint8Array> {
    let height = 0;
    while (2 ** height < n) height += 1;
    if (2 ** height === n && start % n === 0) return this.node(height, start / n);
    const k = splitPoint(n);
    return hashChildren(await this.range(start, k), await this.range(start + k, n - k));
  }

  /** RFC 9162 section 2.1.4.1: the consistency proof from the tree of `first` leaves to this one. */
  async consistency(first: number): Promise<Uint8Array[]> {
    const subproof = async (m: number, start: number, n: number, whole: boolean): Promise<Uint8Array[]> => {
      if (m === n) return whole ? [] : [await this.range(start, n)];
      const k = splitPoint(n);
      return m <= k
        ? [...(await subproof(m, start, k, whole)), await this.range(start + k, n - k)]
        : [...(await subproof(m - k, start + k, n - k, false)), await this.range(start, k)];
    };
    return subproof(first, 0, this.size, true);
  }

  private async tile(level: number, index: number, width: number): Promise<Uint8Array> {
    const key = `${level}/${index}/${width}`;
    const cached = this.tiles.get(key);
    if (cached !== undefined) return cached;
    const tile = await this.source.hashTile(level, index, width);
    if (tile.length !== width * 32) {
      throw new LogVerificationError(
        `hash tile ${level}/${index} of width ${width} is ${tile.length} bytes, not ${width * 32}`,
      );
    }
    // A copy: a cached tile never pins the buffer it was read into.
    this.tiles.set(key, tile.slice());
    if (this.tiles.size > TILE_CACHE_SIZE) this.tiles.delete(this.tiles.keys().next().value as string);
    return this.tiles.get(key) as Uint8Array;
  }
}

/**
 * A catch-up that proves and hands over one entry bundle at a time, so that a follower holds one bundle
 * and a few hash tiles, whatever size the checkpoint claims, and keeps its progress as it goes.
 *
 * The checkpoint is checked as extendLog checks it (signature, shrunk, forked). Then each bundle's
 * entries, counted against the width the tree size gives, are folded into the verified compact range;
 * the tree they end is proved a prefix of the signed one by a consistency proof (RFC 9162) built from
 * the log's hash tiles, or, for the last bundle, by the signed root itself. Only then is `onStep` called
 * with the bundle's entries and the follow state after it, which the caller stores before the next bundle
 * is read. Bounds and the signal stop it between bundles; the result says where and why. Throws
 * LogVerificationError naming what was wrong.
 */
export async function extendLogInSteps(
  source: TiledLogSource,
  verifierKey: string,
  previous: LogFollowState,
  bounds: CatchUpBounds,
  onStep: (step: LogStep) => Promise<void>,
): Promise<CatchUpResult> {
  const note = await source.checkpoint();
  const checkpoint = verifyCheckpoint(note, verifierKey);
  checkGrowth(checkpoint, previous);
  checkFollowState(previous);
  const tiles = new TileHashes(source, checkpoint.size);
  let state = previous;
  let added = 0;
  let bytes = 0;
  const result = (stoppedBy?: CatchUpResult['stoppedBy']): CatchUpResult => ({
    state,
    checkpointSize: checkpoint.size,
    origin: checkpoint.origin,
    ...(stoppedBy === undefined ? {} : { stoppedBy }),
  });
  while (state.size < checkpoint.size) {
    if (bounds.signal?.aborted === true) return result('signal');
    if (added >= bounds.maxEntries) return result('entries');
    if (bytes >= bounds.maxBytes) return result('bytes');
    const bundle = Math.floor(state.size / TILE_WIDTH);
    const width = Math.min(TILE_WIDTH, checkpoint.size - bundle * TILE_WIDTH);
    const raw = await source.entryBundle(bundle, width);
    bytes += raw.length;
    const range = [...state.range];
    const { hashes, added: entryData } = foldBundle(bundle, width, raw, state, range);
    const size = bundle * TILE_WIDTH + width;
    const root = rangeRoot(range);
    const proved =
      size === checkpoint.size
        ? sameBytes(root, checkpoint.root)
        : verifyConsistency(size, checkpoint.size, await tiles.consistency(size), root, checkpoint.root);
    if (!proved) {
      const changed =
        state === previous && previous.size > 0
          ? await forkedSubtree(source, previous, checkpoint.size)
          : undefined;
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
        `entry bundle ${bundle} is not part of the checkpoint's tree of size ${checkpoint.size} (its entries and the hash tiles served do not lead to the signed root): an entry was changed, dropped or reordered`,
      );
    }
    const first = state.size;
    const partial = size % TILE_WIDTH;
    const next: LogFollowState = {
      size,
      root: toBase64(root),
      range,
      partialBundle: partial === 0 ? [] : hashes.slice(0, partial),
    };
    // Decoded only once the tree vouches for them: a changed entry is named as such, not as bad JSON.
    await onStep({
      state: next,
      entries: entryData.map((entry, i) => decodeLeaf(entry, first + i)),
      entryData,
      checkpoint: note,
      origin: checkpoint.origin,
      signed: checkpoint,
    });
    state = next;
    added += entryData.length;
  }
  return result();
}
