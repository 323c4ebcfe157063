import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { agentPath, bearer, createTestDatabase, freePort } from '@agent-registry/testkit';
import { startRegistry, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';
import { registerNamed } from '../../support/discovery-helpers.js';
import { queueWorker, startListeningRegistry, type ListeningRegistry } from '../../support/faces-helpers.js';
import { http as request } from '../../support/http.js';
import { checkFollowState, followStateFromStored } from '@agent-registry/protocol';
import type { Provenance } from '../../../src/modules/agents/provenance-schemas.js';
import { readSources } from '../../../src/modules/federation/remote-sources-store.js';
import { mirrorAndRead } from '../../support/remote-entries.js';
import { type SourceStatus, federationSources } from '../../support/federation-status.js';

interface Entry {
  id: string;
  did: string | null;
  name: string;
  description: string | null;
  provenance: Provenance;
}

describe('following a peer registry through its transparency log (FEDERATION_PEERS)', () => {
  let peer: ListeningRegistry;
  let follower: TestRegistry;
  const agents: Registered[] = [];

  const entries = async (): Promise<Entry[]> =>
    (
      await follower.app.inject({ method: 'GET', url: '/api/federation/entries?kind=mirrored&limit=200' })
    ).json<{ entries: Entry[] }>().entries;
  const status = async (): Promise<SourceStatus> => (await federationSources(follower))[0] as SourceStatus;

  before(async () => {
    peer = await startListeningRegistry();
    for (const name of ['Peer Cartographer', 'Peer Surveyor', 'Peer Navigator'])
      agents.push(
        await registerNamed(peer, name, {
          description: `${name} draws maps`,
          capabilities: [{ type: 'mapping' }],
          tags: ['maps'],
        }),
      );
    // The status shows error texts to an operator only.
    follower = await startRegistry(
      {
        FEDERATION_PEERS: peer.url,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        FEDERATION_ADMIN_TOKEN: 'operator-token-0123456789',
      },
      { manualProbes: true },
    );
    await follower.ctx.federation.refresh();
  });
  after(async () => {
    await follower.close();
    await peer.close();
  });

  test("the peer's active agents become mirrored entries, verified against its signed checkpoint", async () => {
    const found = await entries();
    assert.deepEqual(found.map((entry) => entry.name).sort(), [
      'Peer Cartographer',
      'Peer Navigator',
      'Peer Surveyor',
    ]);
    for (const entry of found) {
      assert.equal(entry.provenance.kind, 'mirrored');
      assert.equal(entry.provenance.home_registry, peer.url);
      assert.equal(entry.provenance.state, 'verified');
      assert.ok((entry.provenance.checkpoint?.size ?? 0) >= 3);
      assert.match(entry.provenance.checkpoint?.origin ?? '', /127\.0\.0\.1:\d+\/log$/);
    }
    const search = await follower.app.inject({
      method: 'GET',
      url: '/api/agents/search?scope=federated&capability=mapping',
    });
    assert.equal(search.json().total, 3);
    const current = await status();
    assert.equal(current.state, 'ok');
    // The status names the checkpoint the entries were verified against; the source keeps the
    // verified tree as its compact range, not every leaf hash.
    assert.deepEqual(current.checkpoint, found[0]?.provenance.checkpoint);
    const [source] = await readSources(follower.ctx.database.db);
    const cursor = JSON.parse(source?.cursor ?? '{}') as Record<string, unknown>;
    assert.equal(cursor.leaf_hashes, undefined);
    const state = followStateFromStored(cursor);
    checkFollowState(state);
    assert.equal(state.size, current.checkpoint?.size);
    assert.equal(state.partialBundle.length, state.size % 256);
  });

  test('updates and deactivations at the peer follow; invoking a mirrored agent refers to the peer', async () => {
    const [first, second] = agents;
    const updated = await peer.app.inject({
      method: 'PUT',
      url: agentPath(first!.did),
      headers: bearer(first!.token),
      payload: { description: 'Draws maps of the sea floor' },
    });
    assert.equal(updated.statusCode, 200, updated.body);
    const deactivated = await peer.app.inject({
      method: 'DELETE',
      url: agentPath(second!.did),
      headers: bearer(second!.token),
    });
    assert.equal(deactivated.statusCode, 200, deactivated.body);
    await follower.ctx.federation.refresh();
    const found = await entries();
    assert.equal(found.find((entry) => entry.did === first!.did)?.description, 'Draws maps of the sea floor');
    assert.ok(!found.some((entry) => entry.did === second!.did), 'the deactivated agent left');

    const caller = await registerNamed(follower, 'Local Caller');
    const invoke = await follower.app.inject({
      method: 'POST',
      url: '/api/invoke',
      headers: bearer(caller.token),
      payload: { target_did: first!.did, capability: 'mapping', input: {} },
    });
    assert.equal(invoke.statusCode, 404, invoke.body);
    assert.equal(invoke.json().code, 'AGENT_IS_REMOTE');
    assert.equal(invoke.json().home_registry, peer.url);
    // Its invocation is not enabled at the peer, so the referral names its A2A card there.
    assert.ok(String(invoke.json().invoke_url).startsWith(`${peer.url}/a2a/`), invoke.body);
    // Its profile is read at the peer, which says it is registered there.
    const read = await follower.app.inject({ method: 'GET', url: agentPath(first!.did) });
    assert.equal(read.statusCode, 404, read.body);
    assert.equal(read.json().code, 'AGENT_IS_REMOTE');
    assert.equal(read.json().home_registry, peer.url);
    const atHome = await peer.app.inject({ method: 'GET', url: agentPath(first!.did) });
    assert.deepEqual(atHome.json().provenance, { kind: 'registered', home_registry: peer.url });
  });

  test("a mirrored entry carries its home's reputation, rating and review count, labelled as the home's", async () => {
    const [, , reviewed] = agents;
    const reviewer = await registerNamed(peer, 'Peer Reviewer');
    const review = await peer.app.inject({
      method: 'POST',
      url: '/api/reviews',
      headers: bearer(reviewer.token),
      payload: { target_did: reviewed!.did, rating: 8.5, comment: 'Accurate maps' },
    });
    assert.equal(review.statusCode, 201, review.body);
    const atHome = (await peer.app.inject({ method: 'GET', url: agentPath(reviewed!.did) })).json<{
      reputation_score: number;
      average_rating: number;
      total_reviews: number;
    }>();
    assert.equal(atHome.total_reviews, 1);
    await follower.ctx.federation.refresh();

    const entry = (
      await follower.app.inject({
        method: 'GET',
        url: `/api/federation/entries/${encodeURIComponent(`peer:${peer.url}#${reviewed!.did}`)}`,
      })
    ).json<{ home: Record<string, unknown> }>();
    const { read_at: readAt, ...figures } = entry.home;
    assert.deepEqual(figures, {
      reported_by: peer.url,
      reputation_score: atHome.reputation_score,
      average_rating: atHome.average_rating,
      total_reviews: 1,
    });
    assert.equal(typeof readAt, 'number');
    // The search hit says the same; its own figures stay this registry's (no reviews here).
    const search = await follower.app.inject({
      method: 'GET',
      url: `/api/agents/search?scope=federated&q=${encodeURIComponent('Peer Navigator')}`,
    });
    const hit = search
      .json<{ agents: { did: string; total_reviews: number; home?: Record<string, unknown> }[] }>()
      .agents.find((agent) => agent.did === reviewed!.did);
    assert.deepEqual(hit?.home, entry.home);
    assert.equal(hit?.total_reviews, 0);
    // The registry's own agents carry no home report.
    const local = await follower.app.inject({ method: 'GET', url: '/api/agents/search?q=caller' });
    for (const agent of local.json<{ agents: { home?: unknown }[] }>().agents)
      assert.equal(agent.home, undefined);
  });

  test('availability and service record are read at home: available=true keeps agents online there', async () => {
    const worker = await queueWorker(peer, { name: 'Peer Pilot', capabilities: [{ type: 'mapping' }] });
    const polled = await request(peer, 'GET', '/api/agent/tasks?wait=0', worker.token);
    assert.equal(polled.status, 200);
    await follower.ctx.federation.refresh();
    await follower.ctx.entryProbes.tick();
    await follower.ctx.entryProbes.drain();

    const home = async (did: string) =>
      (
        await follower.app.inject({
          method: 'GET',
          url: `/api/federation/entries/${encodeURIComponent(`peer:${peer.url}#${did}`)}`,
        })
      ).json<{
        home: {
          availability?: { status: string };
          service_record?: { invocations_30d: number };
          checked_at?: number;
        };
      }>().home;
    const pilot = await home(worker.did);
    assert.equal(pilot.availability?.status, 'online');
    assert.equal(pilot.service_record?.invocations_30d, 0);
    assert.equal(typeof pilot.checked_at, 'number');
    const cartographer = await home(agents[0]!.did);
    assert.equal(cartographer.availability?.status, 'unknown');

    const available = await follower.app.inject({
      method: 'GET',
      url: '/api/agents/search?scope=federated&capability=mapping&available=true',
    });
    assert.deepEqual(
      available.json<{ agents: { did: string }[] }>().agents.map((agent) => agent.did),
      [worker.did],
    );
  });

  test('a profile that does not match its leaf stops the follow, alerts, and marks the entries unverified', async () => {
    const liar = await registerNamed(peer, 'Peer Liar', { capabilities: [{ type: 'mapping' }] });
    // Behind the log's back: the served profile is no longer the one logged.
    await peer.ctx.database.db
      .updateTable('agents')
      .set({ description: 'Not what was logged' })
      .where('did', '=', liar.did)
      .execute();
    await follower.ctx.federation.refresh();
    const current = await status();
    assert.equal(current.state, 'stopped');
    assert.match(
      current.last_error ?? '',
      /no longer followed: the profile served for .* is not the one logged/,
    );
    const found = await entries();
    assert.ok(found.length >= 2);
    for (const entry of found) {
      assert.equal(entry.provenance.state, 'unverified', entry.name);
      assert.match(entry.provenance.reason ?? '', /is not the one logged/);
    }
    assert.ok(!found.some((entry) => entry.did === liar.did), 'the mismatching record was never listed');
    const metrics = await follower.app.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /registry_federation_peer_stops_total\{peer="http:\/\/127\.0\.0\.1:\d+"\} 1/);
    // Stopped stays stopped: nothing is silently replaced by a later catch-up.
    await follower.ctx.federation.refresh();
    assert.equal((await status()).state, 'stopped');
  });
});

describe('a peer whose log forks', () => {
  const METRICS = 'metrics-token-0123456789';
  const ADMIN = 'admin-token-0123456789abcdef';
  test('is no longer followed, its entries unverified and kept, until the operator resumes it', async () => {
    // The peer on an SQLite file of its own, so that it can be restored from an older copy (a fork:
    // the same key signs another history), whatever database the follower runs on.
    const database = await createTestDatabase('sqlite');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const open = async (): Promise<TestRegistry> => {
      const registry = await startRegistry({ PUBLIC_URL: url }, { database });
      await registry.app.listen({ port, host: '127.0.0.1' });
      return registry;
    };
    const file = database.file as string;
    const copy = `${file}.backup`;
    let peer = await open();
    const follower = await startRegistry({
      FEDERATION_PEERS: url,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: METRICS,
      FEDERATION_ADMIN_TOKEN: ADMIN,
    });
    try {
      await registerNamed(peer, 'Before Backup One');
      await registerNamed(peer, 'Before Backup Two');
      await peer.close();
      fs.copyFileSync(file, copy);
      peer = await open();
      await registerNamed(peer, 'After Backup One');
      await registerNamed(peer, 'After Backup Two');
      await follower.ctx.federation.refresh();
      const status = async (): Promise<SourceStatus> =>
        (await federationSources(follower, METRICS))[0] as SourceStatus;
      assert.equal((await status()).state, 'ok');
      await peer.close();
      for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
      fs.copyFileSync(copy, file);
      peer = await open();
      for (const name of ['Other History One', 'Other History Two', 'Other History Three'])
        await registerNamed(peer, name);
      await follower.ctx.federation.refresh();
      const stopped = await status();
      assert.equal(stopped.state, 'stopped');
      assert.match(
        stopped.last_error ?? '',
        /no longer followed: (forked log|entry 2 was rewritten since it was verified)/,
      );
      const entries = (
        await follower.app.inject({ method: 'GET', url: '/api/federation/entries?kind=mirrored' })
      ).json<{ entries: Entry[] }>().entries;
      assert.deepEqual(entries.map((entry) => entry.name).sort(), [
        'After Backup One',
        'After Backup Two',
        'Before Backup One',
        'Before Backup Two',
      ]);
      for (const entry of entries) assert.equal(entry.provenance.state, 'unverified');

      // Resuming is the operator's deliberate act: never with METRICS_TOKEN, which only reads.
      const resume = (token: string | undefined, body: unknown = { peer: url, by: 'ops@example' }) =>
        follower.app.inject({
          method: 'POST',
          url: '/api/federation/peers/resume',
          headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
          payload: body as Record<string, unknown>,
        });
      for (const token of [undefined, METRICS, `${ADMIN}x`]) {
        const refused = await resume(token);
        assert.equal(refused.statusCode, 401, refused.body);
        assert.equal(refused.json().code, 'INVALID_ADMIN_TOKEN');
      }
      assert.equal((await status()).state, 'stopped', 'nothing was resumed by a refused call');
      const unknown = await resume(ADMIN, { peer: 'https://not-a-peer.example', by: 'ops@example' });
      assert.equal(unknown.statusCode, 404);
      assert.equal(unknown.json().code, 'PEER_NOT_FOUND');
      assert.equal((await resume(ADMIN, { peer: url })).statusCode, 400, 'who resumes it is required');

      const resumed = await resume(ADMIN);
      assert.equal(resumed.statusCode, 200, resumed.body);
      const after = await status();
      assert.equal(after.state, 'ok');
      assert.equal(after.resumed?.by, 'ops@example');
      assert.equal(typeof after.resumed?.at, 'number');
      assert.match(after.resumed?.reason ?? '', /no longer followed/);
      // The peer's current history, verified from the start; the entries of the other history are gone.
      const current = (
        await follower.app.inject({ method: 'GET', url: '/api/federation/entries?kind=mirrored' })
      ).json<{ entries: Entry[] }>().entries;
      assert.deepEqual(current.map((entry) => entry.name).sort(), [
        'Before Backup One',
        'Before Backup Two',
        'Other History One',
        'Other History Three',
        'Other History Two',
      ]);
      for (const entry of current) assert.equal(entry.provenance.state, 'verified');
      // Followed again as usual, and a second resume of a followed peer is refused.
      await registerNamed(peer, 'After Resume');
      await follower.ctx.federation.refresh();
      assert.equal((await status()).entries, 6);
      assert.equal((await status()).resumed?.by, 'ops@example', 'who resumed it stays on the status');
      const again = await resume(ADMIN);
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().code, 'PEER_NOT_STOPPED');
    } finally {
      await follower.close();
      await peer.close();
      await database.drop();
    }
  });
});

describe('a peer that is briefly unavailable', () => {
  test('answering 503 for a profile is an error retried next round, not a stop', async () => {
    // The proxy is the peer's public URL: its log and DIDs name the proxy's host, as a peer behind a
    // load balancer does.
    const upstreamOf: { url?: string } = {};
    let outage = false;
    // In front of the peer: while `outage`, its profiles answer 503 as an overloaded proxy would.
    const proxy = http.createServer((request, response) => {
      if (outage && /^\/api\/agents\/[^/]+$/.test((request.url ?? '').split('?')[0] ?? '')) {
        response.writeHead(503, { 'retry-after': '1' }).end('{"error":"overloaded"}');
        return;
      }
      const target = upstreamOf.url as string;
      const upstream = http.request(
        new URL(request.url ?? '/', target),
        { method: request.method, headers: { ...request.headers, host: new URL(target).host } },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      request.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const peer = await startListeningRegistry({ PUBLIC_URL: proxyUrl });
    upstreamOf.url = peer.url;
    const follower = await startRegistry({
      FEDERATION_PEERS: proxyUrl,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: 'operator-token-0123456789',
    });
    const source = async (): Promise<SourceStatus> => (await federationSources(follower))[0] as SourceStatus;
    const mirrored = async (): Promise<Entry[]> =>
      (await follower.app.inject({ method: 'GET', url: '/api/federation/entries?kind=mirrored' })).json<{
        entries: Entry[];
      }>().entries;
    try {
      await registerNamed(peer, 'Peer Archivist', { capabilities: [{ type: 'archiving' }] });
      await follower.ctx.federation.refresh();
      assert.deepEqual(
        (await mirrored()).map((entry) => [entry.name, entry.provenance.state]),
        [['Peer Archivist', 'verified']],
      );

      outage = true;
      await registerNamed(peer, 'Peer Binder', { capabilities: [{ type: 'archiving' }] });
      await follower.ctx.federation.refresh();
      const during = await source();
      assert.equal(during.state, 'error');
      assert.match(during.last_error ?? '', /profile of did:.* answered 503; the entries are kept/);
      assert.deepEqual(
        (await mirrored()).map((entry) => [entry.name, entry.provenance.state]),
        [['Peer Archivist', 'verified']],
      );

      outage = false;
      await follower.ctx.federation.refresh();
      assert.equal((await source()).state, 'ok');
      assert.deepEqual((await mirrored()).map((entry) => [entry.name, entry.provenance.state]).sort(), [
        ['Peer Archivist', 'verified'],
        ['Peer Binder', 'verified'],
      ]);
    } finally {
      await follower.close();
      await new Promise((resolve) => proxy.close(resolve));
      await peer.close();
    }
  });
});

describe("a peer's profile is cleaned like an imported card before it is mirrored", () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry({});
  });
  after(async () => {
    await registry.close();
  });

  test('non-http(s) endpoints are dropped and the listed fields are cut to the profile limits', async () => {
    // What a hostile peer could log and serve: its log proves it published this, not that it is safe.
    const peerUrl = 'https://hostile-peer.example';
    const did = 'did:web:hostile-peer.example:agent:0123456789abcdef0123456789abcdef';
    const hostile: Record<string, unknown> = {
      did,
      name: `  ${'N'.repeat(500)}  `,
      description: 'D'.repeat(5000),
      tags: Array.from({ length: 30 }, (_, index) => `${index}-${'t'.repeat(80)}`),
      capabilities: Array.from({ length: 60 }, (_, index) => ({
        type: `${index}-${'c'.repeat(200)}`,
        description: 'x'.repeat(3000),
        tags: ['ok', 7, 'y'.repeat(80)],
        input_schema: { type: 'object' },
      })),
      endpoints: [
        { type: 'a2a_agent_card', url: 'javascript:alert(document.cookie)' },
        { type: 'mcp', url: 'data:text/html,<script>alert(1)</script>' },
        { type: 'invoke', url: 'https://hostile-peer.example/api/invoke' },
        { type: 'did_document', url: `https://hostile-peer.example/${'p'.repeat(3000)}` },
        { type: 'invoke', url: 'https://elsewhere.example/api/invoke' },
        ...Array.from({ length: 20 }, (_, index) => ({ type: 'extra', url: `https://e.example/${index}` })),
      ],
    };
    const entry = await mirrorAndRead(registry, peerUrl, did, hostile, 'hostile-peer.example/log');
    assert.ok(
      entry.endpoints.every((endpoint) => /^https?:\/\//.test(endpoint.url)),
      JSON.stringify(entry.endpoints.slice(0, 3)),
    );
    // Only the peer's own origin is referred to: the other hosts' URLs are dropped, as is the overlong one.
    assert.deepEqual(entry.endpoints, [{ type: 'invoke', url: 'https://hostile-peer.example/api/invoke' }]);
    assert.equal(entry.name, 'N'.repeat(100));
    assert.equal(entry.description.length, 1000);
    assert.equal(entry.tags.length, 20);
    assert.ok(entry.tags.every((tag) => tag.length <= 50));
    assert.equal(entry.capabilities.length, 50);
    const [first] = entry.capabilities;
    assert.equal(first?.type.length, 100);
    assert.equal(first?.description?.length, 1000);
    assert.deepEqual(first?.tags, ['ok', 'y'.repeat(50)]);
    assert.equal(first?.input_schema, undefined);
  });
});
