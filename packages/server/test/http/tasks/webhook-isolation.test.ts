import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { WebhookDeliverer } from '../../../src/modules/tasks/deliverers.js';
import { agentPath, bearer, eventually } from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';

/**
 * One agent's slow webhook host must not starve another agent's webhook, even on the
 * same origin. Each target agent gets its own connection pool and a concurrency limit; deliveries
 * waiting for a slot wait only on their own task's deadline.
 */

const LIMIT = 4;

interface Origin {
  url(pathname: string): string;
  /** Requests to /slow currently open. */
  slowOpen: number;
  slowReceived: number;
  fastReceived: number;
  /** webhook-id (task id) of every delivery /slow received. */
  slowTaskIds: Set<string>;
  close(): Promise<void>;
}

/** One origin for both agents: /slow never answers, /fast answers at once. */
async function startOrigin(): Promise<Origin> {
  const origin = {
    slowOpen: 0,
    slowReceived: 0,
    fastReceived: 0,
    slowTaskIds: new Set<string>(),
  };
  const server = http.createServer((req, res) => {
    req.resume();
    if (req.url === '/slow') {
      origin.slowReceived += 1;
      origin.slowTaskIds.add(String(req.headers['webhook-id']));
      origin.slowOpen += 1;
      res.on('close', () => {
        origin.slowOpen -= 1;
      });
      return; // hang until the registry gives up
    }
    origin.fastReceived += 1;
    req.on('end', () =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"output":{"ok":true}}'),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(origin, {
    url: (pathname: string) => `http://127.0.0.1:${port}${pathname}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

async function webhookAgent(registry: TestRegistry, url: string): Promise<Registered> {
  const agent = await register(registry);
  const response = await registry.app.inject({
    method: 'PUT',
    url: agentPath(agent.did, '/invocation'),
    headers: bearer(agent.token),
    payload: { enabled: true, delivery_mode: 'webhook', webhook_url: url },
  });
  assert.equal(response.statusCode, 200, response.body);
  return agent;
}

function invoke(registry: TestRegistry, caller: Registered, target: Registered, timeoutMs: number) {
  return registry.app.inject({
    method: 'POST',
    url: '/api/invoke',
    headers: bearer(caller.token),
    payload: {
      target_did: target.did,
      capability: 'translation',
      input: { text: 'hi' },
      timeout_ms: timeoutMs,
    },
  });
}

describe('webhook deliveries are isolated per target agent', () => {
  let registry: TestRegistry;
  let origin: Origin;

  before(async () => {
    registry = await startRegistry({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_MAX_CONCURRENCY_PER_AGENT: String(LIMIT),
      // One caller holds 300 deliveries open here: more than a caller may by default.
      TASK_MAX_OPEN_PER_CALLER: '1000',
    });
    origin = await startOrigin();
  });

  after(async () => {
    await origin?.close();
    await registry?.close();
  });

  test('300 hanging deliveries to one agent: another agent on the same origin still answers; the slow one gets 504s', async () => {
    const slow = await webhookAgent(registry, origin.url('/slow'));
    const fast = await webhookAgent(registry, origin.url('/fast'));
    const caller = await register(registry);
    const lanes = (
      registry.ctx.invocation as unknown as { deps: { deliverers: { webhook: WebhookDeliverer } } }
    ).deps.deliverers.webhook.lanes;

    // Deadlines long enough that none passes before all 300 are queued on a loaded machine.
    const hanging = Array.from({ length: 300 }, () => invoke(registry, caller, slow, 15_000));
    await eventually(
      () => lanes.load(slow.did).waiting === 300 - LIMIT && origin.slowOpen === LIMIT,
      `${LIMIT} deliveries open at the slow agent and ${300 - LIMIT} queued`,
    );

    // The slow agent holds its LIMIT sockets and 296 queued deliveries; the fast agent is not behind them.
    const answered = await invoke(registry, caller, fast, 8_000);
    assert.equal(answered.statusCode, 200, answered.body);
    assert.deepEqual(answered.json().output, { ok: true });
    assert.equal(origin.fastReceived, 1);
    assert.equal(
      origin.slowReceived,
      LIMIT,
      'queued deliveries are not sent while the agent is at its limit',
    );

    const outcomes = await Promise.all(hanging);
    for (const outcome of outcomes) {
      assert.equal(outcome.statusCode, 504, outcome.body);
      assert.equal(outcome.json().code, 'INVOCATION_TIMEOUT');
    }
    // Every slot and queue entry is released (the delivery's abort may land just after the 504 answer).
    await eventually(
      () => lanes.load(slow.did).active === 0 && lanes.load(slow.did).waiting === 0,
      "the slow agent's slots and queue released",
    );

    // With its queue drained, the slow agent's next delivery goes out again (seen arriving before its
    // deadline, so a loaded machine cannot let the deadline pass before the request is sent).
    const receivedBefore = origin.slowReceived;
    const again = invoke(registry, caller, slow, 5_000);
    await eventually(() => origin.slowReceived > receivedBefore, "the slow agent's next delivery");
    const answered504 = await again;
    assert.equal(answered504.statusCode, 504, answered504.body);
    assert.ok(origin.slowTaskIds.has(String(answered504.json().task_id)));
  });

  test('a delivery queued behind its own agent’s hanging ones ends at its own deadline, as a timeout', async () => {
    const slow = await webhookAgent(registry, origin.url('/slow'));
    const caller = await register(registry);
    const lanes = (
      registry.ctx.invocation as unknown as { deps: { deliverers: { webhook: WebhookDeliverer } } }
    ).deps.deliverers.webhook.lanes;
    const long = Array.from({ length: LIMIT }, () => invoke(registry, caller, slow, 30_000));
    await eventually(() => lanes.load(slow.did).active === LIMIT, `${LIMIT} long deliveries open`);

    const queued = await invoke(registry, caller, slow, 300);
    assert.equal(queued.statusCode, 504, queued.body);
    const task = await registry.app.inject({
      method: 'GET',
      url: `/api/tasks/${queued.json().task_id}`,
      headers: bearer(caller.token),
    });
    assert.equal(task.json().status, 'timeout');
    // The long ones are still waiting: the queued task's deadline did not borrow from theirs, or theirs from it.
    assert.equal(lanes.load(slow.did).active, LIMIT);
    assert.equal(lanes.load(slow.did).waiting, 0);

    await registry.ctx.stopWaiters();
    await Promise.all(long);
  });
});
