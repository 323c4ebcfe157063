import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { agentPath } from '@agent-registry/testkit';
import { register, type Registered } from '@agent-registry/testkit/in-process';
import { http } from '../../support/http.js';
import {
  queueWorker,
  startListeningRegistry,
  type ListeningRegistry,
  type QueueWorker,
} from '../../support/faces-helpers.js';

describe('a worker that stops cleanly: POST /api/agent/offline', () => {
  let registry: ListeningRegistry;
  let worker: QueueWorker;
  let caller: Registered;
  const status = async (did: string) =>
    ((await http(registry, 'GET', agentPath(did))).body.availability as { status: string }).status;
  const invoke = () =>
    http(registry, 'POST', '/api/invoke', caller.token, {
      target_did: worker.did,
      capability: 'echo',
      input: {},
      timeout_ms: 60_000,
    });

  before(async () => {
    registry = await startListeningRegistry();
    worker = await queueWorker(registry, { name: 'Stopping', capabilities: [{ type: 'echo' }] });
    caller = await register(registry);
  });
  after(async () => registry?.close());

  test('needs the agent token; an agent never seen has nothing to end', async () => {
    assert.equal((await http(registry, 'POST', '/api/agent/offline', undefined, {})).status, 401);
    const never = await http(registry, 'POST', '/api/agent/offline', worker.token, {});
    assert.equal(never.status, 200, JSON.stringify(never.body));
    assert.deepEqual(never.body, { did: worker.did, stopped_at: null });
    assert.equal(await status(worker.did), 'unknown');
  });

  test('after it, the agent reads offline at once and a call is refused as offline, not sent', async () => {
    assert.equal((await http(registry, 'GET', '/api/agent/tasks?wait=0', worker.token)).status, 200);
    assert.equal(await status(worker.did), 'online');
    const stopped = await http(registry, 'POST', '/api/agent/offline', worker.token, {});
    assert.equal(stopped.status, 200);
    assert.equal(stopped.body.stopped_at, registry.clock.now());
    // The clock has not moved: only the stop can make it offline.
    assert.equal(await status(worker.did), 'offline');
    const search = await http(registry, 'GET', '/api/agents/search?capability=echo&available=true');
    assert.deepEqual(search.body.agents, []);

    const refused = await invoke();
    assert.equal(refused.status, 504);
    assert.equal(refused.body.code, 'INVOCATION_TIMEOUT');
    assert.equal(typeof refused.body.offline_since, 'string');
    assert.match(String(refused.body.details), /its worker stopped at .* and said so/);
    assert.match(String(refused.body.details), /the task was not sent/);
  });

  test('the next poll makes it online again, from that poll on', async () => {
    registry.clock.advance(1000);
    assert.equal((await http(registry, 'GET', '/api/agent/tasks?wait=0', worker.token)).status, 200);
    const profile = await http(registry, 'GET', agentPath(worker.did));
    const availability = profile.body.availability as { status: string; online_since: number };
    assert.equal(availability.status, 'online');
    assert.equal(availability.online_since, registry.clock.now(), 'a new online period');
  });
});
