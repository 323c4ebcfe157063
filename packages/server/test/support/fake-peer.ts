import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  canonicalJson,
  hashChildren,
  hashLeaf,
  merkleRoot,
  profileSha256,
  TILE_WIDTH,
} from '@agent-registry/protocol';
import { checkpointText, NoteSigner } from '../../src/modules/transparency-log/note.js';

/** A log a fake peer serves: its size, each entry, and the hash of any complete subtree. */
export interface FakeLog {
  size: number;
  entry(index: number): Uint8Array;
  /** The root of the complete subtree of 2 ** height leaves, the `index`th at that height. */
  node(height: number, index: number): Uint8Array;
  root(): Uint8Array;
}

/** A log over the given entries, every level of its tree kept (a few thousand entries at most). */
export function entriesLog(entries: Uint8Array[]): FakeLog {
  const levels: Uint8Array[][] = [entries.map(hashLeaf)];
  for (let below = levels[0] as Uint8Array[]; below.length > 1;) {
    const level: Uint8Array[] = [];
    for (let i = 0; i + 1 < below.length; i += 2)
      level.push(hashChildren(below[i] as Uint8Array, below[i + 1] as Uint8Array));
    levels.push(level);
    below = level;
  }
  return {
    size: entries.length,
    entry: (index) => entries[index] as Uint8Array,
    node: (height, index) => levels[height]?.[index] as Uint8Array,
    root: () => merkleRoot(levels[0] as Uint8Array[]),
  };
}

/**
 * A log of `size` copies of one entry: every subtree of a height has one hash, so a hostile peer can
 * sign and serve a valid tree of tens of millions of entries at no cost.
 */
export function repeatedLog(entry: Uint8Array, size: number): FakeLog {
  const subtree = [hashLeaf(entry)];
  for (let height = 1; height <= 52; height += 1)
    subtree.push(hashChildren(subtree[height - 1] as Uint8Array, subtree[height - 1] as Uint8Array));
  const roots = new Map<number, Uint8Array>();
  const mth = (n: number): Uint8Array => {
    let k = 1;
    while (k * 2 < n) k *= 2;
    if (k * 2 === n || n === 1) return subtree[Math.log2(n)] as Uint8Array;
    const known = roots.get(n);
    if (known !== undefined) return known;
    const root = hashChildren(mth(k), mth(n - k));
    roots.set(n, root);
    return root;
  };
  return { size, entry: () => entry, node: (height) => subtree[height] as Uint8Array, root: () => mth(size) };
}

/** A leaf of the registry's format naming `did` with `profile`. */
export function leafFor(did: string, profile: Record<string, unknown>, padding = 0): Uint8Array {
  return new TextEncoder().encode(
    canonicalJson({
      v: 1,
      seq: 1,
      did,
      op: 'register',
      time: 1,
      profile_sha256: profileSha256(profile),
      ...(padding > 0 ? { pad: 'x'.repeat(padding) } : {}),
    }),
  );
}

export interface FakePeerBehaviour {
  /**
   * Entry bundles answered with this entry in every place: as many valid-looking entries as the width
   * names, which do not lead to the signed root.
   */
  forgedEntry?: Uint8Array;
  /** Milliseconds to wait before answering entry bundle `index` (a slow peer). */
  bundleDelayMs?: (index: number) => number;
}

/**
 * A registry-like peer on 127.0.0.1: a signed checkpoint, tlog-tiles entry bundles and hash tiles of
 * the log `setLog` gives it, and the profiles it names. It records which bundles were asked for.
 */
export class FakePeer {
  readonly bundlesServed: number[] = [];
  readonly profiles = new Map<string, Record<string, unknown>>();
  private log: FakeLog = entriesLog([]);
  private signer: NoteSigner | undefined;
  private readonly server = http.createServer((request, response) => {
    void this.answer(request.url ?? '/', response);
  });

  constructor(private readonly behaviour: FakePeerBehaviour = {}) {}

  /** Listens, and names its log after its host as a registry does (`<host>/log`). */
  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.signer = new NoteSigner(
      `${new URL(this.url).host}/log`,
      crypto.generateKeyPairSync('ed25519').privateKey,
    );
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** A registry did:web under this peer's own host, its agent id derived from `name`. */
  did(name: string): string {
    const agentId = crypto.createHash('sha256').update(name).digest('hex').slice(0, 32);
    return `did:web:127.0.0.1%3A${(this.server.address() as AddressInfo).port}:agent:${agentId}`;
  }

  setLog(log: FakeLog): void {
    this.log = log;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async answer(url: string, response: http.ServerResponse): Promise<void> {
    const path = new URL(url, 'http://x').pathname;
    const send = (status: number, body: Uint8Array | string, type = 'application/octet-stream'): void => {
      if (!response.destroyed) response.writeHead(status, { 'content-type': type }).end(body);
    };
    const signer = this.signer as NoteSigner;
    if (path === '/log/verifier-key') return send(200, signer.verifierKey, 'text/plain');
    if (path === '/log/checkpoint')
      return send(200, signer.sign(checkpointText(signer.name, this.log.size, this.log.root())));
    const profile = /^\/api\/agents\/([^/]+)$/.exec(path);
    if (profile !== null) {
      const found = this.profiles.get(decodeURIComponent(profile[1] as string));
      return found === undefined
        ? send(404, '{}', 'application/json')
        : send(200, JSON.stringify(found), 'application/json');
    }
    const tile = /^\/log\/tile\/(entries|\d+)\/((?:x\d{3}\/)*\d{3})(?:\.p\/(\d+))?$/.exec(path);
    if (tile === null) return send(404, 'not found');
    const index = Number((tile[2] as string).replace(/[x/]/g, ''));
    const width = tile[3] === undefined ? TILE_WIDTH : Number(tile[3]);
    if (tile[1] === 'entries') {
      this.bundlesServed.push(index);
      const delay = this.behaviour.bundleDelayMs?.(index) ?? 0;
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      const parts: Uint8Array[] = [];
      for (let i = index * TILE_WIDTH; i < index * TILE_WIDTH + width && i < this.log.size; i += 1) {
        const entry = this.behaviour.forgedEntry ?? this.log.entry(i);
        parts.push(Uint8Array.of(entry.length >> 8, entry.length & 0xff), entry);
      }
      return send(200, Buffer.concat(parts));
    }
    const height = Number(tile[1]) * 8;
    const hashes: Uint8Array[] = [];
    for (let i = 0; i < width; i += 1) hashes.push(this.log.node(height, index * TILE_WIDTH + i));
    return send(200, Buffer.concat(hashes));
  }
}
