import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { agentPath, bearer } from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';
import { bearerInject, startWithAgent } from '../../support/registry-setup.js';

interface Worker extends Registered {
  nextTask(wait?: number): Promise<{ task_id: string; input: Record<string, unknown> } | undefined>;
}

describe('invocation through a queue', () => {
  let registry: TestRegistry;
  let caller: Registered;
  before(async () => {
    ({ registry, agent: caller } = await startWithAgent());
  });
  after(() => registry.close());

  const inject = bearerInject(() => registry);

  async function queueWorker(capabilities: Record<string, unknown>[] = [{ type: 'echo' }]): Promise<Worker> {
    const registered = await register(registry, undefined, {
      name: 'Worker',
      capabilities: capabilities as never,
    });
    const config = await inject('PUT', agentPath(registered.did, '/invocation'), registered.token, {
      enabled: true,
      delivery_mode: 'queue',
    });
    assert.equal(config.statusCode, 200, config.body);
    return {
      ...registered,
      nextTask: async (wait = 5) => {
        const response = await inject('GET', `/api/agent/tasks?wait=${wait}`, registered.token);
        assert.equal(response.statusCode, 200, response.body);
        return response.json<{ tasks: { task_id: string; input: Record<string, unknown> }[] }>().tasks[0];
      },
    };
  }

  const invoke = (target: string, extra: Record<string, unknown> = {}) =>
    inject('POST', '/api/invoke', caller.token, {
      target_did: target,
      capability: 'echo',
      input: { text: 'hi' },
      ...extra,
    });

  /** The worker takes the next task and reports an empty result: the invocation answers 200. */
  async function completeNext(worker: Worker, pending: ReturnType<typeof invoke>): Promise<void> {
    const task = await worker.nextTask();
    assert.ok(task);
    await inject('POST', `/api/agent/tasks/${task.task_id}/result`, worker.token, { output: {} });
    assert.equal((await pending).statusCode, 200);
  }

  test('round trip: invoke blocks until the worker accepts and reports a result', async () => {
    const worker = await queueWorker();
    const pending = invoke(worker.did);
    const task = await worker.nextTask();
    assert.ok(task, 'the long poll returns the new task');
    assert.deepEqual(task.input, { text: 'hi' });
    const listed = await inject('GET', '/api/agent/tasks', worker.token);
    const entry = listed.json().tasks[0];
    assert.equal(entry.caller_did, caller.did);
    assert.equal(entry.capability, 'echo');
    assert.equal(entry.deadline_at - entry.created_at, 30_000);

    const accepted = await inject('POST', `/api/agent/tasks/${task.task_id}/accept`, worker.token);
    assert.deepEqual(accepted.json(), { task_id: task.task_id, status: 'processing' });
    assert.equal((await inject('GET', '/api/agent/tasks', worker.token)).json().tasks.length, 0);
    const result = await inject('POST', `/api/agent/tasks/${task.task_id}/result`, worker.token, {
      output: { echoed: 'hi' },
    });
    assert.deepEqual(result.json(), { task_id: task.task_id, status: 'completed' });

    const response = await pending;
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), {
      task_id: task.task_id,
      status: 'completed',
      output: { echoed: 'hi' },
    });

    const view = await inject('GET', `/api/tasks/${task.task_id}`, caller.token);
    assert.equal(view.statusCode, 200);
    const body = view.json();
    assert.equal(body.status, 'completed');
    assert.equal(body.capability, 'echo');
    assert.equal(body.target_did, worker.did);
    assert.deepEqual(body.output, { echoed: 'hi' });
    assert.equal(typeof body.completed_at, 'number');
  });

  test('a result straight from pending completes the task too', async () => {
    const worker = await queueWorker();
    const pending = invoke(worker.did);
    const task = await worker.nextTask();
    assert.ok(task);
    assert.equal(
      (
        await inject('POST', `/api/agent/tasks/${task.task_id}/result`, worker.token, {
          output: { ok: true },
        })
      ).statusCode,
      200,
    );
    assert.equal((await pending).statusCode, 200);
  });

  test('the agent reporting failure gives 502 with its error; the task is failed', async () => {
    const worker = await queueWorker();
    const pending = invoke(worker.did);
    const task = await worker.nextTask();
    assert.ok(task);
    const failed = await inject('POST', `/api/agent/tasks/${task.task_id}/fail`, worker.token, {
      error: 'model overloaded',
    });
    assert.deepEqual(failed.json(), { task_id: task.task_id, status: 'failed' });
    const response = await pending;
    assert.equal(response.statusCode, 502);
    assert.equal(response.json().code, 'AGENT_ERROR');
    assert.match(response.json().details, /model overloaded/);
    assert.equal(response.json().task_id, task.task_id);
    const view = (await inject('GET', `/api/tasks/${task.task_id}`, caller.token)).json();
    assert.equal(view.status, 'failed');
    assert.equal(view.error, 'model overloaded');
  });

  test('504 on timeout; a late result or fail then gets 409 and the task stays timeout', async () => {
    const worker = await queueWorker();
    const response = await invoke(worker.did, { timeout_ms: 200 });
    assert.equal(response.statusCode, 504, response.body);
    assert.equal(response.json().code, 'INVOCATION_TIMEOUT');
    const taskId = response.json().task_id as string;
    const late = await inject('POST', `/api/agent/tasks/${taskId}/result`, worker.token, {
      output: { late: true },
    });
    assert.equal(late.statusCode, 409);
    assert.equal(late.json().code, 'TASK_NOT_OPEN');
    assert.equal(
      (await inject('POST', `/api/agent/tasks/${taskId}/fail`, worker.token, { error: 'x' })).statusCode,
      409,
    );
    assert.equal((await inject('POST', `/api/agent/tasks/${taskId}/accept`, worker.token)).statusCode, 409);
    assert.equal((await inject('GET', `/api/tasks/${taskId}`, caller.token)).json().status, 'timeout');
  });

  test('race: two accepts of one task, exactly one wins', async () => {
    const worker = await queueWorker();
    const pending = invoke(worker.did, { timeout_ms: 5000 });
    const task = await worker.nextTask();
    assert.ok(task);
    const attempts = await Promise.all(
      Array.from({ length: 8 }, () =>
        inject('POST', `/api/agent/tasks/${task.task_id}/accept`, worker.token),
      ),
    );
    const codes = attempts.map((attempt) => attempt.statusCode).sort();
    assert.deepEqual(codes, [200, 409, 409, 409, 409, 409, 409, 409]);
    await inject('POST', `/api/agent/tasks/${task.task_id}/result`, worker.token, { output: {} });
    assert.equal((await pending).statusCode, 200);
  });

  test('race: a result racing the timeout never overwrites it, and the invoker sees what won', async () => {
    const worker = await queueWorker();
    for (let round = 0; round < 5; round++) {
      const pending = invoke(worker.did, { timeout_ms: 150 });
      const task = await worker.nextTask();
      assert.ok(task);
      await new Promise((resolve) => setTimeout(resolve, 140 + round * 5));
      const result = await inject('POST', `/api/agent/tasks/${task.task_id}/result`, worker.token, {
        output: { round },
      });
      const response = await pending;
      const stored = (await inject('GET', `/api/tasks/${task.task_id}`, caller.token)).json();
      if (result.statusCode === 200) {
        assert.equal(response.statusCode, 200);
        assert.equal(stored.status, 'completed');
      } else {
        assert.equal(result.statusCode, 409);
        assert.equal(response.statusCode, 504);
        assert.equal(stored.status, 'timeout');
        assert.equal(stored.output, undefined);
      }
    }
  });

  test('the long poll is woken by a new task, and returns empty when nothing comes', async () => {
    const worker = await queueWorker();
    const polling = worker.nextTask(30);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const pending = invoke(worker.did);
    const task = await polling;
    assert.ok(task, 'woken by the invocation, long before 30 s');
    await inject('POST', `/api/agent/tasks/${task.task_id}/result`, worker.token, { output: {} });
    await pending;
    const empty = await inject('GET', '/api/agent/tasks?wait=0.2', worker.token);
    assert.deepEqual(empty.json(), { tasks: [] });
  });

  test('pending tasks: limit default 10, max 50; wait at most 60', async () => {
    const worker = await queueWorker();
    const invocations = Array.from({ length: 12 }, (_, i) =>
      invoke(worker.did, { input: { i }, timeout_ms: 10_000 }),
    );
    let tasks: { task_id: string }[] = [];
    for (let attempt = 0; attempt < 400 && tasks.length < 12; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 25));
      tasks = (await inject('GET', '/api/agent/tasks?limit=50', worker.token)).json().tasks;
    }
    assert.equal(tasks.length, 12);
    assert.equal((await inject('GET', '/api/agent/tasks', worker.token)).json().tasks.length, 10);
    assert.equal((await inject('GET', '/api/agent/tasks?limit=3', worker.token)).json().tasks.length, 3);
    for (const query of ['limit=51', 'limit=0', 'limit=x', 'wait=61', 'wait=-1']) {
      const response = await inject('GET', `/api/agent/tasks?${query}`, worker.token);
      assert.equal(response.statusCode, 400, query);
      assert.equal(response.json().code, 'VALIDATION_FAILED');
    }
    await Promise.all(
      tasks.map((task) =>
        inject('POST', `/api/agent/tasks/${task.task_id}/result`, worker.token, { output: {} }),
      ),
    );
    assert.ok((await Promise.all(invocations)).every((response) => response.statusCode === 200));
  });

  test('403 for another agent on worker endpoints and for anyone but the creator on GET task; 404 unknown', async () => {
    const worker = await queueWorker();
    const stranger = await register(registry);
    const pending = invoke(worker.did);
    const task = await worker.nextTask();
    assert.ok(task);
    for (const action of ['accept', 'result', 'fail']) {
      const payload = action === 'result' ? { output: {} } : action === 'fail' ? { error: 'no' } : undefined;
      const response = await inject(
        'POST',
        `/api/agent/tasks/${task.task_id}/${action}`,
        stranger.token,
        payload,
      );
      assert.equal(response.statusCode, 403, action);
      assert.equal(response.json().code, 'NOT_YOUR_TASK');
      const unknown = await inject(
        'POST',
        `/api/agent/tasks/0190aaaa-0000-7000-8000-000000000000/${action}`,
        worker.token,
        payload,
      );
      assert.equal(unknown.statusCode, 404, action);
      assert.equal(unknown.json().code, 'TASK_NOT_FOUND');
    }
    const byTarget = await inject('GET', `/api/tasks/${task.task_id}`, worker.token);
    assert.equal(byTarget.statusCode, 403);
    assert.equal(byTarget.json().code, 'NOT_TASK_CREATOR');
    assert.equal((await inject('GET', `/api/tasks/${task.task_id}`, stranger.token)).statusCode, 403);
    assert.equal(
      (await inject('GET', '/api/tasks/0190aaaa-0000-7000-8000-000000000000', caller.token)).statusCode,
      404,
    );
    await inject('POST', `/api/agent/tasks/${task.task_id}/result`, worker.token, { output: {} });
    await pending;
  });

  test('bad worker bodies are 400: result without an output object, fail without an error', async () => {
    const worker = await queueWorker();
    const pending = invoke(worker.did);
    const task = await worker.nextTask();
    assert.ok(task);
    for (const [action, payload] of [
      ['result', {}],
      ['result', { output: 'text' }],
      ['fail', {}],
      ['fail', { error: '' }],
    ] as const) {
      const response = await inject(
        'POST',
        `/api/agent/tasks/${task.task_id}/${action}`,
        worker.token,
        payload,
      );
      assert.equal(response.statusCode, 400, `${action} ${JSON.stringify(payload)}`);
    }
    await inject('POST', `/api/agent/tasks/${task.task_id}/result`, worker.token, { output: {} });
    assert.equal((await pending).statusCode, 200);
  });

  describe('invoke answers at once, without waiting out the timeout', () => {
    test('404 for an unknown or deactivated target', async () => {
      const unknown = await invoke(`did:web:localhost%3A8080:agent:${'ab'.repeat(16)}`);
      assert.equal(unknown.statusCode, 404);
      assert.equal(unknown.json().code, 'AGENT_NOT_FOUND');
      const worker = await queueWorker();
      await registry.app.inject({
        method: 'DELETE',
        url: agentPath(worker.did),
        headers: bearer(worker.token),
      });
      assert.equal((await invoke(worker.did)).statusCode, 404);
    });

    test('400 when invocation is disabled, the mode is none, or the capability is not offered', async () => {
      const disabled = await register(registry, undefined, { name: 'Off', capabilities: [{ type: 'echo' }] });
      let response = await invoke(disabled.did);
      assert.equal(response.statusCode, 400);
      assert.equal(response.json().code, 'INVOCATION_DISABLED');
      await inject('PUT', agentPath(disabled.did, '/invocation'), disabled.token, {
        enabled: true,
        delivery_mode: 'none',
      });
      response = await invoke(disabled.did);
      assert.equal(response.statusCode, 400);
      assert.equal(response.json().code, 'INVOCATION_DISABLED');
      await inject('PUT', agentPath(disabled.did, '/invocation'), disabled.token, {
        enabled: false,
        delivery_mode: 'queue',
      });
      assert.equal((await invoke(disabled.did)).statusCode, 400);
      const worker = await queueWorker();
      response = await invoke(worker.did, { capability: 'painting' });
      assert.equal(response.statusCode, 400);
      assert.equal(response.json().code, 'CAPABILITY_NOT_OFFERED');
      assert.match(response.json().details, /echo/);
    });

    test('400 when timeout_ms is out of range or the body is malformed; default is 30000', async () => {
      const worker = await queueWorker();
      for (const timeout of [300_001, 0, -5, 1.5, 'soon']) {
        const response = await invoke(worker.did, { timeout_ms: timeout });
        assert.equal(response.statusCode, 400, String(timeout));
        assert.equal(response.json().code, 'VALIDATION_FAILED');
      }
      for (const payload of [
        { capability: 'echo', input: {} },
        { target_did: worker.did, input: {} },
        { target_did: worker.did, capability: 'echo' },
        { target_did: worker.did, capability: 'echo', input: [1] },
      ]) {
        const response = await inject('POST', '/api/invoke', caller.token, payload);
        assert.equal(response.statusCode, 400, JSON.stringify(payload));
      }
      assert.equal((await invoke('not-a-did')).statusCode, 400);
    });

    test('413 when the input is over 1 MiB of JSON; exactly 1 MiB is accepted', async () => {
      const worker = await queueWorker();
      const envelope = JSON.stringify({ data: '' }).length;
      const exact = { data: 'x'.repeat(1024 * 1024 - envelope) };
      assert.equal(Buffer.byteLength(JSON.stringify(exact)), 1024 * 1024);
      const over = { data: 'x'.repeat(1024 * 1024 - envelope + 1) };
      const rejected = await invoke(worker.did, { input: over });
      assert.equal(rejected.statusCode, 413);
      assert.equal(rejected.json().code, 'PAYLOAD_TOO_LARGE');
      const huge = await invoke(worker.did, { input: { data: 'x'.repeat(2 * 1024 * 1024) } });
      assert.equal(huge.statusCode, 413);
      assert.equal(huge.json().code, 'PAYLOAD_TOO_LARGE');
      const accepted = invoke(worker.did, { input: exact, timeout_ms: 10_000 });
      const task = await worker.nextTask();
      assert.ok(task);
      assert.equal((task.input as { data: string }).data.length, exact.data.length);
      await inject('POST', `/api/agent/tasks/${task.task_id}/result`, worker.token, { output: {} });
      assert.equal((await accepted).statusCode, 200);
    });

    test('400 with the first validation error when the input does not satisfy the input_schema', async () => {
      const worker = await queueWorker([
        {
          type: 'echo',
          input_schema: {
            type: 'object',
            properties: { text: { type: 'string' } },
            required: ['text'],
            additionalProperties: false,
          },
        },
      ]);
      // Validation stops at the first error (collecting all of a large input's errors costs memory).
      const response = await invoke(worker.did, { input: { text: 5 } });
      assert.equal(response.statusCode, 400);
      assert.equal(response.json().code, 'INPUT_SCHEMA_MISMATCH');
      assert.match(response.json().details, /input\/text must be string/);
      const extra = await invoke(worker.did, { input: { text: 'ok', extra: true } });
      assert.match(extra.json().details, /additional properties/);
      const missing = await invoke(worker.did, { input: {} });
      assert.match(missing.json().details, /required property 'text'/);
      await completeNext(worker, invoke(worker.did, { input: { text: 'ok' } }));
    });
  });

  describe('small inputs against small schemas are checked on the event loop, others in a worker', () => {
    const schema = {
      type: 'object',
      properties: { text: { type: 'string' }, count: { type: 'integer' }, padding: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    };
    const padding = 'p'.repeat(5000);

    test('both paths give the same verdicts and the same error text', async () => {
      const worker = await queueWorker([{ type: 'echo', input_schema: schema }]);
      const schemas = registry.ctx.capabilitySchemas;
      const cases: { input: Record<string, unknown>; details: RegExp }[] = [
        { input: { text: 5 }, details: /input\/text must be string/ },
        { input: { text: 'ok', extra: true }, details: /must NOT have additional properties/ },
        { input: {}, details: /must have required property 'text'/ },
        { input: { text: 'ok', count: 1.5 }, details: /input\/count must be integer/ },
      ];
      for (const { input, details } of cases) {
        const before = schemas.inlineValidations;
        const small = await invoke(worker.did, { input });
        assert.equal(schemas.inlineValidations, before + 1, 'a small input is checked inline');
        // The same mistake with a padded input (over 4,096 characters of JSON) goes to a worker.
        const large = await invoke(worker.did, { input: { ...input, padding } });
        assert.equal(schemas.inlineValidations, before + 1, 'a large input is checked in a worker');
        for (const response of [small, large]) {
          assert.equal(response.statusCode, 400);
          assert.equal(response.json().code, 'INPUT_SCHEMA_MISMATCH');
          assert.match(response.json().details, details);
        }
        assert.equal(large.json().details, small.json().details);
      }
      await completeNext(worker, invoke(worker.did, { input: { text: 'ok', count: 2 } }));
    });

    test('a schema with a reference goes to a worker whatever the input size', async () => {
      const worker = await queueWorker([
        {
          type: 'echo',
          input_schema: {
            $defs: { node: { type: 'object', properties: { child: { $ref: '#/$defs/node' } } } },
            $ref: '#/$defs/node',
          },
        },
      ]);
      const before = registry.ctx.capabilitySchemas.inlineValidations;
      const response = await invoke(worker.did, { input: { child: { child: 5 } } });
      assert.equal(response.statusCode, 400);
      assert.match(response.json().details, /input\/child\/child must be object/);
      assert.equal(registry.ctx.capabilitySchemas.inlineValidations, before);
    });
  });

  test('GET /api/tasks/{id} expires a task whose invoker went away', async () => {
    const worker = await queueWorker();
    const response = await invoke(worker.did, { timeout_ms: 100 });
    assert.equal(response.statusCode, 504);
    const taskId = response.json().task_id as string;
    // Re-open it as if its invoker crashed before marking the timeout.
    await registry.ctx.database.db
      .updateTable('tasks')
      .set({ status: 'pending', completed_at: null })
      .where('id', '=', taskId)
      .execute();
    assert.equal(
      (await inject('GET', `/api/tasks/${taskId}`, caller.token)).json().status,
      'pending',
      'not yet past its deadline',
    );
    registry.clock.advance(100);
    assert.equal((await inject('GET', `/api/tasks/${taskId}`, caller.token)).json().status, 'timeout');
  });
});

describe('shutdown ends blocked invocations and long polls cleanly', () => {
  test('a blocked invoke answers 503 with its task id, a long poll answers empty, close returns', async () => {
    const registry = await startRegistry();
    const caller = await register(registry);
    const worker = await register(registry, undefined, { name: 'W', capabilities: [{ type: 'echo' }] });
    await registry.app.inject({
      method: 'PUT',
      url: agentPath(worker.did, '/invocation'),
      headers: bearer(worker.token),
      payload: { enabled: true, delivery_mode: 'queue' },
    });
    const blocked = registry.app.inject({
      method: 'POST',
      url: '/api/invoke',
      headers: bearer(caller.token),
      payload: { target_did: worker.did, capability: 'echo', input: {}, timeout_ms: 300_000 },
    });
    let tasks: unknown[] = [];
    while (tasks.length === 0) {
      tasks = (
        await registry.app.inject({
          method: 'GET',
          url: '/api/agent/tasks?wait=1',
          headers: bearer(worker.token),
        })
      ).json().tasks;
    }
    const stranger = await register(registry);
    const poll = registry.app.inject({
      method: 'GET',
      url: '/api/agent/tasks?wait=60',
      headers: bearer(stranger.token),
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await registry.ctx.stopWaiters();
    const response = await blocked;
    assert.equal(response.statusCode, 503);
    assert.equal(response.json().code, 'SHUTTING_DOWN');
    assert.equal(typeof response.json().task_id, 'string');
    assert.deepEqual((await poll).json(), { tasks: [] });
    await registry.close();
  });
});
