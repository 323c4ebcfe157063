import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import { mirrorAndRead } from '../../support/remote-entries.js';

/** What the card host answers and the status must not show to the public. */
const UPSTREAM_TEXT = 'upstream-secret-4242';
const METRICS = 'metrics-token-0123456789';
const ADMIN = 'admin-token-0123456789';

interface SourceStatus {
  id: string;
  state: string;
  last_error?: string | null;
  last_attempt_at: number | null;
  last_success_at: number | null;
  entries: number;
}
interface Status {
  view?: string;
  sources: SourceStatus[];
}

/** A card whose signature names a key elsewhere: the source's note quotes the kid the host chose. */
function startCardHost(): Promise<{ url: string; close: () => Promise<void> }> {
  const card = {
    name: 'Quoting Planner',
    description: 'Its signature names a key of another domain',
    skills: [{ id: 'route_planning', description: 'Plans routes' }],
    signatures: [
      {
        protected: Buffer.from(
          JSON.stringify({ alg: 'ES256', kid: `did:web:elsewhere.example#${UPSTREAM_TEXT}` }),
        ).toString('base64url'),
        signature: 'AA',
      },
    ],
  };
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/card.json`,
        close: () => new Promise<void>((done) => server.close(() => done())),
      }),
    ),
  );
}

describe("federation status: upstream error texts only in the operator's view", () => {
  let host: Awaited<ReturnType<typeof startCardHost>>;
  let open: TestRegistry;
  let guarded: TestRegistry;

  const read = async (registry: TestRegistry, token?: string) =>
    registry.app.inject({
      method: 'GET',
      url: '/api/federation/status',
      ...(token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } }),
    });

  before(async () => {
    host = await startCardHost();
    const env = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', FEDERATION_A2A_CARDS: host.url };
    open = await startRegistry(env);
    guarded = await startRegistry({ ...env, METRICS_TOKEN: METRICS, FEDERATION_ADMIN_TOKEN: ADMIN });
    await open.ctx.federation.refresh();
    await guarded.ctx.federation.refresh();
  });
  after(async () => {
    await open.close();
    await guarded.close();
    await host.close();
  });

  test('with no operator token configured, the status is a public summary without any error text', async () => {
    for (const token of [undefined, 'anything-at-all']) {
      const response = await read(open, token);
      assert.equal(response.statusCode, 200, response.body);
      assert.ok(!response.body.includes(UPSTREAM_TEXT), response.body);
      const status = response.json<Status>();
      assert.equal(status.view, 'public');
      const [source] = status.sources;
      assert.equal(source?.state, 'ok');
      assert.equal(source?.entries, 1);
      assert.equal(typeof source?.last_success_at, 'number');
      assert.ok(source !== undefined && !('last_error' in source));
    }
  });

  test('with tokens configured, anyone gets the summary; METRICS_TOKEN or FEDERATION_ADMIN_TOKEN the texts', async () => {
    const anonymous = await read(guarded);
    assert.equal(anonymous.statusCode, 200, anonymous.body);
    assert.ok(!anonymous.body.includes(UPSTREAM_TEXT), anonymous.body);
    assert.equal(anonymous.json<Status>().view, 'public');
    for (const token of [METRICS, ADMIN]) {
      const operator = await read(guarded, token);
      assert.equal(operator.statusCode, 200, operator.body);
      const status = operator.json<Status>();
      assert.equal(status.view, 'operator');
      assert.match(status.sources[0]?.last_error ?? '', new RegExp(`signed-untrusted: .*${UPSTREAM_TEXT}`));
    }
  });

  test('a bearer token that is neither is refused, naming the tokens', async () => {
    const wrong = await read(guarded, 'not-the-token-0123456789');
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.json<{ code: string }>().code, 'INVALID_METRICS_TOKEN');
    assert.ok(!wrong.body.includes(UPSTREAM_TEXT));
  });

  test('the OpenAPI document says the token is optional', async () => {
    const document = (await guarded.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, { get?: { security?: unknown[] } }>;
    }>();
    assert.deepEqual(document.paths['/api/federation/status']?.get?.security, [
      {},
      { metricsToken: [] },
      { federationAdminToken: [] },
    ]);
  });
});

describe("a peer's profile with control characters is mirrored cleaned, on either database", () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry({});
  });
  after(async () => {
    await registry.close();
  });

  test('U+0000 and lone surrogates never reach the database; line breaks stay in descriptions', async () => {
    const peerUrl = 'https://nul-peer.example';
    const did = 'did:web:nul-peer.example:agents:one';
    const profile = {
      did,
      name: 'Nul\u0000 Cartographer\n',
      description: 'Draws\u0000 maps\nof \ud800 places',
      tags: ['ma\u0000ps'],
      capabilities: [{ type: 'map\u0000ping', description: 'Maps\u0000', tags: ['x\u0000y'] }],
      endpoints: [{ type: 'inv\u0000oke', url: 'https://nul-peer.example/invoke' }],
    };
    const entry = await mirrorAndRead(registry, peerUrl, did, profile, 'nul-peer.example/log');
    assert.equal(entry.name, 'Nul Cartographer');
    assert.equal(entry.description, 'Draws maps\nof \ufffd places');
    assert.deepEqual(entry.tags, ['maps']);
    assert.deepEqual(entry.capabilities, [{ type: 'mapping', description: 'Maps', tags: ['xy'] }]);
    assert.deepEqual(entry.endpoints, [{ type: 'invoke', url: 'https://nul-peer.example/invoke' }]);
  });
});
