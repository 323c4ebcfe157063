import type { Db } from '../../db/connect.js';
import { NotFoundError } from '../../kernel/errors.js';
import { readChangeFeedHead } from '../agents/change-feed-store.js';
import { requireDid } from '../identity/did-param.js';
import { leafData, profileSha256, type LeafRecord } from './leaf.js';
import { latestChangeOf, logRecordsFrom, readLogStart, type LogRecordRow } from './log-store.js';
import { MerkleTree, leafHash } from './merkle.js';
import { checkpointText, type NoteSigner } from './note.js';
import type { TransparencyLogReadings } from '../../telemetry/operations-metrics.js';
import { TILE_HEIGHT, TILE_WIDTH, tileWidthAt, type TileAddress } from './tiles.js';

export interface TransparencyLogDeps {
  db: Db;
  publicUrl: string;
  /** Signs checkpoints; its name is the log's origin. */
  signer: NoteSigner;
  didWebDomain: string;
}

export interface LogProof {
  leaf_index: number;
  tree_size: number;
  inclusion_proof: string[];
  entry: string;
  checkpoint: string;
}

/** Records read per query while catching up. */
const SYNC_BATCH = 2000;

/**
 * One catch-up's view of the log: the tree, its size then and the change number of leaf 0. A restore
 * swaps the service's tree for a new one; an answer keeps the view it started with, so its proof,
 * root and tiles all come from one tree.
 */
interface LogView {
  tree: MerkleTree;
  size: number;
  firstSeq: number;
}

/**
 * The registry's transparency log as this node serves it: a Merkle tree over the log records
 * (one leaf per change-feed stamp), caught up from the database before each answer. Every node derives
 * the same leaves from the same records and signs with the same key, and Ed25519 signatures are
 * deterministic, so every node serves byte-identical checkpoints for one tree size.
 */
export class TransparencyLogService {
  private tree = new MerkleTree();
  /** The record of the tree's last leaf as read: the same row read again says no restore replaced it. */
  private lastRow: LogRecordRow | undefined;
  private firstSeq: number | undefined;
  /** Identity of the change-feed head's table when the tree was started (PostgreSQL's tableoid). */
  private generation: string | null = null;
  /** The change-feed head's number at the last catch-up: a restore moves it back. */
  private headSeq: number | undefined;
  private rebuildCount = 0;
  private syncing: Promise<void> | undefined;
  private signed: { tree: MerkleTree; size: number; note: string } | undefined;
  private signingFailureCount = 0;
  /** When a checkpoint over the tree as caught up was last signed (epoch ms), for its age in the metrics. */
  private checkpointedAt: number | undefined;

  constructor(private readonly deps: TransparencyLogDeps) {}

  /** How many times the tree was rebuilt after a detected restore (once per restore, never per request). */
  get rebuilds(): number {
    return this.rebuildCount;
  }

  /**
   * For the metrics: catches up and signs the checkpoint of the whole log (as a reader would), then
   * says how the log stands. Throws when it cannot: the checkpoint's age then grows.
   */
  async readings(now: number): Promise<TransparencyLogReadings> {
    this.checkpointAt(await this.view());
    this.checkpointedAt = now;
    return {
      treeSize: this.tree.size,
      checkpointedAt: this.checkpointedAt,
      rebuilds: this.rebuildCount,
      signingFailures: this.signingFailureCount,
    };
  }

  get origin(): string {
    return this.deps.signer.name;
  }

  get verifierKey(): string {
    return this.deps.signer.verifierKey;
  }

  /**
   * Reads the records committed since the last catch-up (one at a time: a caller joins one already
   * running) and returns the tree as it then stands. A joined catch-up may have read the records before
   * a change the caller has seen committed: callers that need that change ask again (proof()).
   */
  private async view(): Promise<LogView> {
    this.syncing ??= this.catchUp().finally(() => {
      this.syncing = undefined;
    });
    await this.syncing;
    return { tree: this.tree, size: this.tree.size, firstSeq: this.firstSeq ?? 0 };
  }

  private async catchUp(): Promise<void> {
    const { db } = this.deps;
    let firstSeq = this.firstSeq ?? (await readLogStart(db));
    const head = await readChangeFeedHead(db);
    let tree = this.tree;
    let lastRow = this.lastRow;
    // A restore from an older backup: the head moved back since the last catch-up, or (PostgreSQL, once
    // new writes carried it past) is in a table the restore recreated. The log is rebuilt from what the
    // database now holds (mirrors see the rewind as a fork). A head that merely stays behind the log
    // (a hand-edited or partly restored database) is one change, seen once: not a restore per request.
    let restored =
      (tree.size > 0 && this.headSeq !== undefined && head.seq < this.headSeq) ||
      (tree.size > 0 && head.generation !== this.generation);
    let caughtUp = false;
    if (!restored && tree.size > 0) {
      // The first batch starts at the last leaf read: a database put back under a running node without
      // a new table (SQLite) shows as another record there, at no extra query.
      const lastSeq = firstSeq + tree.size - 1;
      const rows = await logRecordsFrom(db, lastSeq, SYNC_BATCH);
      const [last] = rows;
      if (last?.seq === lastSeq && sameRecord(last, lastRow)) {
        lastRow = this.appendRows(tree, rows.slice(1), lastSeq + 1) ?? lastRow;
        caughtUp = rows.length < SYNC_BATCH;
      } else {
        restored = true;
      }
    }
    if (restored) {
      this.rebuildCount += 1;
      firstSeq = await readLogStart(db);
      tree = new MerkleTree();
      lastRow = undefined;
    }
    while (!caughtUp) {
      const next = firstSeq + tree.size;
      const rows = await logRecordsFrom(db, next, SYNC_BATCH);
      lastRow = this.appendRows(tree, rows, next) ?? lastRow;
      caughtUp = rows.length < SYNC_BATCH;
    }
    // A rebuilt tree is swapped in only when whole: a failed rebuild leaves the old tree, and the next
    // catch-up sees the restore again.
    this.tree = tree;
    this.lastRow = lastRow;
    this.firstSeq = firstSeq;
    this.generation = head.generation;
    this.headSeq = head.seq;
  }

  /** Appends the rows' leaves; the last row appended, if any. */
  private appendRows(tree: MerkleTree, rows: LogRecordRow[], next: number): LogRecordRow | undefined {
    for (const [offset, row] of rows.entries()) {
      if (row.seq !== next + offset) {
        throw new Error(
          `transparency log record ${next + offset} is missing (the next is ${row.seq}): a row of log_records was deleted`,
        );
      }
      tree.append(leafHash(leafData(row.seq, row.operation, row.record, this.deps.publicUrl)));
    }
    return rows.at(-1);
  }

  /** The signed checkpoint for the current tree size. */
  async checkpoint(): Promise<string> {
    return this.checkpointAt(await this.view());
  }

  private checkpointAt({ tree, size }: LogView): string {
    if (this.signed?.tree !== tree || this.signed.size !== size) {
      const text = checkpointText(this.origin, size, tree.root(size));
      let note: string;
      try {
        note = this.deps.signer.sign(text);
      } catch (error) {
        this.signingFailureCount += 1;
        throw error;
      }
      this.signed = { tree, size, note };
    }
    return this.signed.note;
  }

  /** A hash tile's bytes, or undefined when the tree (as of now) has no such tile or width. */
  async tile(address: TileAddress & { level: number }): Promise<Buffer | undefined> {
    const { tree, size } = await this.view();
    const available = tileWidthAt(address.level, address.index, size);
    if (address.width > available) return undefined;
    const height = address.level * TILE_HEIGHT;
    const hashes: Buffer[] = [];
    for (let i = 0; i < address.width; i += 1) {
      const hash = tree.completeSubtree(height, address.index * TILE_WIDTH + i);
      if (hash === undefined) return undefined;
      hashes.push(hash);
    }
    return Buffer.concat(hashes);
  }

  /** An entry bundle: each leaf's data with a big-endian uint16 length before it. */
  async entryBundle(address: TileAddress): Promise<Buffer | undefined> {
    const { size, firstSeq } = await this.view();
    const available = tileWidthAt(0, address.index, size);
    if (address.width > available) return undefined;
    const start = address.index * TILE_WIDTH;
    const rows = await logRecordsFrom(this.deps.db, firstSeq + start, address.width);
    const parts: Buffer[] = [];
    for (const row of rows) {
      const data = leafData(row.seq, row.operation, row.record, this.deps.publicUrl);
      const length = Buffer.alloc(2);
      length.writeUInt16BE(data.length);
      parts.push(length, data);
    }
    return Buffer.concat(parts);
  }

  /**
   * Where the agent's latest record sits in the log and whether the profile about to be shown is the
   * one it logged (undefined when the agent is not in the log), for the web page.
   */
  async standing(
    did: string,
    shown: object,
  ): Promise<{ leafIndex: number; treeSize: number; verified: boolean } | undefined> {
    let proof: LogProof;
    try {
      proof = await this.proof(did);
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
    const leaf = JSON.parse(Buffer.from(proof.entry, 'base64').toString('utf8')) as LeafRecord;
    return {
      leafIndex: proof.leaf_index,
      treeSize: proof.tree_size,
      verified: leaf.did === did && leaf.profile_sha256 === profileSha256(shown),
    };
  }

  /** The agent's latest record with its inclusion proof in the current tree. */
  async proof(rawDid: string): Promise<LogProof> {
    const did = requireDid(rawDid, this.deps.didWebDomain).did;
    const seq = await latestChangeOf(this.deps.db, did);
    if (seq === undefined) throw new NotFoundError('AGENT_NOT_FOUND', `no agent has the DID ${did}`);
    let view = await this.view();
    if (seq - view.firstSeq >= view.size) {
      // The catch-up joined may have read the records before this agent's change committed: one that
      // starts now reads it.
      view = await this.view();
    }
    const { tree, size, firstSeq } = view;
    const index = seq - firstSeq;
    if (index < 0 || index >= size) {
      throw new NotFoundError(
        'AGENT_NOT_LOGGED',
        `the agent's latest change (number ${seq}) predates the transparency log, which begins at change ${firstSeq}; it enters the log at its next change`,
      );
    }
    const [row] = await logRecordsFrom(this.deps.db, seq, 1);
    if (row === undefined) throw new Error(`transparency log record ${seq} is missing`);
    return {
      leaf_index: index,
      tree_size: size,
      inclusion_proof: tree.inclusionProof(index, size).map((hash) => hash.toString('base64')),
      entry: leafData(row.seq, row.operation, row.record, this.deps.publicUrl).toString('base64'),
      checkpoint: this.checkpointAt(view),
    };
  }
}

/** Whether a record read again is the one read before at its position (compared as stored, no hashing). */
function sameRecord(row: LogRecordRow, before: LogRecordRow | undefined): boolean {
  return before !== undefined && row.operation === before.operation && row.record === before.record;
}
