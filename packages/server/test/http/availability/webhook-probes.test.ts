import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { HostResolver } from '../../../src/kernel/network-policy.js';
import { MAX_BACKOFF_INTERVALS } from '../../../src/modules/availability/webhook-probes.js';
import type { Availability } from '../../../src/modules/availability/schemas.js';
import { agentPath, bearer } from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';

// Real HTTP servers on 127.0.0.1 stand in for agents' webhooks; only these are ever contacted.

interface Received {
  headers: http.IncomingHttpHeaders;
  raw: string;
}

type Behaviour = (received: Received, res: http.ServerResponse) => void;

interface Hook {
  url: string;
  port: number;
  received: Received[];
  /** What the server does with the next requests (changeable: an agent that goes down and comes back). */
  behave(behaviour: Behaviour): void;
  close(): Promise<void>;
}

async function startHook(behaviour: Behaviour): Promise<Hook> {
  const received: Received[] = [];
  let current = behaviour;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') };
      received.push(request);
      current(request, res);
    });
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    behave: (next) => (current = next),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const stringHeaders = (headers: http.IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );

/** An agent's webhook as the SDK's helper behaves: verify, answer a ping 200, run tasks. */
const verifyingAgent =
  (secret: string, onTask: () => void = () => undefined): Behaviour =>
  (request, res) => {
    let body: { type?: string };
    try {
      body = new Webhook(secret).verify(request.raw, stringHeaders(request.headers)) as { type?: string };
    } catch {
      res.writeHead(401).end();
      return;
    }
    if (body.type === 'registry.ping') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      return;
    }
    onTask();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"output":{"done":true}}');
  };

const answer500: Behaviour = (_, res) => res.writeHead(500).end('down');
/** Answers every request 200 without checking the signature's timestamp (for tests that move the clock). */
const answer200: Behaviour = (_, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}');

const whsecSecret = (): string => `whsec_${crypto.randomBytes(32).toString('base64')}`;

const INTERVAL_MS = 300_000;

async function webhookAgent(
  registry: TestRegistry,
  url: string,
  secret: string,
  extra: Record<string, unknown> = {},
): Promise<Registered> {
  const agent = await register(registry);
  const response = await registry.app.inject({
    method: 'PUT',
    url: agentPath(agent.did, '/invocation'),
    headers: bearer(agent.token),
    payload: { enabled: true, delivery_mode: 'webhook', webhook_url: url, webhook_secret: secret, ...extra },
  });
  assert.equal(response.statusCode, 200, response.body);
  return agent;
}

async function availabilityOf(registry: TestRegistry, did: string): Promise<Availability> {
  const response = await registry.app.inject({ method: 'GET', url: agentPath(did) });
  assert.equal(response.statusCode, 200, response.body);
  const profile = response.json() as {
    availability: Availability;
    service_record: { uptime_24h: number | null; uptime_7d: number | null };
  };
  // The service record carries the same uptime (per agent).
  assert.equal(profile.service_record.uptime_24h, profile.availability.uptime_24h);
  assert.equal(profile.service_record.uptime_7d, profile.availability.uptime_7d);
  return profile.availability;
}

/** One probe round on `registry`: claim what is due, wait for every probe, write the outcomes. */
async function probeRound(registry: TestRegistry): Promise<void> {
  await registry.ctx.probes.tick();
  await registry.ctx.probes.drain();
}

async function scheduleOf(registry: TestRegistry, did: string) {
  const row = await registry.ctx.database.db
    .selectFrom('webhook_probes')
    .selectAll()
    .where('did', '=', did)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : { due_at: Number(row.due_at), failures: Number(row.failures), last_failed_at: row.last_failed_at };
}

async function makeDue(registry: TestRegistry, did: string): Promise<void> {
  await registry.ctx.database.db
    .updateTable('webhook_probes')
    .set({ due_at: registry.clock.now() })
    .where('did', '=', did)
    .execute();
}

describe('probes of webhook agents, over real HTTP', () => {
  let registry: TestRegistry;
  const hooks: Hook[] = [];
  const hook = async (behaviour: Behaviour) => {
    const started = await startHook(behaviour);
    hooks.push(started);
    return started;
  };
  before(async () => {
    registry = await startRegistry(
      {
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        PROBE_INTERVAL_SECONDS: String(INTERVAL_MS / 1000),
        PROBE_TIMEOUT_SECONDS: '1',
      },
      { manualProbes: true },
    );
  });
  after(async () => {
    await registry.close();
    for (const started of hooks) await started.close();
  });

  test('a webhook agent never probed is unknown; its invocation settings say it is probed', async () => {
    const secret = whsecSecret();
    const server = await hook(verifyingAgent(secret));
    const agent = await webhookAgent(registry, server.url, secret);
    assert.equal((await availabilityOf(registry, agent.did)).status, 'unknown');
    const settings = await registry.app.inject({ method: 'GET', url: agentPath(agent.did, '/invocation') });
    assert.deepEqual(settings.json(), { enabled: true, delivery_mode: 'webhook', probes: true });
  });

  test('the probe is a Standard Webhooks delivery of type registry.ping, signed with the webhook secret; an answer makes the agent online', async () => {
    const secret = whsecSecret();
    let tasksRun = 0;
    const server = await hook(verifyingAgent(secret, () => tasksRun++));
    const agent = await webhookAgent(registry, server.url, secret);
    const before = registry.clock.now();
    await probeRound(registry);

    assert.equal(server.received.length, 1, 'one probe');
    const [probe] = server.received;
    const id = String(probe!.headers['webhook-id']);
    assert.match(id, /^ping_[0-9a-f-]{36}$/);
    assert.equal(probe!.headers['content-type'], 'application/json');
    const body = new Webhook(secret).verify(probe!.raw, stringHeaders(probe!.headers)) as Record<
      string,
      unknown
    >;
    assert.deepEqual(Object.keys(body).sort(), ['data', 'timestamp', 'type']);
    assert.equal(body.type, 'registry.ping');
    assert.equal(Date.parse(String(body.timestamp)), before, 'sent at the time of the probe');
    assert.deepEqual(body.data, { target_did: agent.did });
    assert.throws(() => new Webhook(whsecSecret()).verify(probe!.raw, stringHeaders(probe!.headers)));
    assert.equal(tasksRun, 0, 'no task handler ran');

    const availability = await availabilityOf(registry, agent.did);
    assert.equal(availability.status, 'online');
    assert.equal(availability.last_seen_at, registry.clock.now());
    assert.equal(availability.checked_at, registry.clock.now());
    assert.equal(availability.uptime_24h, 1);

    // Not due again until about one interval later (within the jitter).
    const schedule = await scheduleOf(registry, agent.did);
    assert.ok(schedule !== undefined);
    assert.equal(schedule.failures, 0);
    assert.ok(schedule.due_at >= before + 0.9 * INTERVAL_MS && schedule.due_at <= before + 1.1 * INTERVAL_MS);
    await probeRound(registry);
    assert.equal(server.received.length, 1, 'not probed again before it is due');
  });

  test('an agent answering 500 is offline; failures back off exponentially up to the cap, with jitter; an answer resets it', async () => {
    const secret = whsecSecret();
    const server = await hook(answer500);
    const agent = await webhookAgent(registry, server.url, secret);
    for (let failures = 1; failures <= 6; failures++) {
      const probedFrom = registry.clock.now();
      await probeRound(registry);
      assert.equal(server.received.length, failures, `probe ${failures} sent`);
      const schedule = await scheduleOf(registry, agent.did);
      assert.equal(schedule?.failures, failures);
      const intervals = Math.min(2 ** (failures - 1), MAX_BACKOFF_INTERVALS);
      const delay = schedule!.due_at - probedFrom;
      assert.ok(
        delay >= 0.9 * intervals * INTERVAL_MS && delay <= 1.1 * intervals * INTERVAL_MS,
        `after ${failures} failures the next probe is ${intervals} intervals later (got ${delay} ms)`,
      );
      const availability = await availabilityOf(registry, agent.did);
      assert.equal(availability.status, 'offline');
      assert.equal(availability.last_seen_at, null, 'never seen answering');
      assert.equal(availability.checked_at, registry.clock.now());
      // The next probe made due now rather than by moving the clock: receivers check the signature's
      // timestamp against their own clock.
      await makeDue(registry, agent.did);
    }
    server.behave(verifyingAgent(secret));
    await probeRound(registry);
    assert.equal((await availabilityOf(registry, agent.did)).status, 'online');
    assert.equal((await scheduleOf(registry, agent.did))?.failures, 0);
  });

  test('hostile targets (hang, slow, redirect, huge body, refused) fail the probe, bounded, and the registry keeps serving', async () => {
    const secret = whsecSecret();
    const hang = await hook(() => undefined);
    const slow = await hook((request, res) => setTimeout(() => verifyingAgent(secret)(request, res), 3_000));
    const redirect = await hook((_, res) => res.writeHead(302, { location: 'http://127.0.0.1:1/' }).end());
    const huge = await hook((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(Buffer.alloc(4 * 1024 * 1024, 0x20));
    });
    const refused = await startHook(answer500);
    await refused.close();
    const agents = await Promise.all(
      [hang.url, slow.url, redirect.url, huge.url, refused.url].map((url) =>
        webhookAgent(registry, url, secret),
      ),
    );
    const round = probeRound(registry);
    // While probes hang, the registry answers.
    const health = await registry.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(health.statusCode, 200);
    await round;
    for (const agent of agents) {
      assert.equal((await availabilityOf(registry, agent.did)).status, 'offline', agent.did);
      assert.equal((await scheduleOf(registry, agent.did))?.failures, 1);
    }
    assert.equal(registry.ctx.probes.inFlight(), 0, 'no probe left in flight');
  });

  test('an agent that opts out is never probed and stays unknown, even after it answered calls', async () => {
    const secret = whsecSecret();
    const server = await hook(verifyingAgent(secret));
    const agent = await webhookAgent(registry, server.url, secret, { probes: false });
    const settings = await registry.app.inject({ method: 'GET', url: agentPath(agent.did, '/invocation') });
    assert.deepEqual(settings.json(), { enabled: true, delivery_mode: 'webhook', probes: false });
    await probeRound(registry);
    assert.equal(server.received.length, 0, 'no probe sent');
    const caller = await register(registry);
    const call = await registry.app.inject({
      method: 'POST',
      url: '/api/invoke',
      headers: bearer(caller.token),
      payload: { target_did: agent.did, capability: 'translation', input: {}, timeout_ms: 10_000 },
    });
    assert.equal(call.statusCode, 200, call.body);
    await registry.ctx.probes.flush();
    const availability = await availabilityOf(registry, agent.did);
    assert.equal(availability.status, 'unknown', 'never online when opted out');
    assert.equal(availability.last_seen_at, registry.clock.now(), 'the call was seen all the same');
    // Omitting `probes` keeps the choice; true opts back in.
    const kept = await registry.app.inject({
      method: 'PUT',
      url: agentPath(agent.did, '/invocation'),
      headers: bearer(agent.token),
      payload: { enabled: true, delivery_mode: 'webhook' },
    });
    assert.equal(kept.json().probes, false, kept.body);
    const bad = await registry.app.inject({
      method: 'PUT',
      url: agentPath(agent.did, '/invocation'),
      headers: bearer(agent.token),
      payload: { enabled: true, delivery_mode: 'webhook', probes: 'no' },
    });
    assert.equal(bad.statusCode, 400, bad.body);
    assert.match(bad.body, /probes/);
  });

  test('a successful call counts as a sighting; a failed call makes the probe due, and the probe decides', async () => {
    const secret = whsecSecret();
    const server = await hook(verifyingAgent(secret));
    const agent = await webhookAgent(registry, server.url, secret);
    const caller = await register(registry);
    const call = () =>
      registry.app.inject({
        method: 'POST',
        url: '/api/invoke',
        headers: bearer(caller.token),
        payload: { target_did: agent.did, capability: 'translation', input: {}, timeout_ms: 10_000 },
      });
    const ok = await call();
    assert.equal(ok.statusCode, 200, ok.body);
    await registry.ctx.probes.flush();
    let availability = await availabilityOf(registry, agent.did);
    assert.equal(availability.status, 'online', 'online from the call alone');
    assert.equal(availability.last_seen_at, registry.clock.now());

    await probeRound(registry); // first probe, answered
    const onlineSince = (await availabilityOf(registry, agent.did)).online_since;
    assert.equal(typeof onlineSince, 'number');
    registry.clock.advance(120_000);
    // Two minutes later (longer than a queue agent's online window, within a webhook agent's): still
    // one run online.
    assert.equal((await call()).statusCode, 200);
    await registry.ctx.probes.flush();
    assert.equal((await availabilityOf(registry, agent.did)).online_since, onlineSince);
    const probes = server.received.length;
    server.behave(answer500);
    const failed = await call();
    assert.equal(failed.statusCode, 502, failed.body);
    await registry.ctx.probes.flush();
    assert.equal(
      (await availabilityOf(registry, agent.did)).status,
      'online',
      "a failed call alone does not make it offline (a caller's bad input must not)",
    );
    assert.equal((await scheduleOf(registry, agent.did))?.due_at, registry.clock.now(), 'probe due now');
    await probeRound(registry);
    assert.equal(server.received.length, probes + 2, 'the failed call and one probe');
    availability = await availabilityOf(registry, agent.did);
    assert.equal(availability.status, 'offline');
  });

  test('search available=true and /metrics count probed webhook agents; the probe counter has no per-agent series', async () => {
    const secret = whsecSecret();
    const server = await hook(verifyingAgent(secret));
    const agent = await webhookAgent(registry, server.url, secret);
    await probeRound(registry);
    const search = await registry.app.inject({ method: 'GET', url: '/api/agents/search?available=true' });
    const found = (search.json() as { agents: { did: string }[] }).agents.map((entry) => entry.did);
    assert.ok(found.includes(agent.did), search.body);
    const metrics = (await registry.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /registry_agents_by_availability\{status="online"\} [1-9]/);
    const probeSeries = metrics
      .split('\n')
      .filter((line) => line.startsWith('registry_webhook_probes_total{'));
    assert.deepEqual(probeSeries.map((line) => line.replace(/ \d+$/, '')).sort(), [
      'registry_webhook_probes_total{outcome="answered"}',
      'registry_webhook_probes_total{outcome="failed"}',
    ]);
    assert.ok(!metrics.includes(agent.did));
  });

  // Last: these move the clock past receivers' timestamp tolerance (their webhooks do not verify).
  test('answers a slot apart are up all along: uptime counts the slots between two answered probes', async () => {
    const server = await hook(answer200);
    const agent = await webhookAgent(registry, server.url, whsecSecret());
    await probeRound(registry);
    const first = (await availabilityOf(registry, agent.did)).online_since;
    // Two slots later: one slot in between had no probe.
    registry.clock.advance(2 * 300_000);
    await makeDue(registry, agent.did);
    await probeRound(registry);
    assert.equal(server.received.length, 2);
    const availability = await availabilityOf(registry, agent.did);
    assert.equal(availability.status, 'online');
    assert.equal(availability.uptime_24h, 1);
    assert.equal(availability.online_since, first, 'online without a break');
  });

  test('an agent whose answers stop is offline after two intervals and the online window', async () => {
    const server = await hook(answer200);
    const agent = await webhookAgent(registry, server.url, whsecSecret());
    await probeRound(registry);
    assert.equal((await availabilityOf(registry, agent.did)).status, 'online');
    // Its probe is not done (as when every node was down): no evidence either way.
    await registry.ctx.database.db
      .updateTable('webhook_probes')
      .set({ due_at: registry.clock.now() + 10 * INTERVAL_MS })
      .where('did', '=', agent.did)
      .execute();
    registry.clock.advance(2 * INTERVAL_MS);
    assert.equal((await availabilityOf(registry, agent.did)).status, 'online', 'still within the window');
    registry.clock.advance(91_000);
    assert.equal((await availabilityOf(registry, agent.did)).status, 'offline');
    // The agents online now, in search and in /metrics, follow the same rule.
    const search = await registry.app.inject({ method: 'GET', url: '/api/agents/search?available=true' });
    const found = (search.json() as { agents: { did: string }[] }).agents.map((entry) => entry.did);
    assert.ok(!found.includes(agent.did));
  });
});

describe('probes follow the network policy of deliveries', () => {
  test('a host that resolved to a public address when configured and to loopback at probe time is not contacted', async (t) => {
    const server = await startHook(answer500);
    t.after(() => server.close());
    let calls = 0;
    const resolveHost: HostResolver = async () => (++calls === 1 ? ['93.184.216.34'] : ['127.0.0.1']);
    const registry = await startRegistry({}, { resolveHost, manualProbes: true });
    t.after(() => registry.close());
    const agent = await webhookAgent(registry, `http://rebind.test:${server.port}/hook`, whsecSecret());
    await probeRound(registry);
    assert.ok(calls >= 2, 'the probe resolved the host again');
    assert.equal(server.received.length, 0, 'nothing reached the loopback server');
    assert.equal((await availabilityOf(registry, agent.did)).status, 'offline');
  });
});

describe('probing off', () => {
  test('PROBE_INTERVAL_SECONDS=0 sends no probe and leaves webhook agents unknown', async (t) => {
    const secret = whsecSecret();
    const server = await startHook(verifyingAgent(secret));
    t.after(() => server.close());
    const registry = await startRegistry(
      { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', PROBE_INTERVAL_SECONDS: '0' },
      { manualProbes: true },
    );
    t.after(() => registry.close());
    const agent = await webhookAgent(registry, server.url, secret);
    await probeRound(registry);
    assert.equal(server.received.length, 0);
    assert.equal((await availabilityOf(registry, agent.did)).status, 'unknown');
  });
});

describe("another agent's calls do not make a healthy agent read offline", () => {
  test('a probe is timed from when it is sent, not while the delivery lane of the agent is full of slow calls', async (t) => {
    const secret = whsecSecret();
    const held: http.ServerResponse[] = [];
    // Answers pings at once and holds every task: the calls are slow, the agent itself is up.
    const server = await startHook((request, res) => {
      if ((JSON.parse(request.raw) as { type?: string }).type === 'registry.ping') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      } else held.push(res);
    });
    t.after(() => server.close());
    const registry = await startRegistry(
      {
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_MAX_CONCURRENCY_PER_AGENT: '2',
        PROBE_INTERVAL_SECONDS: String(INTERVAL_MS / 1000),
        PROBE_TIMEOUT_SECONDS: '1',
      },
      { manualProbes: true },
    );
    t.after(() => registry.close());
    const agent = await webhookAgent(registry, server.url, secret);
    const caller = await register(registry);
    // Two slow calls fill the lane and a third waits for a slot; none ends before the probe.
    const calls = Array.from({ length: 3 }, () =>
      registry.app.inject({
        method: 'POST',
        url: '/api/invoke',
        headers: bearer(caller.token),
        payload: { target_did: agent.did, capability: 'translation', input: {}, timeout_ms: 60_000 },
      }),
    );
    for (let attempt = 0; attempt < 400 && held.length < 2; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(held.length, 2, 'the lane is full');

    await probeRound(registry);
    assert.equal((await availabilityOf(registry, agent.did)).status, 'online');
    assert.equal((await scheduleOf(registry, agent.did))?.failures, 0);

    // Released, the held calls and the one that waited for a slot complete.
    let answered = 0;
    for (let attempt = 0; attempt < 400 && answered < 3; attempt++) {
      for (const res of held.splice(0)) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"output":{}}');
        answered += 1;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    for (const call of await Promise.all(calls)) assert.equal(call.statusCode, 200, call.body);
  });
});

describe('across nodes', () => {
  test('two nodes on one database probe an agent once per interval between them', async (t) => {
    const secret = whsecSecret();
    const server = await startHook(verifyingAgent(secret));
    t.after(() => server.close());
    const env = {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      PROBE_INTERVAL_SECONDS: String(INTERVAL_MS / 1000),
    };
    const first = await startRegistry(env, { manualProbes: true });
    t.after(() => first.close());
    const second = await startRegistry(env, { database: first.database, manualProbes: true });
    t.after(() => second.close());
    second.clock.advance(first.clock.now() - second.clock.now());
    const agents = await Promise.all(
      Array.from({ length: 20 }, () => webhookAgent(first, server.url, secret)),
    );
    await Promise.all([probeRound(first), probeRound(second)]);
    const probedDids = server.received.map(
      (request) => (JSON.parse(request.raw) as { data: { target_did: string } }).data.target_did,
    );
    assert.equal(probedDids.length, agents.length, 'each agent probed once');
    assert.deepEqual([...new Set(probedDids)].sort(), agents.map((agent) => agent.did).sort());
    // The other node sees the agents online.
    for (const agent of agents) assert.equal((await availabilityOf(second, agent.did)).status, 'online');
  });
});
