import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { hashLeaf, merkleRoot, profileSha256, toBase64 } from '@agent-registry/protocol';
import { agentPath, bearer } from '@agent-registry/testkit';
import { startRegistry, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';
import { registerNamed } from '../../support/discovery-helpers.js';
import { startListeningRegistry, type ListeningRegistry } from '../../support/faces-helpers.js';
import { putRemoteEntry } from '../../../src/modules/federation/remote-entries-store.js';
import { ensureSource } from '../../../src/modules/federation/remote-sources-store.js';
import { mirroredEntry } from '../../../src/modules/federation/peer-entries.js';
import { OPERATOR_TOKEN, type SourceStatus, federationSources } from '../../support/federation-status.js';

/**
 * A peer that is nothing but a transparency log signed with its own key, served on 127.0.0.1: it logs
 * whatever DIDs it is told to, serves the profiles that hash to its leaves, and names its log
 * `origin` (by default `<its host>/log`, as a registry of this kind does).
 */
class HostilePeer {
  private readonly leaves: Uint8Array[] = [];
  private readonly profiles = new Map<string, Record<string, unknown>>();
  private readonly key = generateKeyPairSync('ed25519');
  /** The checkpoint's origin line; undefined: `<host>/log`. */
  origin: string | undefined;
  private server = http.createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    if (path === '/log/checkpoint') return void response.end(this.note());
    if (path === '/log/verifier-key') return void response.end(this.verifierKey());
    if (path.startsWith('/log/tile/entries/')) {
      const width = Number(/\.p\/(\d+)$/.exec(path)?.[1] ?? 256);
      const bundle = this.leaves
        .slice(0, width)
        .flatMap((entry) => [entry.length >> 8, entry.length & 0xff, ...entry]);
      return void response.end(Buffer.from(bundle));
    }
    const profile = this.profiles.get(decodeURIComponent(path.replace(/^\/api\/agents\//, '')));
    if (profile !== undefined) return void response.end(JSON.stringify(profile));
    response.writeHead(404).end('{"error":"Not found"}');
  });

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  /** A DID of the peer's own host, as did:web encodes it. */
  ownDid(hex: string): string {
    return `did:web:127.0.0.1%3A${(this.server.address() as AddressInfo).port}:agent:${hex.padEnd(32, '0')}`;
  }
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Logs `did` as registered with `profile` and serves that profile. */
  log(did: string, profile: Record<string, unknown>): void {
    const served = { did, ...profile };
    this.profiles.set(did, served);
    const leaf = {
      v: 1,
      seq: this.leaves.length + 1,
      did,
      op: 'register',
      time: Date.now(),
      profile_sha256: profileSha256(served),
    };
    this.leaves.push(Buffer.from(JSON.stringify(leaf)));
  }

  private get name(): string {
    return `${new URL(this.url).host}/log`;
  }
  private keyId(): Buffer {
    return createHash('sha256')
      .update(Buffer.concat([Buffer.from(`${this.name}\n`), this.publicKey()]))
      .digest()
      .subarray(0, 4);
  }
  private publicKey(): Buffer {
    const x = this.key.publicKey.export({ format: 'jwk' }).x as string;
    return Buffer.concat([Buffer.of(1), Buffer.from(x, 'base64url')]);
  }
  verifierKey(): string {
    return `${this.name}+${this.keyId().toString('hex')}+${this.publicKey().toString('base64')}`;
  }
  private note(): string {
    const root = toBase64(merkleRoot(this.leaves.map(hashLeaf)));
    const text = `${this.origin ?? this.name}\n${this.leaves.length}\n${root}\n`;
    const signature = sign(null, Buffer.from(text), this.key.privateKey);
    return `${text}\n\u2014 ${this.name} ${Buffer.concat([this.keyId(), signature]).toString('base64')}\n`;
  }
}

interface Entry {
  id: string;
  did: string | null;
  name: string;
  home_registry: string;
  endpoints: { type: string; url: string }[];
  provenance: { state?: string };
}

const PROFILE = (name: string): Record<string, unknown> => ({
  name,
  status: 'active',
  description: `${name} keeps the books`,
  capabilities: [{ type: 'bookkeeping' }],
  tags: ['books'],
});

describe('a peer speaks only for DIDs of its own host, and its log must be its own', () => {
  const hostile = new HostilePeer();
  let honest: ListeningRegistry;
  let follower: TestRegistry;
  let local: Registered;
  let honestAgent: Registered;

  const entries = async (): Promise<Entry[]> =>
    (
      await follower.app.inject({ method: 'GET', url: '/api/federation/entries?kind=mirrored&limit=200' })
    ).json<{ entries: Entry[] }>().entries;
  const status = async (url: string): Promise<SourceStatus> =>
    (await federationSources(follower)).find((source) => source.id === `peer:${url}`) as SourceStatus;
  const search = async (query: string): Promise<{ did: string; name: string }[]> =>
    (await follower.app.inject({ method: 'GET', url: `/api/agents/search?scope=federated&${query}` })).json<{
      agents: { did: string; name: string }[];
    }>().agents;

  before(async () => {
    await hostile.start();
    honest = await startListeningRegistry();
    honestAgent = await registerNamed(honest, 'Honest Bookkeeper', PROFILE('Honest Bookkeeper'));
    follower = await startRegistry({
      FEDERATION_PEERS: `${hostile.url},${honest.url}`,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: OPERATOR_TOKEN,
    });
    local = await registerNamed(follower, 'Local Bookkeeper', PROFILE('Local Bookkeeper'));
    // What the hostile peer logs: this registry's own agent, a third registry's agent, the honest
    // peer's agent, and one agent of its own whose endpoints point elsewhere first.
    hostile.log(local.did, PROFILE('Local Bookkeeper'));
    hostile.log('did:web:third.example:agent:0123456789abcdef0123456789abcdef', {
      ...PROFILE('Third Bookkeeper'),
      endpoints: [{ type: 'invoke', url: 'https://attacker.example/api/invoke' }],
    });
    hostile.log(honestAgent.did, PROFILE('Honest Bookkeeper'));
    hostile.log(hostile.ownDid('ab'), {
      ...PROFILE('Hostile Bookkeeper'),
      endpoints: [
        { type: 'invoke', url: 'https://attacker.example/api/invoke' },
        { type: 'invoke', url: `${hostile.url}/api/invoke` },
      ],
    });
    await follower.ctx.federation.refresh();
  });
  after(async () => {
    await follower.close();
    await honest.close();
    await hostile.close();
  });

  test("this registry's own agent is never mirrored: a federated search shows it once, as registered here", async () => {
    assert.ok(!(await entries()).some((entry) => entry.did === local.did));
    const found = await search('q=Local%20Bookkeeper');
    assert.deepEqual(
      found.map((agent) => agent.did),
      [local.did],
    );
    const current = await status(hostile.url);
    assert.equal(current.state, 'ok');
    assert.match(current.last_error ?? '', /log entries refused/);
    assert.match(current.last_error ?? '', new RegExp(`${local.did} is an agent of this registry`));
  });

  test("a third registry's DID is refused: no referral of the peer's choosing for it", async () => {
    const third = 'did:web:third.example:agent:0123456789abcdef0123456789abcdef';
    assert.ok(!(await entries()).some((entry) => entry.did === third));
    const caller = await registerNamed(follower, 'Caller');
    const invoke = await follower.app.inject({
      method: 'POST',
      url: '/api/invoke',
      headers: bearer(caller.token),
      payload: { target_did: third, capability: 'bookkeeping', input: {} },
    });
    assert.equal(invoke.statusCode, 404, invoke.body);
    assert.notEqual(invoke.json().code, 'AGENT_IS_REMOTE', invoke.body);
    assert.match(
      (await status(hostile.url)).last_error ?? '',
      /third\.example.* is not a did:web of 127\.0\.0\.1%3A\d+/,
    );
  });

  test('a DID claimed by two peers is listed once, from the peer whose host it names', async () => {
    const claims = (await entries()).filter((entry) => entry.did === honestAgent.did);
    assert.deepEqual(
      claims.map((entry) => [entry.home_registry, entry.provenance.state]),
      [[honest.url, 'verified']],
    );
    assert.equal((await search('q=Honest%20Bookkeeper')).length, 1);
  });

  test("the peer's own agent is mirrored, and referred only to the peer's own origin", async () => {
    const own = (await entries()).find((entry) => entry.did === hostile.ownDid('ab'));
    assert.deepEqual(own?.endpoints, [{ type: 'invoke', url: `${hostile.url}/api/invoke` }]);
    const read = await follower.app.inject({ method: 'GET', url: agentPath(hostile.ownDid('ab')) });
    assert.equal(read.statusCode, 404, read.body);
    assert.equal(read.json().code, 'AGENT_IS_REMOTE');
    assert.equal(read.json().invoke_url, `${hostile.url}/api/invoke`);
  });
});

describe("a peer's checkpoint must name the peer's own log", () => {
  test('a checkpoint whose origin line names another log stops the follow before anything is mirrored', async () => {
    const peer = new HostilePeer();
    await peer.start();
    peer.origin = 'registry.example/log';
    peer.log(peer.ownDid('cd'), PROFILE('Misnamed Bookkeeper'));
    const follower = await startRegistry({
      FEDERATION_PEERS: peer.url,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: OPERATOR_TOKEN,
    });
    try {
      await follower.ctx.federation.refresh();
      const [source] = await federationSources(follower);
      assert.equal(source?.state, 'stopped');
      assert.match(
        source?.last_error ?? '',
        /checkpoint names the origin "registry\.example\/log", but the log of http:\/\/127\.0\.0\.1:\d+ is 127\.0\.0\.1:\d+\/log/,
      );
      assert.equal(source?.entries, 0);
    } finally {
      await follower.close();
      await peer.close();
    }
  });

  test('a peer holds at most FEDERATION_MAX_ENTRIES_PER_PEER entries; the rest are named on its status', async () => {
    const peer = new HostilePeer();
    await peer.start();
    for (const hex of ['01', '02', '03', '04']) peer.log(peer.ownDid(hex), PROFILE(`Flood ${hex}`));
    const follower = await startRegistry({
      FEDERATION_PEERS: peer.url,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: OPERATOR_TOKEN,
      FEDERATION_MAX_ENTRIES_PER_PEER: '2',
    });
    try {
      await follower.ctx.federation.refresh();
      const [source] = await federationSources(follower);
      assert.equal(source?.state, 'ok');
      assert.equal(source?.entries, 2);
      assert.match(source?.last_error ?? '', /2 log entries refused.*FEDERATION_MAX_ENTRIES_PER_PEER \(2\)/);
    } finally {
      await follower.close();
      await peer.close();
    }
  });
});

describe('the store lists one claim of a DID, and none of a DID registered here', () => {
  let registry: TestRegistry;
  let local: Registered;
  const did = 'did:web:peer.example:agent:0123456789abcdef0123456789abcdef';
  const checkpoint = { origin: 'peer.example/log', size: 1, root_hash: 'AA' };
  const listed = async (): Promise<Entry[]> =>
    (await registry.app.inject({ method: 'GET', url: '/api/federation/entries?limit=200' })).json<{
      entries: Entry[];
    }>().entries;

  before(async () => {
    registry = await startRegistry({});
    local = await registerNamed(registry, 'Resident Bookkeeper', PROFILE('Resident Bookkeeper'));
  });
  after(() => registry.close());

  test('of one host over http and https, the https claim is listed; the other comes back when it goes', async () => {
    const db = registry.ctx.database.db;
    for (const peer of ['http://peer.example', 'https://peer.example']) {
      await ensureSource(db, { id: `peer:${peer}`, kind: 'peer', url: peer });
      await putRemoteEntry(db, mirroredEntry(peer, did, PROFILE('Twice Claimed'), checkpoint, 1000), 1000);
    }
    assert.deepEqual(
      (await listed()).filter((entry) => entry.did === did).map((entry) => entry.home_registry),
      ['https://peer.example'],
    );
    const found = await registry.app.inject({
      method: 'GET',
      url: '/api/agents/search?scope=federated&q=Twice%20Claimed',
    });
    assert.equal(found.json().total, 1);
    const { removeRemoteEntries } = await import('../../../src/modules/federation/remote-entries-store.js');
    await removeRemoteEntries(db, [`peer:https://peer.example#${did}`], 2000);
    assert.deepEqual(
      (await listed()).filter((entry) => entry.did === did).map((entry) => entry.home_registry),
      ['http://peer.example'],
    );
  });

  test('an entry naming a DID registered here is kept shadowed: never listed, searched or referred to', async () => {
    const db = registry.ctx.database.db;
    const peer = 'https://copier.example';
    await ensureSource(db, { id: `peer:${peer}`, kind: 'peer', url: peer });
    const written = await putRemoteEntry(
      db,
      mirroredEntry(peer, local.did, PROFILE('Resident Bookkeeper'), checkpoint, 1000),
      1000,
    );
    assert.equal(written, 'shadowed');
    assert.ok(!(await listed()).some((entry) => entry.did === local.did));
    const found = await registry.app.inject({
      method: 'GET',
      url: '/api/agents/search?scope=federated&q=Resident%20Bookkeeper',
    });
    assert.deepEqual(
      found.json<{ agents: { did: string }[] }>().agents.map((agent) => agent.did),
      [local.did],
    );
    // Deactivated here, the DID is still this registry's: no referral elsewhere.
    await registry.app.inject({ method: 'DELETE', url: agentPath(local.did), headers: bearer(local.token) });
    const read = await registry.app.inject({ method: 'GET', url: agentPath(local.did) });
    assert.notEqual(read.json().code, 'AGENT_IS_REMOTE', read.body);
  });
});
