import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { ConfigError, loadConfig } from '../../../../src/kernel/config.js';
import { agentPath } from '@agent-registry/testkit';
import { startRegistry, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';
import { startWithAgent } from '../../../support/registry-setup.js';

interface ErrorBody {
  error: string;
  details: string;
  code: string;
}

/** Stack frames ("at fn (file:1:2)", "at file:1:2") and file system paths that must never reach a client. */
const LEAKS: readonly RegExp[] = [
  /\bat\s+(async\s+)?\S*\s*\(?\S+:\d+:\d+\)?/,
  /^\s*at\s/m,
  /node_modules/,
  /\/(work|home|tmp|usr|var|src|app)\/\S+/,
  /\b[\w.-]+\.(ts|js|mjs|cjs):\d+/,
  /[A-Za-z]:\\\\/,
  /"stack"/,
];

function assertNoLeak(text: string, label: string): void {
  for (const leak of LEAKS) assert.doesNotMatch(text, leak, `${label}: response leaks internals: ${text}`);
}

/** Asserts the one error shape of the registry: JSON {error, details, code} and nothing else. */
function assertError(response: LightMyRequestResponse, status: number, code: string, label = ''): ErrorBody {
  const where = `${label} ${response.statusCode} ${response.body}`;
  assert.equal(response.statusCode, status, where);
  assert.match(String(response.headers['content-type']), /^application\/json/, where);
  const body = response.json<Record<string, unknown>>();
  assert.deepEqual(Object.keys(body).sort(), ['code', 'details', 'error'], where);
  for (const member of ['error', 'details', 'code'] as const) {
    assert.equal(typeof body[member], 'string', where);
    assert.ok((body[member] as string).length > 0, where);
  }
  assert.equal(body.code, code, where);
  assertNoLeak(response.body, label);
  return body as unknown as ErrorBody;
}

describe('every error is JSON {error, details, code} and never a stack trace', () => {
  let registry: TestRegistry;
  let agent: Registered;
  before(async () => {
    ({ registry, agent } = await startWithAgent());
  });
  after(() => registry.close());

  const inject = (options: InjectOptions): Promise<LightMyRequestResponse> => registry.app.inject(options);

  test('unknown route: GET and POST answer 404 ROUTE_NOT_FOUND', async () => {
    const get = await inject({ method: 'GET', url: '/api/no-such-route?x=1' });
    const body = assertError(get, 404, 'ROUTE_NOT_FOUND', 'GET unknown');
    assert.match(body.details, /GET \/api\/no-such-route(?!\?)/);
    const post = await inject({ method: 'POST', url: '/api/no-such-route', payload: { a: 1 } });
    assertError(post, 404, 'ROUTE_NOT_FOUND', 'POST unknown');
    const known = await inject({ method: 'PATCH', url: agentPath(agent.did), payload: { name: 'x' } });
    assertError(known, 404, 'ROUTE_NOT_FOUND', 'PATCH on a known path');
  });

  test('malformed JSON answers 400 INVALID_JSON', async () => {
    for (const payload of ['{"public_key":', '{bad json}', 'not json at all', '{"a":1}}']) {
      const response = await inject({
        method: 'POST',
        url: '/api/agents/register',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      const body = assertError(response, 400, 'INVALID_JSON', `malformed ${payload}`);
      assert.equal(body.error, 'Malformed JSON');
    }
  });

  test('text/plain on POST /api/agents/register answers 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const response = await inject({
      method: 'POST',
      url: '/api/agents/register',
      headers: { 'content-type': 'text/plain' },
      payload: '{"public_key":"00"}',
    });
    assertError(response, 415, 'UNSUPPORTED_MEDIA_TYPE', 'text/plain');
  });

  test('other non-JSON content types answer 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    for (const contentType of [
      'application/xml',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
    ]) {
      const response = await inject({
        method: 'POST',
        url: '/api/agents/register',
        headers: { 'content-type': contentType },
        payload: 'a=1',
      });
      assertError(response, 415, 'UNSUPPORTED_MEDIA_TYPE', contentType);
    }
  });

  test('application/json with a charset parameter is JSON (reaches validation)', async () => {
    const response = await inject({
      method: 'POST',
      url: '/api/agents/register',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      payload: '{}',
    });
    assertError(response, 400, 'VALIDATION_FAILED', 'charset');
  });

  test('a body over BODY_LIMIT_BYTES (256 KiB) answers 413 PAYLOAD_TOO_LARGE; exactly 256 KiB does not', async () => {
    assert.equal(registry.config.network.bodyLimitBytes, 256 * 1024);
    const sized = (bytes: number): string => {
      const text = `{"x":"${'a'.repeat(bytes - 8)}"}`;
      assert.equal(Buffer.byteLength(text), bytes);
      return text;
    };
    const over = await inject({
      method: 'POST',
      url: '/api/agents/register',
      headers: { 'content-type': 'application/json' },
      payload: sized(256 * 1024 + 1),
    });
    assertError(over, 413, 'PAYLOAD_TOO_LARGE', 'over the limit');
    const atLimit = await inject({
      method: 'POST',
      url: '/api/agents/register',
      headers: { 'content-type': 'application/json' },
      payload: sized(256 * 1024),
    });
    assertError(atLimit, 400, 'VALIDATION_FAILED', 'at the limit');
  });

  test('DELETE with content-type application/json and an empty body reaches the route (401, not a JSON error)', async () => {
    for (const payload of [undefined, '']) {
      const response = await inject({
        method: 'DELETE',
        url: agentPath(agent.did),
        headers: { 'content-type': 'application/json' },
        ...(payload === undefined ? {} : { payload }),
      });
      assertError(response, 401, 'TOKEN_MISSING', `DELETE empty body (${String(payload)})`);
      assert.match(String(response.headers['www-authenticate']), /^Bearer(\s|$)/);
    }
  });

  test('DELETE with content-type application/json and an empty body over a real socket', async () => {
    const address = await registry.app.listen({ port: 0, host: '127.0.0.1' });
    const response = await fetch(`${address}${agentPath(agent.did)}`, {
      method: 'DELETE',
      headers: { 'content-type': 'application/json', 'content-length': '0' },
    });
    const text = await response.text();
    assert.equal(response.status, 401, text);
    const body = JSON.parse(text) as ErrorBody;
    assert.equal(body.code, 'TOKEN_MISSING');
    assertNoLeak(text, 'real DELETE');
  });

  test('validation errors name the field and carry no internals', async () => {
    const response = await inject({
      method: 'POST',
      url: '/api/agents/register',
      payload: { public_key: 5 },
    });
    const body = assertError(response, 400, 'VALIDATION_FAILED', 'validation');
    assert.equal(body.error, 'Invalid request');
  });

  test('x-request-id is on every response and echoes a valid incoming one', async () => {
    const ok = await inject({ method: 'GET', url: '/healthz' });
    assert.match(String(ok.headers['x-request-id']), /^[A-Za-z0-9._:-]{1,128}$/);
    const other = await inject({ method: 'GET', url: '/healthz' });
    assert.notEqual(other.headers['x-request-id'], ok.headers['x-request-id']);

    const given = 'trace-42.abc:DEF_9';
    const echoed = await inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': given } });
    assert.equal(echoed.headers['x-request-id'], given);
    const onError = await inject({ method: 'GET', url: '/api/nowhere', headers: { 'x-request-id': given } });
    assertError(onError, 404, 'ROUTE_NOT_FOUND');
    assert.equal(onError.headers['x-request-id'], given);

    for (const invalid of ['has spaces', 'a'.repeat(129), 'semi;colon', '<script>']) {
      const response = await inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': invalid } });
      const id = String(response.headers['x-request-id']);
      assert.notEqual(id, invalid);
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }
  });
});

describe('health, docs and the OpenAPI document', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry();
  });
  after(() => registry.close());

  /** Every path and method of the interface that the app serves now. */
  const SERVED: Record<string, string[]> = {
    '/api/agents/register': ['post'],
    '/api/agents/{did}': ['get', 'put', 'delete'],
    '/api/agents/{did}/invocation': ['get', 'put'],
    '/api/agents/{did}/payment-address': ['get'],
    '/.well-known/did/web/agent/{id}/did.json': ['get'],
    '/api/did/{did}': ['get'],
    '/api/chains': ['get'],
    '/api/chains/{chain_id}': ['get'],
    '/api/auth/token': ['post'],
    '/.well-known/jwks.json': ['get'],
    '/healthz': ['get'],
    '/readyz': ['get'],
    '/api/invoke': ['post'],
    '/api/tasks/{id}': ['get'],
    '/api/agent/tasks': ['get'],
    '/api/agent/tasks/{id}/accept': ['post'],
    '/api/agent/tasks/{id}/fail': ['post'],
    '/api/agent/tasks/{id}/result': ['post'],
  };

  async function openApi(): Promise<{
    openapi: string;
    paths: Record<string, Record<string, unknown>>;
    components: { schemas: Record<string, { required?: string[] }> };
  }> {
    const response = await registry.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.statusCode, 200, response.body);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    return response.json();
  }

  test('/healthz answers 200 {status:"ok"} with the running version', async () => {
    const response = await registry.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), { status: 'ok', version: '0.1.0', commit: null });
  });

  test('/readyz answers 200 {status:"ready"}', async () => {
    const response = await registry.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), { status: 'ready' });
  });

  test('/docs answers 200 with HTML', async () => {
    const response = await registry.app.inject({ method: 'GET', url: '/docs' });
    assert.equal(response.statusCode, 200, response.body.slice(0, 200));
    assert.match(String(response.headers['content-type']), /^text\/html/);
    assert.match(response.body, /<html/i);
  });

  test('/openapi.json is OpenAPI 3.1 and documents the error shape', async () => {
    const document = await openApi();
    assert.match(document.openapi, /^3\.1\.\d+$/);
    assert.deepEqual([...(document.components.schemas.ErrorResponse?.required ?? [])].sort(), [
      'code',
      'details',
      'error',
    ]);
  });

  test('/openapi.json contains every path and method the app serves now', async () => {
    const document = await openApi();
    for (const [path, methods] of Object.entries(SERVED)) {
      assert.ok(document.paths[path] !== undefined, `${path} missing from /openapi.json`);
      for (const method of methods) {
        assert.ok(document.paths[path]?.[method] !== undefined, `${method.toUpperCase()} ${path} missing`);
      }
    }
  });

  test('every endpoint row of the interface is in /openapi.json', async () => {
    // The interface's endpoint table, kept current by scripts/interface-endpoints.mjs (run by .ci/run).
    const rows = JSON.parse(
      fs.readFileSync(new URL('../../../fixtures/interface-endpoints.json', import.meta.url), 'utf8'),
    ) as { method: string; path: string; section: string }[];
    assert.ok(rows.some((row) => row.method === 'put' && row.path === '/api/agents/{did}/invocation'));
    const document = await openApi();
    const missing = rows
      .filter((row) => document.paths[row.path]?.[row.method] === undefined)
      .map((row) => `${row.method.toUpperCase()} ${row.path} (section ${row.section})`);
    assert.deepEqual(missing, []);
  });
});

describe('with the database closed', () => {
  // A dedicated registry: its database is closed for good.
  let registry: TestRegistry;
  let agent: Registered;
  before(async () => {
    ({ registry, agent } = await startWithAgent());
    await registry.ctx.database.close();
  });
  after(() => registry.close());

  test('/readyz answers 503 DATABASE_UNAVAILABLE with retry-after; /healthz stays 200', async () => {
    const ready = await registry.app.inject({ method: 'GET', url: '/readyz' });
    assertError(ready, 503, 'DATABASE_UNAVAILABLE', 'readyz');
    assert.equal(ready.headers['retry-after'], '1');
    const healthy = await registry.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(healthy.statusCode, 200);
    assert.equal(healthy.json().status, 'ok');
  });

  test('an internal error is a 500 INTERNAL_ERROR naming the request id, without the driver message', async () => {
    const response = await registry.app.inject({
      method: 'GET',
      url: agentPath(agent.did),
      headers: { 'x-request-id': 'closed-db-1' },
    });
    const body = assertError(response, 500, 'INTERNAL_ERROR', 'closed database');
    assert.equal(response.headers['x-request-id'], 'closed-db-1');
    assert.match(body.details, /closed-db-1/);
    assert.doesNotMatch(response.body, /destroy|driver|sqlite|kysely/i);
  });
});

describe('configuration (loadConfig)', () => {
  const cwd = os.tmpdir();

  for (const [name, value] of [
    ['PORT', 'abc'],
    ['DATABASE_URL', 'mysql://x'],
    ['PUBLIC_URL', 'ftp://x'],
    ['LOG_LEVEL', 'loud'],
    ['WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'maybe'],
  ] as const) {
    test(`${name}=${value} throws ConfigError naming ${name}`, () => {
      assert.throws(
        () => loadConfig({ [name]: value }, cwd),
        (error: unknown) => error instanceof ConfigError && error.message.includes(name),
      );
    });
  }

  test('the default did:web domain is localhost%3A8080', () => {
    const config = loadConfig({}, cwd);
    assert.equal(config.identity.didWebDomain, 'localhost%3A8080');
    assert.equal(config.identity.publicUrl, 'http://localhost:8080');
    assert.equal(config.network.bodyLimitBytes, 256 * 1024);
  });

  test('PUBLIC_URL=https://registry.example.com gives did:web domain registry.example.com', () => {
    const config = loadConfig({ PUBLIC_URL: 'https://registry.example.com' }, cwd);
    assert.equal(config.identity.didWebDomain, 'registry.example.com');
    assert.equal(config.identity.publicUrl, 'https://registry.example.com');
  });
});

describe('validation errors say what is allowed', () => {
  test('an unknown enum value lists the allowed values', async () => {
    const registry = await startRegistry();
    try {
      const response = await registry.app.inject({ method: 'GET', url: '/api/agents/search?sort=bogus' });
      assert.equal(response.statusCode, 400);
      assert.equal(response.json().code, 'VALIDATION_FAILED');
      assert.match(response.json().details, /sort must be one of: reputation, created_at/);
    } finally {
      await registry.close();
    }
  });
});
