import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { register, startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import {
  type Received,
  type InjectResponse,
  startHook,
  closedPort,
  json,
  stringHeaders,
  whsecSecret,
  webhookAgent,
  invoke,
  getTask,
  untilProcessing,
  report,
  assertError,
  assertWebhookFailed,
} from '../../support/webhook-hook.js';

// ---------------------------------------------------------------------------------------------------------
// Delivery against a registry that may call private networks (local development and tests)
// ---------------------------------------------------------------------------------------------------------

describe('webhook delivery', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  });
  after(() => registry.close());

  describe('happy path, signed per Standard Webhooks', () => {
    test('whsec_ secret: the receiver verifies with standardwebhooks and its {output} completes the task', async (t) => {
      const secret = whsecSecret();
      const hook = await startHook((request, res) => {
        try {
          const payload = new Webhook(secret).verify(request.raw, stringHeaders(request.headers)) as {
            input: { text: string };
          };
          json(res, 200, { output: { translated: `bonjour (${payload.input.text})` } });
        } catch {
          json(res, 401, { error: 'bad signature' });
        }
      });
      t.after(() => hook.close());
      const target = await webhookAgent(registry, hook.url(), secret);
      const caller = await register(registry);

      const response = await invoke(registry, caller, target, { text: 'hello' }, 20_000);
      assert.equal(response.statusCode, 200, response.body);
      const result = response.json<{ task_id: string; status: string; output: unknown }>();
      assert.equal(result.status, 'completed');
      assert.equal(typeof result.task_id, 'string');
      assert.deepEqual(result.output, { translated: 'bonjour (hello)' });

      assert.equal(hook.received.length, 1);
      const [request] = hook.received as [Received];
      assert.equal(request.method, 'POST');
      assert.equal(request.url, '/hook');
      assert.match(String(request.headers['content-type']), /^application\/json/);
      assert.equal(typeof request.headers['webhook-id'], 'string');
      assert.match(String(request.headers['webhook-timestamp']), /^\d+$/);
      assert.match(String(request.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);

      const body = JSON.parse(request.raw) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), [
        'caller_did',
        'capability',
        'created_at',
        'deadline_at',
        'input',
        'target_did',
        'task_id',
      ]);
      assert.equal(body.task_id, result.task_id);
      assert.equal(body.capability, 'translation');
      assert.deepEqual(body.input, { text: 'hello' });
      assert.equal(body.caller_did, caller.did);
      assert.equal(body.target_did, target.did);
      assert.equal(body.created_at, registry.clock.now());
      assert.equal(body.deadline_at, (body.created_at as number) + 20_000);

      // Verified with the library, over the exact bytes received; it hands back the parsed payload.
      const headers = stringHeaders(request.headers);
      assert.deepEqual(new Webhook(secret).verify(request.raw, headers), body);
      // A different secret, a tampered body or a tampered id do not verify: the check can fail.
      assert.throws(() => new Webhook(whsecSecret()).verify(request.raw, headers), WebhookVerificationError);
      assert.throws(
        () => new Webhook(secret).verify(request.raw.replace('hello', 'HELLO'), headers),
        WebhookVerificationError,
      );
      assert.throws(
        () => new Webhook(secret).verify(request.raw, { ...headers, 'webhook-id': 'another-id' }),
        WebhookVerificationError,
      );

      const task = await getTask(registry, caller, result.task_id);
      assert.equal(task.statusCode, 200, task.body);
      const view = task.json();
      assert.equal(view.task_id, result.task_id);
      assert.equal(view.status, 'completed');
      assert.equal(view.capability, 'translation');
      assert.equal(view.target_did, target.did);
      assert.deepEqual(view.output, { translated: 'bonjour (hello)' });
      assert.equal(typeof view.completed_at, 'number');
      assert.equal(view.error, undefined);
    });

    test('a raw (non-whsec) secret is the HMAC key itself: verify with { format: "raw" }', async (t) => {
      const secret = 'a-very-long-shared-secret-for-raw-mode';
      const hook = await startHook((request, res) => {
        try {
          new Webhook(secret, { format: 'raw' }).verify(request.raw, stringHeaders(request.headers));
          json(res, 200, { output: { ok: true } });
        } catch {
          json(res, 401, { error: 'bad signature' });
        }
      });
      t.after(() => hook.close());
      const target = await webhookAgent(registry, hook.url('/raw'), secret);
      const caller = await register(registry);

      const response = await invoke(registry, caller, target);
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json().output, { ok: true });

      const [request] = hook.received as [Received];
      const headers = stringHeaders(request.headers);
      assert.doesNotThrow(() => new Webhook(secret, { format: 'raw' }).verify(request.raw, headers));
      // Without { format: "raw" } the library reads the secret as base64 (it is not): it must not verify.
      assert.throws(() => new Webhook(secret).verify(request.raw, headers));
      // A different raw secret gives another key.
      assert.throws(
        () => new Webhook(`${secret}-tampered`, { format: 'raw' }).verify(request.raw, headers),
        WebhookVerificationError,
      );
    });

    test('a tampered secret does not verify, so a receiver that checks refuses and the invoke fails', async (t) => {
      const configured = whsecSecret();
      const receiverBelieves = whsecSecret();
      const hook = await startHook((request, res) => {
        try {
          new Webhook(receiverBelieves).verify(request.raw, stringHeaders(request.headers));
          json(res, 200, { output: { accepted: true } });
        } catch {
          json(res, 401, { error: 'bad signature' });
        }
      });
      t.after(() => hook.close());
      const target = await webhookAgent(registry, hook.url(), configured);
      const caller = await register(registry);

      const response = await invoke(registry, caller, target);
      await assertWebhookFailed(registry, caller, response, /401/);
      const [request] = hook.received as [Received];
      assert.throws(
        () => new Webhook(receiverBelieves).verify(request.raw, stringHeaders(request.headers)),
        WebhookVerificationError,
      );
    });
  });

  describe('202: the agent reports later', () => {
    test('202, then POST /result from processing: the blocked invoke answers 200 with that output', async (t) => {
      let reportAck: Promise<InjectResponse> | undefined;
      const hook = await startHook((request, res) => {
        const { task_id: taskId } = JSON.parse(request.raw) as { task_id: string };
        res.writeHead(202).end();
        // Report only once the registry has recorded the 202 (pending -> processing).
        reportAck = (async () => {
          await untilProcessing(registry, caller, taskId);
          return report(registry, target, taskId, 'result', { output: { translated: 'bonjour' } });
        })();
      });
      t.after(() => hook.close());
      const target = await webhookAgent(registry, hook.url());
      const caller = await register(registry);

      const response = await invoke(registry, caller, target);
      assert.equal(response.statusCode, 200, response.body);
      const result = response.json();
      assert.equal(result.status, 'completed');
      assert.deepEqual(result.output, { translated: 'bonjour' });

      assert.ok(reportAck !== undefined, 'the agent reported after the 202 was recorded');
      const ack = await reportAck;
      assert.equal(ack.statusCode, 200, ack.body);
      assert.deepEqual(ack.json(), { task_id: result.task_id, status: 'completed' });

      const task = await getTask(registry, caller, String(result.task_id));
      assert.equal(task.json().status, 'completed');
      assert.deepEqual(task.json().output, { translated: 'bonjour' });

      // The task is closed: a second report gets 409.
      const again = await report(registry, target, String(result.task_id), 'result', { output: { x: 1 } });
      assertError(again, 409, 'TASK_NOT_OPEN');
    });

    test('202, then POST /fail: the invoke answers 502 AGENT_ERROR with the reported error', async (t) => {
      let reportAck: Promise<InjectResponse> | undefined;
      const hook = await startHook((request, res) => {
        const { task_id: taskId } = JSON.parse(request.raw) as { task_id: string };
        res.writeHead(202).end();
        reportAck = (async () => {
          await untilProcessing(registry, caller, taskId);
          return report(registry, target, taskId, 'fail', { error: 'dictionary unavailable' });
        })();
      });
      t.after(() => hook.close());
      const target = await webhookAgent(registry, hook.url());
      const caller = await register(registry);

      const response = await invoke(registry, caller, target);
      const body = assertError(response, 502, 'AGENT_ERROR');
      assert.match(String(body.details), /dictionary unavailable/);

      assert.ok(reportAck !== undefined);
      const ack = await reportAck;
      assert.equal(ack.statusCode, 200, ack.body);
      assert.deepEqual(ack.json(), { task_id: body.task_id, status: 'failed' });

      const task = await getTask(registry, caller, String(body.task_id));
      assert.equal(task.json().status, 'failed');
      assert.equal(task.json().error, 'dictionary unavailable');
    });
  });

  describe('failures give 502 WEBHOOK_FAILED (no answer by the deadline: 504), never a pending task', () => {
    test('the webhook answers 500; a late result then gets 409', async (t) => {
      const hook = await startHook((_, res) => json(res, 500, { error: 'boom' }));
      t.after(() => hook.close());
      const target = await webhookAgent(registry, hook.url());
      const caller = await register(registry);

      const response = await invoke(registry, caller, target);
      const taskId = await assertWebhookFailed(registry, caller, response, /500/);
      assert.equal(hook.received.length, 1);

      const late = await report(registry, target, taskId, 'result', { output: { too: 'late' } });
      assertError(late, 409, 'TASK_NOT_OPEN');
    });

    test('the webhook never answers: 504 INVOCATION_TIMEOUT at the deadline, and the task is timeout', async (t) => {
      const hook = await startHook(() => {
        // Hang: never write a response. close() destroys the connection.
      });
      t.after(() => hook.close());
      const target = await webhookAgent(registry, hook.url());
      const caller = await register(registry);

      const response = await invoke(registry, caller, target, { text: 'hello' }, 500);
      const body = assertError(response, 504, 'INVOCATION_TIMEOUT');
      assert.equal(hook.received.length, 1);
      const task = await getTask(registry, caller, String(body.task_id));
      assert.equal(task.statusCode, 200, task.body);
      assert.equal(task.json().status, 'timeout');
      assert.equal(task.json().error, undefined, 'a timeout is not a webhook failure');

      const late = await report(registry, target, String(body.task_id), 'result', {
        output: { too: 'late' },
      });
      assert.equal(late.statusCode, 409, late.body);
    });

    test('the connection is refused', async () => {
      const port = await closedPort();
      const target = await webhookAgent(registry, `http://127.0.0.1:${port}/hook`);
      const caller = await register(registry);

      const response = await invoke(registry, caller, target);
      await assertWebhookFailed(registry, caller, response, /refused/);
    });

    test('a 2xx answer without an {"output": {...}} object', async (t) => {
      const answers: [number, string][] = [
        [200, JSON.stringify({ result: { translated: 'bonjour' } })],
        [200, JSON.stringify({ output: 'bonjour' })],
        [200, JSON.stringify({ output: ['bonjour'] })],
        [200, JSON.stringify({ output: null })],
        [200, 'bonjour'],
        [201, ''],
        [204, ''],
      ];
      let next = 0;
      const hook = await startHook((_, res) => {
        const [status, body] = answers[next++]!;
        res.writeHead(status, { 'content-type': 'application/json' }).end(body);
      });
      t.after(() => hook.close());
      const target = await webhookAgent(registry, hook.url());
      const caller = await register(registry);

      for (const [status, body] of answers) {
        const response = await invoke(registry, caller, target);
        assert.equal(response.statusCode, 502, `${status} ${body}: ${response.body}`);
        await assertWebhookFailed(registry, caller, response, new RegExp(`HTTP ${status}`));
      }
      assert.equal(hook.received.length, answers.length);
    });

    test('a redirect is not followed', async (t) => {
      const elsewhere = await startHook((_, res) => json(res, 200, { output: { redirected: true } }));
      t.after(() => elsewhere.close());
      const hook = await startHook((_, res) => res.writeHead(302, { location: elsewhere.url() }).end());
      t.after(() => hook.close());
      const target = await webhookAgent(registry, hook.url());
      const caller = await register(registry);

      const response = await invoke(registry, caller, target);
      await assertWebhookFailed(registry, caller, response, /302/);
      assert.equal(hook.received.length, 1);
      assert.equal(elsewhere.received.length, 0, 'the redirect target got no request');
    });

    test('a response body over the limit (~1.1 MiB)', async (t) => {
      const padding = 'x'.repeat(Math.ceil(1.1 * 1024 * 1024));
      const hook = await startHook((_, res) => {
        res.on('error', () => {}); // the registry hangs up mid-body
        json(res, 200, { output: { padding } });
      });
      t.after(() => hook.close());
      const target = await webhookAgent(registry, hook.url());
      const caller = await register(registry);

      const response = await invoke(registry, caller, target);
      await assertWebhookFailed(registry, caller, response, /too large/);
    });
  });
});
