import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { agentPath, bearer, defaultProfile } from '@agent-registry/testkit';
import { register, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';
import { bearerInject, startWithAgent } from '../../../support/registry-setup.js';

describe('attacks found in review stay fixed', () => {
  let registry: TestRegistry;
  let caller: Registered;
  before(async () => {
    ({ registry, agent: caller } = await startWithAgent());
  });
  after(() => registry.close());

  const inject = bearerInject(() => registry);

  test('a small-order Ed25519 public key (signatures verify for any message) is refused', async () => {
    const identity = `01${'00'.repeat(31)}`;
    const response = await inject('POST', '/api/agents/register', undefined, {
      public_key: identity,
      profile: defaultProfile(),
      timestamp: registry.clock.now(),
      signature: `01${'00'.repeat(63)}`,
    });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().code, 'INVALID_PUBLIC_KEY');
    assert.match(response.json().details, /small-order/);
  });

  test('an Ed25519 public key off the curve is refused as such, whatever else is wrong with the body', async () => {
    // y = 2 has no x on edwards25519: not a point.
    const offCurve = `02${'00'.repeat(31)}`;
    for (const timestamp of [registry.clock.now(), registry.clock.now() - 60 * 60 * 1000]) {
      const response = await inject('POST', '/api/agents/register', undefined, {
        public_key: offCurve,
        profile: defaultProfile(),
        timestamp,
        signature: `01${'00'.repeat(63)}`,
      });
      assert.equal(response.statusCode, 400);
      assert.equal(response.json().code, 'INVALID_PUBLIC_KEY');
      assert.match(response.json().details, /not a valid Ed25519 point encoding/);
    }
  });

  test('an input_schema pattern that cannot run in linear time (lookahead) is refused when published', async () => {
    const { did, token } = await register(registry);
    const response = await inject('PUT', agentPath(did), token, {
      capabilities: [
        {
          type: 'echo',
          input_schema: { type: 'object', properties: { s: { type: 'string', pattern: '^(?=a)a+$' } } },
        },
      ],
    });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().code, 'INVALID_CAPABILITY_SCHEMA');
    assert.match(response.json().details, /RE2/);
    const safe = await inject('PUT', agentPath(did), token, {
      capabilities: [
        {
          type: 'echo',
          input_schema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } },
        },
      ],
    });
    assert.equal(safe.statusCode, 200, safe.body);
  });

  test('deeply nested JSON is a 400, not a stack overflow', async () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const response = await registry.app.inject({
      method: 'POST',
      url: '/api/invoke',
      headers: { ...bearer(caller.token), 'content-type': 'application/json' },
      payload: `{"target_did":"x","capability":"echo","input":{"a":${deep}}}`,
    });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().code, 'JSON_TOO_DEEP');
    const braces = '{"a":'.repeat(65) + '1' + '}'.repeat(65);
    const profile = await registry.app.inject({
      method: 'POST',
      url: '/api/agents/register',
      headers: { 'content-type': 'application/json' },
      payload: braces,
    });
    assert.equal(profile.json().code, 'JSON_TOO_DEEP');
    const brackets = '"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["';
    const inString = await registry.app.inject({
      method: 'POST',
      url: '/api/agents/register',
      headers: { 'content-type': 'application/json' },
      payload: `{"public_key": ${brackets}}`,
    });
    assert.equal(inString.json().code, 'VALIDATION_FAILED', 'brackets inside strings do not count');
  });

  test('anonymous requests get 401 before their body is validated', async () => {
    for (const [method, url] of [
      ['POST', '/api/invoke'],
      ['POST', '/api/agent/tasks/x/result'],
      ['POST', '/api/agent/tasks/x/fail'],
      ['PUT', agentPath(caller.did)],
      ['PUT', agentPath(caller.did, '/invocation')],
    ] as const) {
      const response = await inject(method, url, undefined, { junk: true });
      assert.equal(response.statusCode, 401, `${method} ${url}: ${response.body}`);
    }
  });

  describe('tasks whose invoker is gone', () => {
    let worker: Registered;
    before(async () => {
      worker = await register(registry, undefined, { name: 'W', capabilities: [{ type: 'echo' }] });
      await inject('PUT', agentPath(worker.did, '/invocation'), worker.token, {
        enabled: true,
        delivery_mode: 'queue',
      });
    });

    async function orphanedTask(): Promise<string> {
      // A task left open past its deadline, as when the invoking node died.
      const response = await inject('POST', '/api/invoke', caller.token, {
        target_did: worker.did,
        capability: 'echo',
        input: {},
        timeout_ms: 100,
      });
      assert.equal(response.statusCode, 504);
      const taskId = response.json().task_id as string;
      await registry.ctx.database.db
        .updateTable('tasks')
        .set({ status: 'processing', completed_at: null })
        .where('id', '=', taskId)
        .execute();
      registry.clock.advance(1000);
      return taskId;
    }

    test('a result after the deadline is 409 TASK_EXPIRED and the task becomes timeout', async () => {
      const taskId = await orphanedTask();
      const late = await inject('POST', `/api/agent/tasks/${taskId}/result`, worker.token, {
        output: { late: true },
      });
      assert.equal(late.statusCode, 409);
      assert.equal(late.json().code, 'TASK_EXPIRED');
      const view = (await inject('GET', `/api/tasks/${taskId}`, caller.token)).json();
      assert.equal(view.status, 'timeout');
      assert.equal(view.output, undefined);
    });

    test('a fail after the deadline is 409 too', async () => {
      const taskId = await orphanedTask();
      const late = await inject('POST', `/api/agent/tasks/${taskId}/fail`, worker.token, { error: 'late' });
      assert.equal(late.statusCode, 409);
      assert.equal(late.json().code, 'TASK_EXPIRED');
    });

    test('an output over 1 MiB is 413', async () => {
      const pending = inject('POST', '/api/invoke', caller.token, {
        target_did: worker.did,
        capability: 'echo',
        input: {},
        timeout_ms: 10_000,
      });
      let tasks: { task_id: string }[] = [];
      while (tasks.length === 0)
        tasks = (await inject('GET', '/api/agent/tasks?wait=2', worker.token)).json().tasks;
      const id = tasks[0]!.task_id;
      const big = await inject('POST', `/api/agent/tasks/${id}/result`, worker.token, {
        output: { data: 'x'.repeat(1024 * 1024) },
      });
      assert.equal(big.statusCode, 413);
      assert.equal(big.json().code, 'PAYLOAD_TOO_LARGE');
      assert.equal(
        (await inject('POST', `/api/agent/tasks/${id}/result`, worker.token, { output: { ok: 1 } }))
          .statusCode,
        200,
      );
      assert.equal((await pending).statusCode, 200);
    });
  });

  test('IPv4-compatible IPv6 webhook hosts are refused like the IPv4 they embed', async () => {
    const { did, token } = await register(registry);
    for (const host of ['[::7f00:1]', '[::a9fe:a9fe]', '[64:ff9b::a00:1]']) {
      const response = await inject('PUT', agentPath(did, '/invocation'), token, {
        enabled: true,
        delivery_mode: 'webhook',
        webhook_url: `http://${host}/hook`,
      });
      assert.equal(response.statusCode, 400, host);
      assert.equal(response.json().code, 'WEBHOOK_URL_FORBIDDEN');
    }
  });
});
