import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { insertTask, findTask, type NewTaskRow } from '../../../src/modules/tasks/tasks-store.js';
import { TaskStateMachine } from '../../../src/modules/tasks/task-state.js';
import { runTaskMaintenance } from '../../../src/modules/tasks/task-maintenance.js';
import { TASK_LIMITS as LIMITS } from '../../../src/modules/tasks/task-limits.js';
import { agentPath, bearer } from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';
import { startWithAgent } from '../../support/registry-setup.js';

/**
 * Idempotency-Key on POST /api/invoke, and the background sweep of expired open
 * tasks. Real SQL on the dialect under test.
 */

interface Worker extends Registered {
  pending(): Promise<{ task_id: string }[]>;
}

describe('Idempotency-Key on POST /api/invoke', () => {
  let registry: TestRegistry;
  let caller: Registered;

  before(async () => {
    // Tokens outlive the 24-hour key window the last tests step over.
    ({ registry, agent: caller } = await startWithAgent({ TOKEN_TTL_SECONDS: String(30 * 24 * 60 * 60) }));
  });
  after(() => registry.close());

  const inject = (
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    token: string,
    payload?: object,
    key?: string,
  ) =>
    registry.app.inject({
      method,
      url,
      headers: { ...bearer(token), ...(key === undefined ? {} : { 'idempotency-key': key }) },
      ...(payload ? { payload } : {}),
    });

  async function queueWorker(): Promise<Worker> {
    const registered = await register(registry, undefined, {
      name: 'Worker',
      capabilities: [{ type: 'echo' }],
    });
    const config = await inject('PUT', agentPath(registered.did, '/invocation'), registered.token, {
      enabled: true,
      delivery_mode: 'queue',
    });
    assert.equal(config.statusCode, 200, config.body);
    return {
      ...registered,
      pending: async () => {
        const response = await inject('GET', '/api/agent/tasks?limit=50', registered.token);
        assert.equal(response.statusCode, 200, response.body);
        return response.json<{ tasks: { task_id: string }[] }>().tasks;
      },
    };
  }

  const invoke = (who: Registered, target: string, key: string | undefined, extra: object = {}) =>
    inject(
      'POST',
      '/api/invoke',
      who.token,
      { target_did: target, capability: 'echo', input: { text: 'hi' }, ...extra },
      key,
    );

  async function untilPending(worker: Worker, count: number): Promise<{ task_id: string }[]> {
    for (;;) {
      const tasks = await worker.pending();
      if (tasks.length >= count) return tasks;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  test('a retry with the same key attaches to the open task, and answers at once after it ended', async () => {
    const worker = await queueWorker();
    const key = crypto.randomUUID();
    const first = invoke(caller, worker.did, key);
    const [task] = await untilPending(worker, 1);
    assert.ok(task);
    const retry = invoke(caller, worker.did, key);
    // Let the retry reach the registry; it must not create a second task.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(
      (await worker.pending()).map((entry) => entry.task_id),
      [task.task_id],
    );

    assert.equal(
      (await inject('POST', `/api/agent/tasks/${task.task_id}/accept`, worker.token)).statusCode,
      200,
    );
    const done = await inject('POST', `/api/agent/tasks/${task.task_id}/result`, worker.token, {
      output: { n: 1 },
    });
    assert.equal(done.statusCode, 200, done.body);

    for (const response of [await first, await retry, await invoke(caller, worker.did, key)]) {
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json(), { task_id: task.task_id, status: 'completed', output: { n: 1 } });
    }
    assert.deepEqual(await worker.pending(), []);
  });

  test('concurrent first requests with one key create one task', async () => {
    const worker = await queueWorker();
    const key = crypto.randomUUID();
    const racing = Array.from({ length: 5 }, () => invoke(caller, worker.did, key, { timeout_ms: 2_000 }));
    const [task] = await untilPending(worker, 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((await worker.pending()).length, 1);
    await inject('POST', `/api/agent/tasks/${task?.task_id}/fail`, worker.token, { error: 'no' });
    for (const response of await Promise.all(racing)) {
      assert.equal(response.statusCode, 502, response.body);
      assert.equal(response.json().code, 'AGENT_ERROR');
      assert.equal(response.json().task_id, task?.task_id);
    }
  });

  test('an ended timeout is answered again as the same 504', async () => {
    const worker = await queueWorker();
    const key = crypto.randomUUID();
    const first = await invoke(caller, worker.did, key, { timeout_ms: 100 });
    assert.equal(first.statusCode, 504, first.body);
    const again = await invoke(caller, worker.did, key, { timeout_ms: 100 });
    assert.equal(again.statusCode, 504, again.body);
    assert.equal(again.json().task_id, first.json().task_id);
  });

  test('the same key with a different request is 422 IDEMPOTENCY_KEY_REUSED; another caller’s key is its own', async () => {
    const worker = await queueWorker();
    const key = crypto.randomUUID();
    const first = await invoke(caller, worker.did, key, { timeout_ms: 100 });
    assert.equal(first.statusCode, 504);
    const different = await invoke(caller, worker.did, key, { input: { text: 'other' }, timeout_ms: 100 });
    assert.equal(different.statusCode, 422, different.body);
    assert.equal(different.json().code, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(different.json().task_id, first.json().task_id);
    assert.match(different.json().details, /different request/);

    const stranger = await register(registry);
    const theirs = await invoke(stranger, worker.did, key, { input: { text: 'other' }, timeout_ms: 100 });
    assert.equal(theirs.statusCode, 504, theirs.body);
    assert.notEqual(theirs.json().task_id, first.json().task_id);
  });

  test('a malformed key is 400 INVALID_IDEMPOTENCY_KEY', async () => {
    const worker = await queueWorker();
    for (const key of ['has space', 'x'.repeat(256), 'é']) {
      const response = await invoke(caller, worker.did, key, { timeout_ms: 100 });
      assert.equal(response.statusCode, 400, `${key}: ${response.body}`);
      assert.equal(response.json().code, 'INVALID_IDEMPOTENCY_KEY');
    }
    assert.deepEqual(await worker.pending(), []);
  });

  test('keys are remembered for 24 hours, then a new task is created and the old key forgotten', async () => {
    const worker = await queueWorker();
    const key = crypto.randomUUID();
    const first = await invoke(caller, worker.did, key, { timeout_ms: 100 });
    registry.clock.advance(LIMITS.idempotencyKeyTtlMs - 1_000);
    const within = await invoke(caller, worker.did, key, { timeout_ms: 100 });
    assert.equal(within.json().task_id, first.json().task_id);
    registry.clock.advance(1_000);
    const states = new TaskStateMachine(registry.ctx.database.db, registry.clock, registry.ctx.events);
    const run = await runTaskMaintenance({
      db: registry.ctx.database.db,
      clock: registry.clock,
      states,
      bounds: registry.config.tasks,
    });
    assert.ok(run.keysForgotten >= 1, JSON.stringify(run));
    const later = await invoke(caller, worker.did, key, { timeout_ms: 100 });
    assert.equal(later.statusCode, 504);
    assert.notEqual(later.json().task_id, first.json().task_id);
  });

  test('the OpenAPI document describes the header', async () => {
    const response = await registry.app.inject({ method: 'GET', url: '/openapi.json' });
    const parameters = response.json().paths['/api/invoke'].post.parameters as { name: string; in: string }[];
    assert.ok(
      parameters.some((parameter) => parameter.in === 'header' && parameter.name === 'idempotency-key'),
    );
  });
});

describe('background sweep of expired open tasks', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry();
  });
  after(() => registry.close());

  const row = (status: NewTaskRow['status'], deadline: number): NewTaskRow => ({
    id: crypto.randomUUID(),
    caller_did: 'did:web:localhost:agent:caller',
    target_did: 'did:web:localhost:agent:target',
    capability: 'echo',
    input: '{}',
    status,
    delivery_mode: 'queue',
    output: status === 'completed' ? '{}' : null,
    error: null,
    error_code: null,
    created_at: deadline - 1_000,
    deadline_at: deadline,
    accepted_at: null,
    completed_at: status === 'completed' ? deadline - 10 : null,
  });

  test('open tasks past their deadline become timeout, once, whoever runs it; others are untouched', async () => {
    const { db } = registry.ctx.database;
    const now = registry.clock.now();
    const expired = [row('pending', now - 5), row('processing', now - 1), row('pending', now)];
    const untouched = [row('pending', now + 60_000), row('completed', now - 5)];
    for (const task of [...expired, ...untouched]) await insertTask(db, task);

    // Two "nodes" sweeping at the same moment never move a task twice.
    const nodes = [0, 1].map(() => new TaskStateMachine(db, registry.clock, registry.ctx.events));
    const runs = await Promise.all(
      nodes.map((states) =>
        runTaskMaintenance({ db, clock: registry.clock, states, bounds: registry.config.tasks }),
      ),
    );
    assert.equal(runs[0]!.timedOut + runs[1]!.timedOut, expired.length);
    const again = await runTaskMaintenance({
      db,
      clock: registry.clock,
      states: nodes[0]!,
      bounds: registry.config.tasks,
    });
    assert.equal(again.timedOut, 0, 'a second run finds nothing to do');

    for (const task of expired) {
      const stored = await findTask(db, task.id);
      assert.equal(stored?.status, 'timeout');
      assert.equal(Number(stored?.completed_at), now);
    }
    assert.equal((await findTask(db, untouched[0]!.id))?.status, 'pending');
    assert.equal((await findTask(db, untouched[1]!.id))?.status, 'completed');
  });
});
