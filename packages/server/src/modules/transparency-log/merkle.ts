import { createHash } from 'node:crypto';

/** RFC 6962 section 2.1: a leaf is SHA-256(0x00 || data), an interior node SHA-256(0x01 || left || right). */
export function leafHash(data: Uint8Array): Buffer {
  return createHash('sha256').update(LEAF_PREFIX).update(data).digest();
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest();
}

const LEAF_PREFIX = Buffer.from([0]);
const NODE_PREFIX = Buffer.from([1]);
const EMPTY_TREE = createHash('sha256').digest();

/** The largest power of two smaller than n (n > 1), the split point of RFC 6962's recursion. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * One level's hashes, packed 32 bytes apiece in one buffer that doubles as it fills (one object per
 * hash weighed about five times as much; a small tree takes a few KiB per level).
 */
class HashRow {
  private bytes = new Uint8Array(64 * 32);
  length = 0;

  push(hash: Uint8Array): void {
    if ((this.length + 1) * 32 > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bytes.set(hash, this.length * 32);
    this.length += 1;
  }

  /** A copy of hash `index`, or undefined past the end. */
  at(index: number): Buffer | undefined {
    if (index < 0 || index >= this.length) return undefined;
    return Buffer.from(this.bytes.subarray(index * 32, index * 32 + 32));
  }
}

/**
 * An append-only RFC 6962 Merkle tree kept as the hashes of its complete subtrees: level h holds the
 * hash of leaves [i * 2^h, (i + 1) * 2^h) at index i. Every root, proof and tile of any size up to the
 * tree's is computed from them, so a node keeps one tree and answers for every past size.
 */
export class MerkleTree {
  private readonly levels: HashRow[] = [new HashRow()];

  get size(): number {
    return this.levels[0]?.length ?? 0;
  }

  append(hash: Buffer): void {
    let level = 0;
    let current = hash;
    for (;;) {
      const row = (this.levels[level] ??= new HashRow());
      row.push(current);
      if (row.length % 2 === 1) return;
      current = nodeHash(row.at(row.length - 2) as Buffer, current);
      level += 1;
    }
  }

  /** The hash of the complete subtree of 2^height leaves at the given index, if the tree has it. */
  completeSubtree(height: number, index: number): Buffer | undefined {
    return this.levels[height]?.at(index);
  }

  /** MTH(D[start : start + n]) of RFC 6962; start + n must not pass the tree's size. */
  hash(start: number, n: number): Buffer {
    if (n === 0) return EMPTY_TREE;
    if ((n & (n - 1)) === 0 && start % n === 0) {
      const complete = this.levels[Math.log2(n)]?.at(start / n);
      if (complete !== undefined) return complete;
    }
    const k = splitPoint(n);
    return nodeHash(this.hash(start, k), this.hash(start + k, n - k));
  }

  root(size: number): Buffer {
    return this.hash(0, size);
  }

  /** PATH(m, D[0 : size]) of RFC 6962 section 2.1.1: the audit path, from the leaf's sibling upward. */
  inclusionProof(index: number, size: number): Buffer[] {
    const path: Buffer[] = [];
    const walk = (m: number, start: number, n: number): void => {
      if (n <= 1) return;
      const k = splitPoint(n);
      if (m < k) {
        walk(m, start, k);
        path.push(this.hash(start + k, n - k));
      } else {
        walk(m - k, start + k, n - k);
        path.push(this.hash(start, k));
      }
    };
    walk(index, 0, size);
    return path;
  }

  /** PROOF(m, D[0 : n]) of RFC 6962 section 2.1.2, for 0 < m < n. */
  consistencyProof(m: number, n: number): Buffer[] {
    const proof: Buffer[] = [];
    const subproof = (m: number, start: number, n: number, complete: boolean): void => {
      if (m === n) {
        if (!complete) proof.push(this.hash(start, m));
        return;
      }
      const k = splitPoint(n);
      if (m <= k) {
        subproof(m, start, k, complete);
        proof.push(this.hash(start + k, n - k));
      } else {
        subproof(m - k, start + k, n - k, false);
        proof.push(this.hash(start, k));
      }
    };
    if (m > 0 && m < n) subproof(m, 0, n, true);
    return proof;
  }
}
