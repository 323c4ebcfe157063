import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { agentPath, bearer } from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';
import {
  AVAILABILITY_SLOT_MS,
  CLOCK_SKEW_TOLERANCE_MS,
  ONLINE_WINDOW_MS,
  deriveAvailability,
  slotOf,
} from '../../../src/modules/availability/availability-model.js';
import type { Availability } from '../../../src/modules/availability/schemas.js';
import { enableQueue } from '../../support/registry-setup.js';

const queueAgent = {
  status: 'active',
  invocation_enabled: true,
  delivery_mode: 'queue',
  webhook_probes: true,
} as const;

describe('availability model (pure)', () => {
  test('an agent never observed is unknown with no uptime, not 100 %', () => {
    assert.deepEqual(deriveAvailability(queueAgent, undefined, 1_000_000), {
      status: 'unknown',
      last_seen_at: null,
      checked_at: null,
      online_since: null,
      uptime_24h: null,
      uptime_7d: null,
    });
  });

  test('uptime counts seen slots over the slots since the first observation', () => {
    const now = 1000 * AVAILABILITY_SLOT_MS;
    const presence = {
      first_seen_at: now - 3 * AVAILABILITY_SLOT_MS,
      last_seen_at: now,
      online_since: now - AVAILABILITY_SLOT_MS,
      checked_at: now,
      seen_slots_24h: 2,
      seen_slots_7d: 2,
      stopped_at: null,
    };
    const availability = deriveAvailability(queueAgent, presence, now);
    assert.equal(availability.status, 'online');
    assert.equal(availability.uptime_24h, 0.5);
    assert.equal(availability.online_since, now - AVAILABILITY_SLOT_MS);
  });

  test('evidence stamped ahead of the reader by more than the skew tolerance does not make an agent online', () => {
    const now = 5_000_000;
    const ahead = now + CLOCK_SKEW_TOLERANCE_MS + 1;
    const presence = {
      first_seen_at: ahead,
      last_seen_at: ahead,
      online_since: ahead,
      checked_at: ahead,
      seen_slots_24h: 1,
      seen_slots_7d: 1,
      stopped_at: null,
    };
    assert.equal(deriveAvailability(queueAgent, presence, now).status, 'unknown');
    assert.equal(
      deriveAvailability({ ...queueAgent, delivery_mode: 'webhook' }, presence, ahead).status,
      'unknown',
    );
  });
});

describe('availability of queue agents over HTTP', () => {
  let registry: TestRegistry;
  let worker: Registered;
  let webhookAgent: Registered;
  before(async () => {
    registry = await startRegistry();
    worker = await register(registry, undefined, {
      name: 'Worker',
      capabilities: [{ type: 'echo' }] as never,
    });
    webhookAgent = await register(registry);
    await enableQueue(registry, worker);
  });
  after(() => registry.close());

  const availabilityOf = async (did: string): Promise<Availability> => {
    const response = await registry.app.inject({ method: 'GET', url: agentPath(did) });
    assert.equal(response.statusCode, 200, response.body);
    return (response.json() as { availability: Availability }).availability;
  };
  const poll = async (agent: Registered) => {
    const response = await registry.app.inject({
      method: 'GET',
      url: '/api/agent/tasks?wait=0',
      headers: bearer(agent.token),
    });
    assert.equal(response.statusCode, 200, response.body);
  };

  test('a queue agent whose worker never polled is unknown', async () => {
    const availability = await availabilityOf(worker.did);
    assert.equal(availability.status, 'unknown');
    assert.equal(availability.last_seen_at, null);
    assert.equal(availability.uptime_24h, null);
  });

  test('the first poll makes the agent online at once, with last_seen_at and uptime of its first slot', async () => {
    // Read once first so the profile cache holds the agent: the poll must still show through it.
    await availabilityOf(worker.did);
    const polledAt = registry.clock.now();
    await poll(worker);
    const availability = await availabilityOf(worker.did);
    assert.equal(availability.status, 'online');
    assert.equal(availability.last_seen_at, polledAt);
    assert.equal(availability.checked_at, polledAt);
    assert.equal(availability.online_since, polledAt);
    assert.equal(availability.uptime_24h, 1);
    assert.equal(availability.uptime_7d, 1);
  });

  test('polls in a loop are coalesced: written at the flush, not at each poll', async () => {
    const firstSeen = (await availabilityOf(worker.did)).last_seen_at;
    registry.clock.advance(20_000);
    await poll(worker);
    assert.equal((await availabilityOf(worker.did)).last_seen_at, firstSeen, 'no write for a poll');
    await registry.ctx.availability.flush();
    const availability = await availabilityOf(worker.did);
    assert.equal(availability.last_seen_at, registry.clock.now());
    assert.equal(availability.online_since, firstSeen, 'continuously online since the first poll');
  });

  test('a worker gone for longer than the online window is offline; uptime counts the slots it missed', async () => {
    const lastSeen = registry.clock.now();
    registry.clock.advance(ONLINE_WINDOW_MS + 1);
    const gone = await availabilityOf(worker.did);
    assert.equal(gone.status, 'offline');
    assert.equal(gone.last_seen_at, lastSeen);
    assert.equal(gone.online_since, null);

    const firstSeen = (await availabilityOf(worker.did)).last_seen_at!;
    registry.clock.advance(2 * AVAILABILITY_SLOT_MS);
    const back = registry.clock.now();
    await poll(worker);
    const availability = await availabilityOf(worker.did);
    assert.equal(availability.status, 'online');
    assert.equal(availability.online_since, back, 'a gap restarts the continuous run');
    const seenSlots = new Set([slotOf(firstSeen - 20_000), slotOf(firstSeen), slotOf(back)]).size;
    const counted = slotOf(back) - slotOf(firstSeen - 20_000) + 1;
    assert.equal(availability.uptime_24h, seenSlots / counted);
    assert.ok(availability.uptime_24h! < 1);
  });

  test('accepting a task is evidence too', async () => {
    registry.clock.advance(ONLINE_WINDOW_MS + 1);
    assert.equal((await availabilityOf(worker.did)).status, 'offline');
    const caller = await register(registry);
    const invoked = registry.app.inject({
      method: 'POST',
      url: '/api/invoke',
      headers: bearer(caller.token),
      payload: { target_did: worker.did, capability: 'echo', input: {}, timeout_ms: 300_000 },
    });
    // The invocation waits for a result; the worker polls (evidence), then the status is read.
    let taskId: string | undefined;
    for (let attempt = 0; attempt < 100 && taskId === undefined; attempt++) {
      const listing = await registry.app.inject({
        method: 'GET',
        url: '/api/agent/tasks',
        headers: bearer(worker.token),
      });
      taskId = (listing.json() as { tasks: { task_id: string }[] }).tasks[0]?.task_id;
      if (taskId === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(taskId);
    registry.clock.advance(ONLINE_WINDOW_MS + 1);
    assert.equal((await availabilityOf(worker.did)).status, 'offline');
    const accepted = await registry.app.inject({
      method: 'POST',
      url: `/api/agent/tasks/${taskId}/accept`,
      headers: bearer(worker.token),
    });
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.equal((await availabilityOf(worker.did)).status, 'online');
    await registry.app.inject({
      method: 'POST',
      url: `/api/agent/tasks/${taskId}/result`,
      headers: bearer(worker.token),
      payload: { output: {} },
    });
    await invoked;
  });

  test('an agent that is not a queue agent is never online from its polls', async () => {
    await poll(webhookAgent);
    const availability = await availabilityOf(webhookAgent.did);
    assert.equal(availability.status, 'unknown');
    assert.equal(availability.last_seen_at, registry.clock.now());
  });
});

describe('availability across a restart', () => {
  test('a restarted node shows the last evidence and invents none', async () => {
    const first = await startRegistry();
    const database = first.database;
    const worker = await register(first);
    await first.app.inject({
      method: 'PUT',
      url: agentPath(worker.did, '/invocation'),
      headers: bearer(worker.token),
      payload: { enabled: true, delivery_mode: 'queue' },
    });
    const polled = first.clock.now();
    await first.app.inject({ method: 'GET', url: '/api/agent/tasks', headers: bearer(worker.token) });
    first.clock.advance(5_000);
    // Noted in memory only; the shutdown writes it.
    await first.app.inject({ method: 'GET', url: '/api/agent/tasks', headers: bearer(worker.token) });
    const lastPoll = first.clock.now();
    await first.app.close();
    await first.ctx.close();

    const second = await startRegistry({}, { database });
    try {
      second.clock.advance(lastPoll - second.clock.now() + ONLINE_WINDOW_MS + 1);
      const response = await second.app.inject({ method: 'GET', url: agentPath(worker.did) });
      const availability = (response.json() as { availability: Availability }).availability;
      assert.equal(availability.last_seen_at, lastPoll, 'the last batch was written at shutdown');
      assert.ok(availability.last_seen_at! > polled);
      assert.equal(availability.status, 'offline');
    } finally {
      await second.app.close();
      await second.ctx.close();
      await database.drop();
    }
  });
});

describe('search by availability', () => {
  let registry: TestRegistry;
  let online: Registered;
  let silent: Registered;
  let webhookAgent: Registered;
  before(async () => {
    registry = await startRegistry();
    const profile = (name: string) =>
      ({ name, capabilities: [{ type: 'echo' }], tags: ['availability-test'] }) as never;
    online = await register(registry, undefined, profile('Polling worker'));
    silent = await register(registry, undefined, profile('Silent worker'));
    webhookAgent = await register(registry, undefined, profile('Webhook agent'));
    await enableQueue(registry, online);
    await enableQueue(registry, silent);
    for (const agent of [online, webhookAgent]) {
      const polled = await registry.app.inject({
        method: 'GET',
        url: '/api/agent/tasks',
        headers: bearer(agent.token),
      });
      assert.equal(polled.statusCode, 200, polled.body);
    }
  });
  after(() => registry.close());

  const search = async (query: string) => {
    const response = await registry.app.inject({
      method: 'GET',
      url: `/api/agents/search?tags=availability-test&${query}`,
    });
    return response;
  };
  const dids = (response: { json(): unknown }) =>
    (response.json() as { agents: { did: string }[] }).agents.map((agent) => agent.did);

  test('available=true returns only the agents online now', async () => {
    const response = await search('available=true');
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(dids(response), [online.did]);
    assert.equal((response.json() as { total: number }).total, 1);
    const all = await search('available=false');
    assert.equal((all.json() as { total: number }).total, 3);
  });

  test('sort=availability puts the online agents first and keeps the others', async () => {
    for (const order of ['desc', 'asc']) {
      const response = await search(`sort=availability&order=${order}`);
      assert.equal(response.statusCode, 200, response.body);
      const found = dids(response);
      assert.equal(found[0], online.did);
      assert.deepEqual(new Set(found), new Set([online.did, silent.did, webhookAgent.did]));
    }
    const second = await search('sort=availability&limit=1&offset=1');
    assert.notEqual(dids(second)[0], online.did);
    assert.equal((second.json() as { total: number }).total, 3);
  });

  test('once the worker is gone for longer than the online window, available=true finds nobody', async () => {
    registry.clock.advance(ONLINE_WINDOW_MS + 1);
    assert.deepEqual(dids(await search('available=true')), []);
    registry.clock.advance(-(ONLINE_WINDOW_MS + 1));
  });

  test('the web pages say it: "Online now" on the agent page and the result card, the checkbox filters', async () => {
    const page = await registry.app.inject({
      method: 'GET',
      url: `/agents/${encodeURIComponent(online.did)}`,
    });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Online now/);
    const results = await registry.app.inject({
      method: 'GET',
      url: '/?tags=availability-test&available=true',
    });
    assert.equal(results.statusCode, 200, results.body);
    assert.match(results.body, /Polling worker/);
    assert.doesNotMatch(results.body, /Silent worker/);
    assert.match(results.body, /<span class="availability">Online now<\/span>/);
    assert.match(results.body, /id="available"[^>]*checked/);
    registry.clock.advance(2 * 60 * 60 * 1000);
    const later = await registry.app.inject({
      method: 'GET',
      url: `/agents/${encodeURIComponent(online.did)}`,
    });
    assert.match(later.body, /Offline, last seen 2 h ago/);
    const silentPage = await registry.app.inject({
      method: 'GET',
      url: `/agents/${encodeURIComponent(silent.did)}`,
    });
    assert.match(silentPage.body, /Unknown \(never observed\)/);
    registry.clock.advance(-2 * 60 * 60 * 1000);
    const bad = await registry.app.inject({ method: 'GET', url: '/?available=yes' });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /available/);
  });

  test('the A2A card and the MCP tools carry the availability', async () => {
    const card = await registry.app.inject({
      method: 'GET',
      url: `/a2a/${encodeURIComponent(online.did)}/.well-known/agent-card.json`,
    });
    assert.equal(card.statusCode, 200, card.body);
    const extensions = (
      card.json() as { capabilities: { extensions: { uri: string; params: Availability }[] } }
    ).capabilities.extensions;
    const extension = extensions.find((candidate) => candidate.uri.includes(':availability:'));
    assert.equal(extension?.params.status, 'online');
    const listed = await registry.app.inject({
      method: 'POST',
      url: `/mcp/agents/${encodeURIComponent(online.did)}`,
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    assert.equal(listed.statusCode, 200, listed.body);
    const text = listed.body.startsWith('{') ? listed.body : listed.body.replace(/^[\s\S]*?data: /, '');
    const tools = (
      JSON.parse(text) as {
        result: { tools: { description: string; _meta: Record<string, Availability> }[] };
      }
    ).result.tools;
    assert.equal(tools[0]?._meta['agent-registry/availability']?.status, 'online');
    assert.match(tools[0]?.description ?? '', /Availability when listed: online/);
  });

  test('bad values and combinations are 400s that say what to fix', async () => {
    const bad = await search('available=yes');
    assert.equal(bad.statusCode, 400, bad.body);
    assert.match(bad.body, /available/);
    for (const query of ['available=true&min_success_rate=0.5', 'sort=availability&active_within_days=3']) {
      const combined = await search(query);
      assert.equal(combined.statusCode, 400, combined.body);
      const body = combined.json() as { code: string; details: string };
      assert.equal(body.code, 'VALIDATION_FAILED');
      assert.match(body.details, /drop one of them/);
    }
  });
});

test('a timeout of a queue agent whose worker never polled says so', async () => {
  const registry = await startRegistry();
  try {
    const worker = await register(registry);
    const caller = await register(registry);
    await enableQueue(registry, worker);
    const profile = await registry.app.inject({ method: 'GET', url: agentPath(worker.did) });
    const capability = (profile.json() as { capabilities: { type: string }[] }).capabilities[0]!.type;
    const response = await registry.app.inject({
      method: 'POST',
      url: '/api/invoke',
      headers: bearer(caller.token),
      payload: { target_did: worker.did, capability, input: {}, timeout_ms: 100 },
    });
    assert.equal(response.statusCode, 504, response.body);
    assert.match((response.json() as { details: string }).details, /no worker of this agent has ever polled/);
  } finally {
    await registry.close();
  }
});

describe('invoking an agent known to be offline', () => {
  let registry: TestRegistry;
  let worker: Registered;
  let caller: Registered;
  before(async () => {
    registry = await startRegistry();
    worker = await register(registry, undefined, {
      name: 'Stopped worker',
      capabilities: [{ type: 'echo' }],
    } as never);
    caller = await register(registry);
    await enableQueue(registry, worker);
    const polled = await registry.app.inject({
      method: 'GET',
      url: '/api/agent/tasks',
      headers: bearer(worker.token),
    });
    assert.equal(polled.statusCode, 200, polled.body);
  });
  after(() => registry.close());

  test('no worker seen for longer than the call timeout: 504 at once, saying since when, task recorded as a timeout', async () => {
    const lastSeen = registry.clock.now();
    registry.clock.advance(ONLINE_WINDOW_MS + 10_000);
    const response = await registry.app.inject({
      method: 'POST',
      url: '/api/invoke',
      headers: bearer(caller.token),
      // Without the early answer this is a 504 after 30 s whose details do not say offline.
      payload: { target_did: worker.did, capability: 'echo', input: {}, timeout_ms: 30_000 },
    });
    assert.equal(response.statusCode, 504, response.body);
    const body = response.json() as { code: string; details: string; task_id: string };
    assert.equal(body.code, 'INVOCATION_TIMEOUT');
    assert.match(body.details, /offline/);
    assert.ok(body.details.includes(new Date(lastSeen).toISOString()), body.details);
    const task = await registry.app.inject({
      method: 'GET',
      url: `/api/tasks/${body.task_id}`,
      headers: bearer(caller.token),
    });
    assert.equal((task.json() as { status: string }).status, 'timeout');
    const pending = await registry.app.inject({
      method: 'GET',
      url: '/api/agent/tasks',
      headers: bearer(worker.token),
    });
    assert.deepEqual((pending.json() as { tasks: unknown[] }).tasks, [], 'never delivered');
  });
});

test('/metrics counts active agents by availability status', async () => {
  const registry = await startRegistry();
  try {
    const online = await register(registry);
    const offline = await register(registry);
    await register(registry); // never observed: unknown
    for (const agent of [online, offline]) {
      await enableQueue(registry, agent);
    }
    const poll = (agent: Registered) =>
      registry.app.inject({ method: 'GET', url: '/api/agent/tasks', headers: bearer(agent.token) });
    await poll(offline);
    registry.clock.advance(ONLINE_WINDOW_MS + 1);
    await poll(online);
    const metrics = await registry.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(metrics.statusCode, 200);
    assert.match(metrics.body, /registry_agents_by_availability\{status="online"\} 1\n/);
    assert.match(metrics.body, /registry_agents_by_availability\{status="offline"\} 1\n/);
    assert.match(metrics.body, /registry_agents_by_availability\{status="unknown"\} 1\n/);
  } finally {
    await registry.close();
  }
});
