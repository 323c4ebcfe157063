import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { HostResolver } from '../../../src/kernel/network-policy.js';
import { createTestDatabase, type TestDatabase, agentPath, bearer } from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';

// ---------------------------------------------------------------------------------------------------------
// A real HTTP server on 127.0.0.1 standing in for an agent's webhook. Only these loopback servers of our
// own are ever contacted by the registry in this file.
// ---------------------------------------------------------------------------------------------------------

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
}

type Handler = (received: Received, res: http.ServerResponse) => void;

interface HookServer {
  port: number;
  url(pathname?: string): string;
  received: Received[];
  /** Resolves with the next request this server receives (already recorded in `received`). */
  nextRequest(): Promise<Received>;
  close(): Promise<void>;
}

async function startHook(handler: Handler = (_, res) => res.writeHead(500).end()): Promise<HookServer> {
  const received: Received[] = [];
  const waiting: ((request: Received) => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        raw: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(request);
      for (const resolve of waiting.splice(0)) resolve(request);
      handler(request, res);
    });
  });
  // A response the registry cut off (size limit, deadline) must not crash the test process.
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: (pathname = '/hook') => `http://127.0.0.1:${port}${pathname}`,
    received,
    nextRequest: () => new Promise((resolve) => waiting.push(resolve)),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error === undefined ? resolve() : reject(error))),
      );
    },
  };
}

/** A port on 127.0.0.1 where nothing listens: open a server, note its port, close it. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const json = (res: http.ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

/** node:http headers as the string record `standardwebhooks` expects. */
const stringHeaders = (headers: http.IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );

const whsecSecret = (): string => `whsec_${crypto.randomBytes(32).toString('base64')}`;

// ---------------------------------------------------------------------------------------------------------
// Registries built the way the testkit's startRegistry builds them, but with injectable DNS and a reusable file.
// ---------------------------------------------------------------------------------------------------------

const openRegistry = (database: TestDatabase, env: Record<string, string> = {}, resolveHost?: HostResolver) =>
  startRegistry(env, resolveHost === undefined ? { database } : { database, resolveHost });

// ---------------------------------------------------------------------------------------------------------
// Registry helpers
// ---------------------------------------------------------------------------------------------------------

interface InjectResponse {
  statusCode: number;
  body: string;
  headers: Record<string, unknown>;
  json<T = Record<string, unknown>>(): T;
}

const configure = (
  registry: TestRegistry,
  agent: Registered,
  payload: Record<string, unknown>,
): Promise<InjectResponse> =>
  registry.app.inject({
    method: 'PUT',
    url: agentPath(agent.did, '/invocation'),
    headers: bearer(agent.token),
    payload,
  });

/** Registers an agent and points its webhook at `url`. */
async function webhookAgent(
  registry: TestRegistry,
  url: string,
  secret = whsecSecret(),
): Promise<Registered> {
  const target = await register(registry);
  const response = await configure(registry, target, {
    enabled: true,
    delivery_mode: 'webhook',
    webhook_url: url,
    webhook_secret: secret,
  });
  assert.equal(response.statusCode, 200, response.body);
  return target;
}

const invoke = (
  registry: TestRegistry,
  caller: Registered,
  target: Registered,
  input: Record<string, unknown> = { text: 'hello' },
  timeoutMs = 10_000,
): Promise<InjectResponse> =>
  registry.app.inject({
    method: 'POST',
    url: '/api/invoke',
    headers: bearer(caller.token),
    payload: { target_did: target.did, capability: 'translation', input, timeout_ms: timeoutMs },
  });

const getTask = (registry: TestRegistry, caller: Registered, taskId: string): Promise<InjectResponse> =>
  registry.app.inject({ method: 'GET', url: `/api/tasks/${taskId}`, headers: bearer(caller.token) });

/** Waits until the registry has recorded the webhook's 202 (accepts are not announced to waiters). */
async function untilProcessing(registry: TestRegistry, caller: Registered, taskId: string): Promise<void> {
  for (;;) {
    const task = await getTask(registry, caller, taskId);
    const status = task.json().status;
    if (status === 'processing') return;
    assert.equal(status, 'pending', task.body);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const report = (
  registry: TestRegistry,
  agent: Registered,
  taskId: string,
  verb: 'result' | 'fail',
  payload: Record<string, unknown>,
): Promise<InjectResponse> =>
  registry.app.inject({
    method: 'POST',
    url: `/api/agent/tasks/${taskId}/${verb}`,
    headers: bearer(agent.token),
    payload,
  });

/** Every error is JSON {error, details, code}; a failed invocation (502/504) also names its task. */
function assertError(response: InjectResponse, status: number, code: string): Record<string, unknown> {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/json/);
  const body = response.json();
  assert.equal(typeof body.error, 'string', response.body);
  assert.equal(typeof body.details, 'string', response.body);
  assert.equal(body.code, code, response.body);
  if (status === 502 || status === 504) assert.equal(typeof body.task_id, 'string', response.body);
  return body;
}

/** A failed invocation: 502 WEBHOOK_FAILED, and the task reads as failed with the same reason. */
async function assertWebhookFailed(
  registry: TestRegistry,
  caller: Registered,
  response: InjectResponse,
  details: RegExp,
): Promise<string> {
  const body = assertError(response, 502, 'WEBHOOK_FAILED');
  assert.match(String(body.details), details);
  const task = await getTask(registry, caller, String(body.task_id));
  assert.equal(task.statusCode, 200, task.body);
  assert.equal(task.json().status, 'failed');
  assert.match(String(task.json().error), details);
  assert.equal(typeof task.json().completed_at, 'number');
  return String(body.task_id);
}

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

// ---------------------------------------------------------------------------------------------------------
// SSRF: a registry with WEBHOOK_ALLOW_PRIVATE_NETWORKS unset (the default)
// ---------------------------------------------------------------------------------------------------------

describe('webhook SSRF protection', () => {
  test('configuring a loopback, private, link-local or metadata webhook_url: 400 WEBHOOK_URL_FORBIDDEN, no connection', async (t) => {
    const registry = await startRegistry();
    t.after(() => registry.close());
    const hook = await startHook((_, res) => json(res, 200, { output: { reached: true } }));
    t.after(() => hook.close());
    const agent = await register(registry);

    const forbidden = [
      'http://127.0.0.1:9/x',
      'http://10.0.0.1/x',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/x',
      'http://localhost:9/x',
      // Our own live server, by every loopback spelling: it must never be contacted.
      hook.url('/x'),
      `http://localhost:${hook.port}/x`,
      `http://[::ffff:127.0.0.1]:${hook.port}/x`,
      `http://2130706433:${hook.port}/x`,
      // More non-public ranges.
      'http://0.0.0.0/x',
      'http://192.168.1.1/x',
      'http://172.16.0.1/x',
      'http://100.64.0.1/x',
      'http://[fd00::1]/x',
      'http://[fe80::1]/x',
    ];
    for (const url of forbidden) {
      const response = await configure(registry, agent, {
        enabled: true,
        delivery_mode: 'webhook',
        webhook_url: url,
        webhook_secret: whsecSecret(),
      });
      const body = assertError(response, 400, 'WEBHOOK_URL_FORBIDDEN');
      assert.match(String(body.details), /non-public/, url);
    }
    assert.equal(hook.received.length, 0, 'no request reached the local server');
    const config = await registry.app.inject({ method: 'GET', url: agentPath(agent.did, '/invocation') });
    assert.deepEqual(config.json(), { enabled: false, delivery_mode: 'none' });

    // A public address is accepted (configuration never connects).
    const allowed = await configure(registry, agent, {
      enabled: true,
      delivery_mode: 'webhook',
      webhook_url: 'https://93.184.216.34/hook',
      webhook_secret: whsecSecret(),
    });
    assert.equal(allowed.statusCode, 200, allowed.body);
  });

  describe('checked again at delivery, after DNS resolution', () => {
    const lookups: string[] = [];
    let rebindCalls = 0;
    let goneCalls = 0;
    const resolveHost: HostResolver = async (hostname) => {
      lookups.push(hostname);
      if (hostname === 'rebind.test') return ++rebindCalls === 1 ? ['93.184.216.34'] : ['127.0.0.1'];
      if (hostname === 'gone.test') {
        if (++goneCalls === 1) return ['93.184.216.35'];
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      }
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    };

    let database: TestDatabase;
    let registry: TestRegistry;
    let hook: HookServer;
    before(async () => {
      database = await createTestDatabase();
      registry = await openRegistry(database, {}, resolveHost);
      hook = await startHook((_, res) => json(res, 200, { output: { reached: true } }));
    });
    after(async () => {
      await hook.close();
      await registry.close();
      await database.drop();
    });

    test('DNS rebinding: public when configured, loopback at delivery -> 502, nothing reaches the server', async () => {
      const target = await webhookAgent(registry, `http://rebind.test:${hook.port}/hook`);
      assert.equal(rebindCalls, 1, 'the configuration check resolved the host once');
      const caller = await register(registry);

      const response = await invoke(registry, caller, target);
      await assertWebhookFailed(registry, caller, response, /refused.*non-public/);
      assert.ok(rebindCalls >= 2, 'delivery resolved the host again');
      assert.equal(hook.received.length, 0, 'no request reached the local server');
    });

    test('a host that resolved when configured but no longer resolves: 502, not a hang', async () => {
      const target = await webhookAgent(registry, `http://gone.test:${hook.port}/hook`);
      assert.equal(goneCalls, 1);
      const caller = await register(registry);

      const response = await invoke(registry, caller, target, { text: 'hello' }, 30_000);
      await assertWebhookFailed(registry, caller, response, /resolve/);
      assert.ok(goneCalls >= 2);
      assert.equal(hook.received.length, 0);
    });

    test('a loopback IP literal stored while private networks were allowed is refused at delivery', async (t) => {
      // Configure on a registry that allows private networks, then restart the same database without it.
      const database = await createTestDatabase();
      t.after(() => database.drop());
      const permissive = await openRegistry(database, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
      let target: Registered;
      let caller: Registered;
      try {
        target = await webhookAgent(permissive, hook.url('/literal'));
        caller = await register(permissive);
      } finally {
        await permissive.close();
      }
      const strict = await openRegistry(database);
      t.after(() => strict.close());

      const response = await invoke(strict, caller, target);
      await assertWebhookFailed(strict, caller, response, /refused.*non-public/);
      assert.equal(
        hook.received.filter((request) => request.url === '/literal').length,
        0,
        'no request reached the local server',
      );
    });
  });
});
