import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { agentPath, bearer, defaultProfile, secp256k1Agent } from '@agent-registry/testkit';
import { register, startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';

describe('agent profiles', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry();
  });
  after(() => registry.close());

  const get = (url: string) => registry.app.inject({ method: 'GET', url });
  const put = (url: string, token: string, payload: Record<string, unknown>) =>
    registry.app.inject({ method: 'PUT', url, headers: bearer(token), payload });
  const del = (url: string, token: string) =>
    registry.app.inject({ method: 'DELETE', url, headers: bearer(token) });

  describe('GET /api/agents/{did}', () => {
    test('200 with the full profile, by URL-encoded and by raw DID', async () => {
      const { did, agent } = await register(registry);
      const encoded = await get(agentPath(did));
      assert.equal(encoded.statusCode, 200, encoded.body);
      const profile = encoded.json();
      assert.equal(profile.did, did);
      assert.equal(profile.name, 'Translator');
      assert.equal(profile.description, 'Translates text between languages');
      assert.equal(profile.public_key, agent.publicKey);
      assert.equal(profile.key_type, 'ed25519');
      assert.deepEqual(profile.capabilities, defaultProfile().capabilities);
      assert.deepEqual(profile.tags, ['language']);
      assert.equal(profile.status, 'active');
      assert.equal(profile.invocation_enabled, false);
      assert.equal(profile.delivery_mode, 'none');
      assert.equal(profile.average_rating, 0);
      assert.equal(profile.reputation_score, 0);
      assert.equal(profile.total_reviews, 0);
      assert.equal(profile.created_at, registry.clock.now());
      assert.equal(profile.updated_at, registry.clock.now());
      assert.ok(Array.isArray(profile.endpoints));

      const raw = await get(`/api/agents/${did}`);
      assert.equal(raw.statusCode, 200, raw.body);
      assert.deepEqual(raw.json(), profile);
    });

    test('did:pkh profiles answer for any letter case of the address', async () => {
      const agent = secp256k1Agent();
      const { did } = await register(registry, agent);
      const lower = did.replace(agent.wallet.address, agent.wallet.address.toLowerCase());
      const response = await get(agentPath(lower));
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().did, did);
      assert.equal(response.json().chain_id, 'eip155:1');
    });

    test('400 for a missing or malformed DID, 404 for an unknown one', async () => {
      for (const bad of ['not-a-did', 'did:key:z6Mkabc', 'did:web:localhost%3A8080:agent:xyz']) {
        const response = await get(agentPath(bad));
        assert.equal(response.statusCode, 400, `${bad}: ${response.body}`);
        assert.equal(response.json().code, 'INVALID_DID');
      }
      const missing = await get('/api/agents/%20');
      assert.equal(missing.statusCode, 400);
      const unknown = await get(agentPath(`did:web:localhost%3A8080:agent:${'ab'.repeat(16)}`));
      assert.equal(unknown.statusCode, 404);
      assert.equal(unknown.json().code, 'AGENT_NOT_FOUND');
    });
  });

  describe('PUT /api/agents/{did}', () => {
    test('200 updates given fields, leaves absent and null ones, clears with ""', async () => {
      const { did, token } = await register(registry);
      registry.clock.advance(1000);
      const response = await put(agentPath(did), token, {
        name: 'Renamed',
        description: null,
        website: 'https://agent.example',
        tags: ['a', 'b'],
        capabilities: [{ type: 'coding', description: 'writes code' }],
      });
      assert.equal(response.statusCode, 200, response.body);
      const profile = response.json();
      assert.equal(profile.name, 'Renamed');
      assert.equal(profile.description, 'Translates text between languages');
      assert.equal(profile.website, 'https://agent.example');
      assert.deepEqual(profile.tags, ['a', 'b']);
      assert.deepEqual(profile.capabilities, [{ type: 'coding', description: 'writes code' }]);
      assert.equal(profile.updated_at, registry.clock.now());
      assert.ok(profile.updated_at > profile.created_at);

      const cleared = await put(agentPath(did), token, { description: '', website: '' });
      assert.equal(cleared.statusCode, 200);
      assert.equal(cleared.json().description, null);
      assert.equal(cleared.json().website, null);
      assert.deepEqual((await get(agentPath(did))).json(), cleared.json());
    });

    test('400 for values that break the registration limits, and nothing is written', async () => {
      const { did, token } = await register(registry);
      const before = (await get(agentPath(did))).json();
      const cases: [Record<string, unknown>, string][] = [
        [{ name: '' }, 'VALIDATION_FAILED'],
        [{ name: 'n'.repeat(101) }, 'VALIDATION_FAILED'],
        [{ description: 'd'.repeat(1001) }, 'VALIDATION_FAILED'],
        [{ capabilities: [] }, 'VALIDATION_FAILED'],
        [{ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'VALIDATION_FAILED'],
        [{ tags: ['x'.repeat(51)] }, 'VALIDATION_FAILED'],
        [{ avatar: 'ftp://x.example/a.png' }, 'INVALID_URL'],
        [{ website: 'nope' }, 'INVALID_URL'],
        [
          { name: 'ok', capabilities: [{ type: 'x', output_schema: { type: 12 } }] },
          'INVALID_CAPABILITY_SCHEMA',
        ],
      ];
      for (const [payload, code] of cases) {
        const response = await put(agentPath(did), token, payload);
        assert.equal(response.statusCode, 400, `${JSON.stringify(payload).slice(0, 60)}: ${response.body}`);
        assert.equal(response.json().code, code);
      }
      assert.deepEqual((await get(agentPath(did))).json(), before);
    });

    test('401 without a token, 403 for another agent, 404 for an unknown agent', async () => {
      const owner = await register(registry);
      const other = await register(registry);
      const noToken = await registry.app.inject({
        method: 'PUT',
        url: agentPath(owner.did),
        payload: { name: 'x' },
      });
      assert.equal(noToken.statusCode, 401);
      assert.equal(noToken.json().code, 'TOKEN_MISSING');
      const forbidden = await put(agentPath(owner.did), other.token, { name: 'hijacked' });
      assert.equal(forbidden.statusCode, 403);
      assert.equal(forbidden.json().code, 'NOT_OWNER');
      assert.equal((await get(agentPath(owner.did))).json().name, 'Translator');
      const unknown = await put(agentPath(`did:web:localhost%3A8080:agent:${'cd'.repeat(16)}`), other.token, {
        name: 'x',
      });
      assert.equal(unknown.statusCode, 404);
    });
  });

  describe('DELETE /api/agents/{did}', () => {
    test('200 deactivates and keeps the data; a second DELETE is 404', async () => {
      const { did, token } = await register(registry);
      const response = await del(agentPath(did), token);
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json(), { did, status: 'deactivated', deactivated_at: registry.clock.now() });
      const profile = await get(agentPath(did));
      assert.equal(profile.statusCode, 200);
      assert.equal(profile.json().status, 'deactivated');
      assert.equal(profile.json().name, 'Translator');
      const again = await del(agentPath(did), token);
      assert.equal(again.statusCode, 404);
      assert.equal(again.json().code, 'AGENT_NOT_FOUND');
    });

    test('401 without a token, 403 for another agent, 404 for an unknown agent', async () => {
      const owner = await register(registry);
      const other = await register(registry);
      assert.equal(
        (await registry.app.inject({ method: 'DELETE', url: agentPath(owner.did) })).statusCode,
        401,
      );
      const forbidden = await del(agentPath(owner.did), other.token);
      assert.equal(forbidden.statusCode, 403);
      assert.equal((await get(agentPath(owner.did))).json().status, 'active');
      assert.equal(
        (await del(agentPath(`did:web:localhost%3A8080:agent:${'ef'.repeat(16)}`), other.token)).statusCode,
        404,
      );
    });
  });

  describe('invocation config', () => {
    test('GET defaults to disabled / none; PUT stores queue and webhook modes', async () => {
      const { did, token } = await register(registry);
      const initial = await get(agentPath(did, '/invocation'));
      assert.equal(initial.statusCode, 200);
      assert.deepEqual(initial.json(), { enabled: false, delivery_mode: 'none' });

      const queue = await put(agentPath(did, '/invocation'), token, {
        enabled: true,
        delivery_mode: 'queue',
      });
      assert.equal(queue.statusCode, 200, queue.body);
      assert.deepEqual(queue.json(), { enabled: true, delivery_mode: 'queue', webhook_url: null });
      assert.deepEqual((await get(agentPath(did, '/invocation'))).json(), {
        enabled: true,
        delivery_mode: 'queue',
      });
      const profile = (await get(agentPath(did))).json();
      assert.equal(profile.invocation_enabled, true);
      assert.equal(profile.delivery_mode, 'queue');

      const secret = 'a-very-long-shared-secret';
      const webhook = await put(agentPath(did, '/invocation'), token, {
        enabled: true,
        delivery_mode: 'webhook',
        webhook_url: 'https://agent.example/hook',
        webhook_secret: secret,
      });
      assert.equal(webhook.statusCode, 200, webhook.body);
      assert.deepEqual(webhook.json(), {
        enabled: true,
        delivery_mode: 'webhook',
        webhook_url: 'https://agent.example/hook',
        probes: true,
      });
      const publicView = await get(agentPath(did, '/invocation'));
      assert.deepEqual(publicView.json(), { enabled: true, delivery_mode: 'webhook', probes: true });
      assert.ok(!publicView.body.includes(secret));
      assert.ok(!(await get(agentPath(did))).body.includes(secret));
    });

    test('webhook mode without a secret gets a generated whsec_ secret, shown once', async () => {
      const { did, token } = await register(registry);
      const response = await put(agentPath(did, '/invocation'), token, {
        enabled: true,
        delivery_mode: 'webhook',
        webhook_url: 'http://agent.example/hook',
      });
      assert.equal(response.statusCode, 200, response.body);
      const secret = response.json().webhook_secret as string;
      assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
      assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32);
      const again = await put(agentPath(did, '/invocation'), token, {
        enabled: false,
        delivery_mode: 'webhook',
      });
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json().webhook_secret, undefined);
      assert.equal(again.json().webhook_url, 'http://agent.example/hook');
    });

    test('400 for webhook mode without a URL, a non-http URL, a bad secret, an unknown mode', async () => {
      const { did, token } = await register(registry);
      const cases: [Record<string, unknown>, string][] = [
        [{ enabled: true, delivery_mode: 'webhook' }, 'WEBHOOK_URL_REQUIRED'],
        [{ enabled: true, delivery_mode: 'webhook', webhook_url: 'ftp://agent.example' }, 'INVALID_URL'],
        [
          {
            enabled: true,
            delivery_mode: 'webhook',
            webhook_url: 'https://a.example',
            webhook_secret: 'short',
          },
          'INVALID_WEBHOOK_SECRET',
        ],
        [
          {
            enabled: true,
            delivery_mode: 'webhook',
            webhook_url: 'https://a.example',
            webhook_secret: 'whsec_%%%%%%%%%%%%%%%%%',
          },
          'INVALID_WEBHOOK_SECRET',
        ],
        [{ enabled: true, delivery_mode: 'smoke-signals' }, 'VALIDATION_FAILED'],
        [{ delivery_mode: 'queue' }, 'VALIDATION_FAILED'],
        [{ enabled: 'yes', delivery_mode: 'queue' }, 'VALIDATION_FAILED'],
      ];
      for (const [payload, code] of cases) {
        const response = await put(agentPath(did, '/invocation'), token, payload);
        assert.equal(response.statusCode, 400, `${JSON.stringify(payload)}: ${response.body}`);
        assert.equal(response.json().code, code);
      }
      assert.deepEqual((await get(agentPath(did, '/invocation'))).json(), {
        enabled: false,
        delivery_mode: 'none',
      });
    });

    test('GET 400 for a malformed DID and 404 for an unknown agent; PUT 401 and 403', async () => {
      const owner = await register(registry);
      const other = await register(registry);
      assert.equal((await get(agentPath('bogus', '/invocation'))).statusCode, 400);
      assert.equal(
        (await get(agentPath(`did:web:localhost%3A8080:agent:${'01'.repeat(16)}`, '/invocation'))).statusCode,
        404,
      );
      const body = { enabled: true, delivery_mode: 'queue' };
      const anonymous = await registry.app.inject({
        method: 'PUT',
        url: agentPath(owner.did, '/invocation'),
        payload: body,
      });
      assert.equal(anonymous.statusCode, 401);
      const forbidden = await put(agentPath(owner.did, '/invocation'), other.token, body);
      assert.equal(forbidden.statusCode, 403);
      assert.deepEqual((await get(agentPath(owner.did, '/invocation'))).json(), {
        enabled: false,
        delivery_mode: 'none',
      });
    });
  });
});
