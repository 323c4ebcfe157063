import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { Webhook } from 'standardwebhooks';
import {
  AgentKey,
  InvocationFailedError,
  RegistryClient,
  WebhookFailedError,
  WebhookVerificationError,
  isRegistryPing,
  verifyWebhook,
  webhookHandler,
  type Profile,
} from '../src/index.js';
import {
  createTestDatabase,
  eventually,
  type RegistryProcess,
  type TestDatabase,
} from '@agent-registry/testkit';
import { registryProcess } from './registry-process.js';

const profile: Profile = {
  name: 'Webhook agent',
  capabilities: [{ type: 'translation' }, { type: 'shout' }],
};

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

describe('verifyWebhook', () => {
  const secret = `whsec_${Buffer.from('a secret of twenty-four!').toString('base64')}`;
  const body = JSON.stringify({ task_id: 't1', capability: 'translation', input: { text: 'hi' } });
  const signed = (payload: string, at = new Date()) => {
    const headers = { 'webhook-id': 't1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)) };
    return { ...headers, 'webhook-signature': new Webhook(secret).sign('t1', at, payload) };
  };

  test('accepts a genuine delivery (string, bytes, Headers) and returns it parsed', () => {
    const headers = signed(body);
    assert.equal(verifyWebhook(secret, body, headers).task_id, 't1');
    assert.equal(
      verifyWebhook(secret, new TextEncoder().encode(body), new Headers(headers)).capability,
      'translation',
    );
  });

  test('refuses a changed body, another secret and an old timestamp', () => {
    const headers = signed(body);
    assert.throws(() => verifyWebhook(secret, body.replace('hi', 'ho'), headers), WebhookVerificationError);
    const other = `whsec_${Buffer.from('another secret of 24 b!!').toString('base64')}`;
    assert.throws(() => verifyWebhook(other, body, headers), WebhookVerificationError);
    const old = signed(body, new Date(Date.now() - 10 * 60 * 1000));
    assert.throws(() => verifyWebhook(secret, body, old), /timestamp/i);
  });
});

describe('webhookHandler refuses replayed deliveries', () => {
  const secret = `whsec_${Buffer.from('a secret of twenty-four!').toString('base64')}`;
  const delivery = (id: string) => {
    const body = JSON.stringify({
      task_id: id,
      capability: 'translation',
      input: { text: id },
      caller_did: 'did:web:x:agent:1',
      target_did: 'did:web:x:agent:2',
      created_at: Date.now(),
      deadline_at: Date.now() + 30_000,
    });
    const at = new Date();
    return {
      body,
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(id, at, body),
      },
    };
  };

  test('over HTTP: the same webhook-id again within the tolerance answers 409 and runs nothing', async () => {
    const ran: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const handler = webhookHandler({
      secret,
      capabilities: {
        translation: async (input) => {
          ran.push(String(input.text));
          if (input.text === 'slow') await released;
          return { text: `fr: ${String(input.text)}` };
        },
      },
    });
    const server = http.createServer((req, res) => void handler.node(req, res));
    const url = await listen(server);
    const post = (sent: ReturnType<typeof delivery>) =>
      fetch(url, { method: 'POST', headers: sent.headers, body: sent.body });
    try {
      const first = delivery('task-1');
      const answer = await post(first);
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), { output: { text: 'fr: task-1' } });
      const replay = await post(first);
      assert.equal(replay.status, 409);
      assert.match(((await replay.json()) as { error: string }).error, /task-1 was already received/);
      assert.deepEqual(ran, ['task-1']);

      // A replay while the first delivery is still running is refused too.
      const slow = delivery('slow');
      const running = post(slow);
      await eventually(() => ran.includes('slow'), 'the slow handler to start');
      assert.equal((await post(slow)).status, 409);
      release();
      assert.equal((await running).status, 200);

      // Another delivery is served as usual.
      assert.equal((await post(delivery('task-2'))).status, 200);
      assert.deepEqual(ran, ['task-1', 'slow', 'task-2']);
    } finally {
      server.close();
    }
  });

  test('memory stays bounded: past maxRememberedIds the oldest id is forgotten first', async () => {
    let runs = 0;
    const handler = webhookHandler({
      secret,
      maxRememberedIds: 2,
      capabilities: { translation: async () => ({ n: ++runs }) },
    });
    const [a, b, c] = [delivery('a'), delivery('b'), delivery('c')];
    for (const sent of [a, b, c]) assert.equal((await handler.handle(sent.body, sent.headers)).status, 200);
    assert.equal((await handler.handle(c.body, c.headers)).status, 409);
    assert.equal((await handler.handle(b.body, b.headers)).status, 409);
    // 'a' was pushed out by 'c': the bound, documented, rather than unbounded growth.
    assert.equal((await handler.handle(a.body, a.headers)).status, 200);
    assert.equal(runs, 4);
  });
});

describe('webhookHandler answers availability probes', () => {
  const secret = `whsec_${Buffer.from('a secret of twenty-four!').toString('base64')}`;
  const ping = (signWith = secret) => {
    const body = JSON.stringify({
      type: 'registry.ping',
      timestamp: new Date().toISOString(),
      data: { target_did: 'did:web:x:agent:1' },
    });
    const at = new Date();
    return {
      body,
      headers: {
        'webhook-id': 'ping_1',
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(signWith).sign('ping_1', at, body),
      },
    };
  };

  test('a signed ping: 200 without running anything, again and again; a forged one: 401', async () => {
    let runs = 0;
    const handler = webhookHandler({ secret, capabilities: { translation: async () => ({ n: ++runs }) } });
    const genuine = ping();
    assert.deepEqual(await handler.handle(genuine.body, genuine.headers), {
      status: 200,
      body: { ok: true },
    });
    assert.equal((await handler.handle(genuine.body, genuine.headers)).status, 200);
    const other = `whsec_${Buffer.from('another secret of 24 b!!').toString('base64')}`;
    const forged = ping(other);
    assert.equal((await handler.handle(forged.body, forged.headers)).status, 401);
    assert.equal(runs, 0);
    assert.ok(isRegistryPing(verifyWebhook(secret, genuine.body, genuine.headers)));
  });
});

describe('webhookHandler against a real registry (SQLite)', () => {
  let database: TestDatabase;
  let registry: RegistryProcess;
  const servers: { close(): unknown }[] = [];
  before(async () => {
    database = await createTestDatabase('sqlite');
    registry = await registryProcess(database);
  });
  after(async () => {
    for (const server of servers) await server.close();
    await registry.stop();
    await database.drop();
  });

  async function webhookAgent(url: string) {
    const client = new RegistryClient({ registry: registry.url, key: AgentKey.generateEd25519() });
    const { did } = await client.register(profile);
    const config = await client.setInvocation({ enabled: true, delivery_mode: 'webhook', webhook_url: url });
    return { client, did, secret: (config as { webhook_secret: string }).webhook_secret };
  }

  async function caller(): Promise<RegistryClient> {
    const client = new RegistryClient({ registry: registry.url, key: AgentKey.generateEd25519() });
    await client.register({ name: 'Caller', capabilities: [{ type: 'calling' }] });
    return client;
  }

  test('node:http: verified deliveries are answered with the output; a thrown error reaches the caller', async () => {
    let secret = '';
    let forged = 0;
    const capabilities = {
      translation: async (input: Record<string, unknown>) => ({ text: `fr: ${String(input.text)}` }),
      shout: async () => {
        throw new Error('voice lost');
      },
    };
    const reporting: { client?: RegistryClient } = {};
    const server = http.createServer((req, res) => {
      const handler = webhookHandler({ secret, capabilities, ...reporting });
      void handler.node(req, res).then(() => {
        if (res.statusCode === 401) forged++;
      });
    });
    servers.push(server);
    const url = await listen(server);
    const agent = await webhookAgent(url);
    secret = agent.secret;
    const invoker = await caller();
    assert.deepEqual(await invoker.invoke(agent.did, 'translation', { text: 'hi' }, { timeoutMs: 20_000 }), {
      text: 'fr: hi',
    });
    // Without a client the failure is a 500: the registry reports WEBHOOK_FAILED.
    await assert.rejects(invoker.invoke(agent.did, 'shout', {}, { timeoutMs: 20_000 }), WebhookFailedError);
    // With the agent's client the handler reports the failure itself: the caller sees its message.
    reporting.client = agent.client;
    await assert.rejects(invoker.invoke(agent.did, 'shout', {}, { timeoutMs: 20_000 }), (error: unknown) => {
      assert.ok(error instanceof InvocationFailedError && !(error instanceof WebhookFailedError));
      assert.match(error.details, /voice lost/);
      return true;
    });
    // A delivery that is not from the registry is refused.
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'x',
        'webhook-timestamp': '1',
        'webhook-signature': 'v1,AAAA',
      },
      body: JSON.stringify({ task_id: 'x', capability: 'translation', input: {} }),
    });
    assert.equal(response.status, 401);
    assert.equal(forged, 1);
  });

  test("the registry's availability probe is verified and answered 200 without running a handler; the agent is online", async () => {
    let secret = '';
    let runs = 0;
    const answered: number[] = [];
    const server = http.createServer((req, res) => {
      const handler = webhookHandler({
        secret,
        capabilities: { translation: async () => ({ text: String(++runs) }) },
      });
      void handler.node(req, res).then(() => answered.push(res.statusCode));
    });
    servers.push(server);
    const url = await listen(server);
    const agent = await webhookAgent(url);
    secret = agent.secret;
    // New webhook agents are probed at the registry's next probe round (every few seconds).
    await eventually(() => answered.length > 0, 'a probe', 60_000);
    assert.deepEqual(answered, [200]);
    assert.equal(runs, 0, 'no capability handler ran for the probe');
    for (let tries = 0; ; tries++) {
      const { availability } = await agent.client.getAgent(agent.did);
      if (availability.status === 'online') break;
      assert.ok(tries < 200, `still ${availability.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  test('Fastify: the same handler behind a raw-body route', async () => {
    let secret = '';
    const app = Fastify();
    servers.push(app);
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) =>
      done(null, body),
    );
    app.post('/hook', (request, reply) =>
      webhookHandler({ secret, capabilities: { translation: async () => ({ via: 'fastify' }) } }).fastify(
        request,
        reply,
      ),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/hook`;
    const agent = await webhookAgent(url);
    secret = agent.secret;
    const invoker = await caller();
    assert.deepEqual(await invoker.invoke(agent.did, 'translation', {}, { timeoutMs: 20_000 }), {
      via: 'fastify',
    });
  });
});
