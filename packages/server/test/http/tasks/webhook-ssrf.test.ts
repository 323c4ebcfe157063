import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { HostResolver } from '../../../src/kernel/network-policy.js';
import { createTestDatabase, type TestDatabase, agentPath } from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';
import {
  type HookServer,
  startHook,
  json,
  whsecSecret,
  openRegistry,
  configure,
  webhookAgent,
  invoke,
  assertError,
  assertWebhookFailed,
} from '../../support/webhook-hook.js';

// ---------------------------------------------------------------------------------------------------------
// SSRF: a registry with WEBHOOK_ALLOW_PRIVATE_NETWORKS unset (the default)
// ---------------------------------------------------------------------------------------------------------

describe('webhook SSRF protection', () => {
  test('ALLOW_PRIVATE_NETWORKS, and its earlier name WEBHOOK_ALLOW_PRIVATE_NETWORKS, let a loopback webhook_url in', async (t) => {
    for (const name of ['ALLOW_PRIVATE_NETWORKS', 'WEBHOOK_ALLOW_PRIVATE_NETWORKS']) {
      const registry = await startRegistry({ [name]: 'true' });
      t.after(() => registry.close());
      const agent = await register(registry);
      const response = await configure(registry, agent, {
        enabled: true,
        delivery_mode: 'webhook',
        webhook_url: 'http://127.0.0.1:9/hook',
        webhook_secret: whsecSecret(),
      });
      assert.equal(response.statusCode, 200, `${name}: ${response.body}`);
    }
  });

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
