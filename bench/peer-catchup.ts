/**
 * A registry process following a hostile peer whose signed checkpoint claims 25.6 million entries, with
 * an A2A card source beside it: samples the follower's RSS (VmRSS of its process) for a while and
 * reports its growth over the RSS at start, how far the catch-up got, and whether the card kept being
 * refreshed. Two modes: `valid` (one leaf of about 3.7 KB repeated, a valid tree the follower proves
 * bundle by bundle, each bundle about 1 MB) and `forged` (bundles of as many such leaves as their
 * width, none of them the logged one).
 *
 *   node --import tsx bench/peer-catchup.ts [valid|forged] [seconds]
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  canonicalJson,
  hashChildren,
  hashLeaf,
  profileSha256,
  TILE_WIDTH,
  toBase64,
} from '@agent-registry/protocol';
import { createTestDatabase, serveAgentCard, startRegistryProcess } from '@agent-registry/testkit';

const mode = process.argv[2] === 'forged' ? 'forged' : 'valid';
const seconds = Number(process.argv[3] ?? 120);
const CLAIMED = 25_600_000;

function leaf(did: string, profile: Record<string, unknown>): Uint8Array {
  return new TextEncoder().encode(
    canonicalJson({
      v: 1,
      seq: 1,
      did,
      op: 'register',
      time: 1,
      profile_sha256: profileSha256(profile),
      pad: 'x'.repeat(3500),
    }),
  );
}

async function hostilePeer(): Promise<{ url: string; bundles: () => number; close(): Promise<void> }> {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
  let served = 0;
  let entry: Uint8Array = new Uint8Array();
  let forged: Uint8Array = new Uint8Array();
  let name = '';
  let did = '';
  let profile: Record<string, unknown> = {};
  const subtree: Uint8Array[] = [];
  const roots = new Map<number, Uint8Array>();
  const mth = (n: number): Uint8Array => {
    let k = 1;
    while (k * 2 < n) k *= 2;
    if (n === 1 || k * 2 === n) return subtree[Math.log2(n)] as Uint8Array;
    const known = roots.get(n);
    if (known !== undefined) return known;
    const root = hashChildren(mth(k), mth(n - k));
    roots.set(n, root);
    return root;
  };
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x ?? '', 'base64url');
  const keyId = (): Buffer =>
    crypto
      .createHash('sha256')
      .update(`${name}\n`)
      .update(Buffer.from([1]))
      .update(raw)
      .digest()
      .subarray(0, 4);
  const server = http.createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    const send = (body: Uint8Array | string): void => {
      response.writeHead(200).end(body);
    };
    if (path === '/log/verifier-key')
      return send(
        `${name}+${keyId().toString('hex')}+${Buffer.concat([Buffer.from([1]), raw]).toString('base64')}`,
      );
    if (path === '/log/checkpoint') {
      const text = `${name}\n${CLAIMED}\n${toBase64(mth(CLAIMED))}\n`;
      const signature = crypto.sign(null, Buffer.from(text), privateKey);
      return send(`${text}\n\u2014 ${name} ${Buffer.concat([keyId(), signature]).toString('base64')}\n`);
    }
    if (path === `/api/agents/${encodeURIComponent(did)}`) return send(JSON.stringify(profile));
    const tile = /^\/log\/tile\/(entries|\d+)\/[x\d/]+(?:\.p\/(\d+))?$/.exec(path);
    if (tile === null) return response.writeHead(404).end();
    const width = tile[2] === undefined ? TILE_WIDTH : Number(tile[2]);
    if (tile[1] === 'entries') {
      served += 1;
      const one = mode === 'forged' ? forged : entry;
      const parts: Uint8Array[] = [];
      for (let i = 0; i < width; i += 1) parts.push(Uint8Array.of(one.length >> 8, one.length & 0xff), one);
      return send(Buffer.concat(parts));
    }
    const hash = subtree[Number(tile[1]) * 8] as Uint8Array;
    return send(Buffer.concat(Array.from({ length: width }, () => hash)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  name = `127.0.0.1:${port}/log`;
  did = `did:web:127.0.0.1%3A${port}:agent:${'c0'.repeat(16)}`;
  profile = { did, name: 'Copycat', description: 'One agent logged 25.6 million times', status: 'active' };
  entry = leaf(did, profile);
  forged = leaf(did, { ...profile, name: 'Forged' });
  subtree.push(hashLeaf(entry));
  for (let height = 1; height <= 52; height += 1)
    subtree.push(hashChildren(subtree[height - 1] as Uint8Array, subtree[height - 1] as Uint8Array));
  return {
    url: `http://127.0.0.1:${port}`,
    bundles: () => served,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const rssMb = (pid: number): number => {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
};

interface Source {
  id: string;
  kind: string;
  state: string;
  last_error: string | null;
  last_success_at: number | null;
  checkpoint?: { size: number };
}

const peer = await hostilePeer();
const card = await serveAgentCard({ name: 'Card Agent', description: 'Refreshed meanwhile', skill: 'cards' });
const database = await createTestDatabase('sqlite');
const registry = await startRegistryProcess({
  DATABASE_URL: database.url,
  FEDERATION_PEERS: peer.url,
  FEDERATION_A2A_CARDS: card.cardUrl,
  FEDERATION_REFRESH_SECONDS: '10',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
});
const pid = registry.child.pid as number;
const start = rssMb(pid);
let peak = start;
const cardSuccesses = new Set<number>();
let last: Source[] = [];
for (let second = 0; second < seconds; second += 1) {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  peak = Math.max(peak, rssMb(pid));
  last = ((await (await fetch(`${registry.url}/api/federation/status`)).json()) as { sources: Source[] })
    .sources;
  const imported = last.find((source) => source.kind === 'a2a')?.last_success_at;
  if (imported != null) cardSuccesses.add(imported);
}
const followed = last.find((source) => source.kind === 'peer');
console.log(
  JSON.stringify(
    {
      mode,
      seconds,
      rss_at_start_mb: Math.round(start),
      rss_peak_mb: Math.round(peak),
      rss_growth_mb: Math.round(peak - start),
      bundles_served: peer.bundles(),
      peer_state: followed?.state,
      peer_verified_entries: followed?.checkpoint?.size ?? 0,
      peer_status: followed?.last_error,
      card_refreshes_seen: cardSuccesses.size,
    },
    null,
    2,
  ),
);
await registry.stop();
await Promise.all([peer.close(), card.close(), database.drop()]);
