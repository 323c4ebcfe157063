import type { Db } from '../../db/connect.js';
import { NotFoundError } from '../../kernel/errors.js';
import { readChangeHead } from '../agents/change-feed-store.js';
import { requireDid } from '../identity/did-param.js';
import { leafData, profileSha256, type LeafRecord } from './leaf.js';
import { latestChangeOf, logRecordsFrom, readLogStart } from './log-store.js';
import { MerkleTree, leafHash } from './merkle.js';
import { checkpointText, type NoteSigner } from './note.js';
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
 * The registry's transparency log as this node serves it: a Merkle tree over the log records
 * (one leaf per change-feed stamp), caught up from the database before each answer. Every node derives
 * the same leaves from the same records and signs with the same key, and Ed25519 signatures are
 * deterministic, so every node serves byte-identical checkpoints for one tree size.
 */
export class TransparencyLogService {
  private tree = new MerkleTree();
  private firstSeq: number | undefined;
  private syncing: Promise<void> | undefined;
  private signed: { size: number; note: string } | undefined;

  constructor(private readonly deps: TransparencyLogDeps) {}

  get origin(): string {
    return this.deps.signer.name;
  }

  get verifierKey(): string {
    return this.deps.signer.verifierKey;
  }

  /** Reads the records committed since the last catch-up; one catch-up at a time. */
  async sync(): Promise<number> {
    this.syncing ??= this.catchUp().finally(() => {
      this.syncing = undefined;
    });
    await this.syncing;
    return this.tree.size;
  }

  private async catchUp(): Promise<void> {
    const { db, publicUrl } = this.deps;
    this.firstSeq ??= await readLogStart(db);
    const head = await readChangeHead(db);
    // A head behind what this node has read: the database was restored from an older backup. The log
    // is rebuilt from what the database now holds (mirrors see the rewind as a fork).
    if (head < this.firstSeq + this.tree.size - 1) {
      this.tree = new MerkleTree();
      this.signed = undefined;
    }
    for (;;) {
      const next = this.firstSeq + this.tree.size;
      const rows = await logRecordsFrom(db, next, SYNC_BATCH);
      for (const [offset, row] of rows.entries()) {
        if (row.seq !== next + offset) {
          throw new Error(
            `transparency log record ${next + offset} is missing (the next is ${row.seq}): a row of log_records was deleted`,
          );
        }
        this.tree.append(leafHash(leafData(row.seq, row.operation, row.record, publicUrl)));
      }
      if (rows.length < SYNC_BATCH) return;
    }
  }

  /** The signed checkpoint for the current tree size. */
  async checkpoint(): Promise<string> {
    const size = await this.sync();
    return this.checkpointAt(size);
  }

  private checkpointAt(size: number): string {
    if (this.signed?.size !== size) {
      const text = checkpointText(this.origin, size, this.tree.root(size));
      this.signed = { size, note: this.deps.signer.sign(text) };
    }
    return this.signed.note;
  }

  /** A hash tile's bytes, or undefined when the tree (as of now) has no such tile or width. */
  async tile(address: TileAddress & { level: number }): Promise<Buffer | undefined> {
    const available = tileWidthAt(address.level, address.index, await this.sync());
    if (address.width > available) return undefined;
    const height = address.level * TILE_HEIGHT;
    const hashes: Buffer[] = [];
    for (let i = 0; i < address.width; i += 1) {
      const hash = this.tree.completeSubtree(height, address.index * TILE_WIDTH + i);
      if (hash === undefined) return undefined;
      hashes.push(hash);
    }
    return Buffer.concat(hashes);
  }

  /** An entry bundle: each leaf's data with a big-endian uint16 length before it. */
  async entryBundle(address: TileAddress): Promise<Buffer | undefined> {
    const available = tileWidthAt(0, address.index, await this.sync());
    if (address.width > available || this.firstSeq === undefined) return undefined;
    const start = address.index * TILE_WIDTH;
    const rows = await logRecordsFrom(this.deps.db, this.firstSeq + start, address.width);
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
    const size = await this.sync();
    const firstSeq = this.firstSeq ?? 0;
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
      inclusion_proof: this.tree.inclusionProof(index, size).map((hash) => hash.toString('base64')),
      entry: leafData(row.seq, row.operation, row.record, this.deps.publicUrl).toString('base64'),
      checkpoint: this.checkpointAt(size),
    };
  }
}
