import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SignJWT, UnsecuredJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import type { LightMyRequestResponse } from 'fastify';
import { agentPath, bearer, ed25519Agent, secp256k1Agent } from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';
import { startWithAgent } from '../../support/registry-setup.js';

type JsonSchema = Record<string, unknown>;
type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

interface OpenApiOperation {
  security?: unknown[];
  parameters?: { name: string; in: string; schema?: JsonSchema }[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

interface ProtectedRoute {
  method: HttpMethod;
  /** OpenAPI path template, e.g. /api/agents/{did} */
  path: string;
  operation: OpenApiOperation;
}

const HTTP_METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'];

/**
 * Bodies known to be valid for a route, so that the token is the only reason a request can fail.
 * A protected route not listed here gets a body generated from its OpenAPI request schema; if that
 * body fails validation the tests below fail with a 400, which says: add the route here.
 */
const VALID_BODIES: Record<string, unknown> = {
  'PUT /api/agents/{did}': { name: 'x' },
  'PUT /api/agents/{did}/invocation': { enabled: true, delivery_mode: 'queue' },
};

const key = (route: { method: string; path: string }): string => `${route.method} ${route.path}`;

/** components.schemas of the served document, for `$ref`s in request bodies. */
let componentSchemas: Record<string, JsonSchema> = {};

/** A minimal instance of a JSON Schema: required members only, first enum value, smallest lengths. */
function exampleFor(schema: JsonSchema | undefined): unknown {
  if (schema === undefined) return {};
  if (typeof schema.$ref === 'string')
    return exampleFor(componentSchemas[schema.$ref.split('/').pop() ?? '']);
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = (schema.required ?? []) as string[];
      return Object.fromEntries(required.map((name) => [name, exampleFor(properties[name])]));
    }
    case 'array': {
      const count = typeof schema.minItems === 'number' ? schema.minItems : 0;
      return Array.from({ length: count }, () => exampleFor(schema.items as JsonSchema | undefined));
    }
    case 'string':
      return 'x'.repeat(Math.max(1, typeof schema.minLength === 'number' ? schema.minLength : 1));
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return true;
    default:
      return {};
  }
}

/**
 * Every operation of the app's own OpenAPI document that an agent's bearer token guards (`bearerAuth`);
 * the operator's routes take the operator's secrets, tested with them (federation-peers.test.ts).
 */
async function protectedRoutesOf(registry: TestRegistry): Promise<ProtectedRoute[]> {
  const response = await registry.app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(response.statusCode, 200, response.body);
  const document = response.json<{
    paths: Record<string, Record<string, OpenApiOperation>>;
    components?: { schemas?: Record<string, JsonSchema> };
  }>();
  componentSchemas = document.components?.schemas ?? {};
  const routes: ProtectedRoute[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const upper = method.toUpperCase() as HttpMethod;
      if (!HTTP_METHODS.includes(upper)) continue;
      if (
        Array.isArray(operation.security) &&
        operation.security.some(
          (scheme) => typeof scheme === 'object' && scheme !== null && 'bearerAuth' in scheme,
        )
      ) {
        routes.push({ method: upper, path, operation });
      }
    }
  }
  return routes;
}

const discovery = await startRegistry();
const PROTECTED_ROUTES = await protectedRoutesOf(discovery);
await discovery.close();

const hasDidParam = (route: ProtectedRoute): boolean => route.path.includes('{did}');

/** The route's URL with {did} set to the target DID (URL-encoded) and other parameters from their schema. */
function urlFor(route: ProtectedRoute, targetDid: string): string {
  return route.path.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    if (name === 'did') return encodeURIComponent(targetDid);
    const parameter = route.operation.parameters?.find((p) => p.in === 'path' && p.name === name);
    return encodeURIComponent(String(exampleFor(parameter?.schema ?? { type: 'string' })));
  });
}

function bodyFor(route: ProtectedRoute): unknown {
  if (key(route) in VALID_BODIES) return VALID_BODIES[key(route)];
  const schema = route.operation.requestBody?.content?.['application/json']?.schema;
  return schema === undefined ? undefined : exampleFor(schema);
}

function call(
  registry: TestRegistry,
  route: ProtectedRoute,
  targetDid: string,
  authorization: string | undefined,
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = {};
  if (authorization !== undefined) headers.authorization = authorization;
  const body = bodyFor(route);
  return registry.app.inject({
    method: route.method,
    url: urlFor(route, targetDid),
    headers,
    ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
  });
}

function assertErrorBody(
  response: LightMyRequestResponse,
  status: number,
  code: string,
  label: string,
): void {
  const where = `${label}: ${response.statusCode} ${response.body}`;
  assert.equal(response.statusCode, status, where);
  assert.match(String(response.headers['content-type']), /^application\/json/, where);
  const body = response.json<Record<string, unknown>>();
  assert.deepEqual(Object.keys(body).sort(), ['code', 'details', 'error'], where);
  assert.equal(typeof body.error, 'string', where);
  assert.equal(typeof body.details, 'string', where);
  assert.ok((body.error as string).length > 0, where);
  assert.ok((body.details as string).length > 0, where);
  assert.equal(body.code, code, where);
  assert.doesNotMatch(response.body, /\bat\s+\S.*:\d+:\d+/, `${where}: looks like a stack frame`);
}

function assert401(response: LightMyRequestResponse, code: string, label: string): void {
  assertErrorBody(response, 401, code, label);
  assert.match(
    String(response.headers['www-authenticate']),
    /^Bearer(\s|$)/,
    `${label}: www-authenticate is ${String(response.headers['www-authenticate'])}`,
  );
}

/** A token with the same claims and header as `real`, signed by an Ed25519 key the registry never saw. */
async function forgedLike(real: string): Promise<string> {
  const { privateKey } = crypto.generateKeyPairSync('ed25519');
  const header = decodeProtectedHeader(real);
  return new SignJWT(decodeJwt(real)).setProtectedHeader({ ...header, alg: 'EdDSA' }).sign(privateKey);
}

/** An unsigned (alg: none) JWT with the claims the registry issues for `did`. */
function unsignedFor(registry: TestRegistry, did: string): string {
  const now = Math.floor(registry.clock.now() / 1000);
  return new UnsecuredJWT({})
    .setSubject(did)
    .setIssuer(registry.config.identity.publicUrl)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .setJti(crypto.randomUUID())
    .encode();
}

/** The real token with its header swapped for {alg:"none"}, with and without the original signature. */
function algNoneVariantsOf(real: string): string[] {
  const [, payload, signature] = real.split('.') as [string, string, string];
  const noneHeader = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
  return [`${noneHeader}.${payload}.`, `${noneHeader}.${payload}.${signature}`];
}

describe('protected routes are derived from the OpenAPI document', () => {
  test('a second registry can be built in the same process (each group below starts its own)', async () => {
    // Fails while src/app.ts keeps its two Ajv instances at module level: the second buildApp()
    // re-adds the shared schemas and Ajv throws 'schema with key or id "ErrorResponse" already exists'.
    const second = await startRegistry();
    await second.close();
  });

  test('the list contains at least the three owner routes of section 4.1', () => {
    const found = PROTECTED_ROUTES.map(key);
    for (const expected of [
      'PUT /api/agents/{did}',
      'DELETE /api/agents/{did}',
      'PUT /api/agents/{did}/invocation',
    ]) {
      assert.ok(found.includes(expected), `${expected} missing from ${JSON.stringify(found)}`);
    }
  });

  test('public routes of section 4.1 declare no security', async () => {
    const found = PROTECTED_ROUTES.map(key);
    for (const publicRoute of [
      'POST /api/agents/register',
      'GET /api/agents/{did}',
      'GET /api/agents/{did}/invocation',
      'GET /api/agents/{did}/payment-address',
    ]) {
      assert.ok(!found.includes(publicRoute), `${publicRoute} should be public`);
    }
  });
});

describe('every protected route refuses a bad token with 401 {error, details, code}', () => {
  let registry: TestRegistry;
  let owner: Registered;
  let other: Registered;
  before(async () => {
    registry = await startRegistry();
    owner = await register(registry, ed25519Agent());
    other = await register(registry, secp256k1Agent());
  });
  after(() => registry.close());

  const badTokens: { name: string; code: string; authorization: () => string | undefined }[] = [
    { name: 'no Authorization header', code: 'TOKEN_MISSING', authorization: () => undefined },
    { name: 'an empty Authorization header', code: 'TOKEN_MISSING', authorization: () => '' },
    { name: 'malformed token "Bearer abc"', code: 'TOKEN_INVALID', authorization: () => 'Bearer abc' },
    { name: '"Bearer" without a token', code: 'TOKEN_INVALID', authorization: () => 'Bearer' },
    { name: 'a valid token without "Bearer"', code: 'TOKEN_INVALID', authorization: () => owner.token },
    {
      name: 'a valid token under another scheme',
      code: 'TOKEN_INVALID',
      authorization: () => `Basic ${owner.token}`,
    },
    {
      name: 'an alg:none token with sub = the owner DID',
      code: 'TOKEN_INVALID',
      authorization: () => `Bearer ${unsignedFor(registry, owner.did)}`,
    },
    {
      name: 'the real token re-headed as alg:none without signature',
      code: 'TOKEN_INVALID',
      authorization: () => `Bearer ${algNoneVariantsOf(owner.token)[0]}`,
    },
    {
      name: 'the real token re-headed as alg:none keeping its signature',
      code: 'TOKEN_INVALID',
      authorization: () => `Bearer ${algNoneVariantsOf(owner.token)[1]}`,
    },
    { name: 'a token with a tampered payload', code: 'TOKEN_INVALID', authorization: () => tampered() },
  ];

  /** The owner's real header and signature over a payload naming the other agent. */
  function tampered(): string {
    const [header, payload, signature] = owner.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const swapped = Buffer.from(JSON.stringify({ ...claims, sub: other.did })).toString('base64url');
    return `Bearer ${header}.${swapped}.${signature}`;
  }

  test('the alg:none token really is unsigned and names the owner', () => {
    const token = unsignedFor(registry, owner.did);
    assert.equal(decodeProtectedHeader(token).alg, 'none');
    assert.equal(decodeJwt(token).sub, owner.did);
    assert.ok(token.endsWith('.'));
  });

  for (const route of PROTECTED_ROUTES) {
    describe(key(route), () => {
      for (const bad of badTokens) {
        test(`${bad.name} -> 401 ${bad.code}`, async () => {
          const response = await call(registry, route, owner.did, bad.authorization());
          assert401(response, bad.code, `${key(route)} with ${bad.name}`);
        });
      }

      test('a token with the same claims signed by a different Ed25519 key (forged) -> 401 TOKEN_INVALID', async () => {
        const forged = await forgedLike(owner.token);
        assert.deepEqual(decodeJwt(forged), decodeJwt(owner.token));
        const response = await call(registry, route, owner.did, `Bearer ${forged}`);
        assert401(response, 'TOKEN_INVALID', `${key(route)} with a forged token`);
      });

      if (hasDidParam(route)) {
        test("another agent's valid token on the owner's DID -> 403 NOT_OWNER", async () => {
          const response = await call(registry, route, owner.did, `Bearer ${other.token}`);
          assertErrorBody(response, 403, 'NOT_OWNER', `${key(route)} with another agent's token`);
          assert.equal(response.headers['www-authenticate'], undefined);
        });
      }
    });
  }

  test('none of the refused requests changed the owner (still active, profile and invocation unchanged)', async () => {
    const profile = await registry.app.inject({ method: 'GET', url: agentPath(owner.did) });
    assert.equal(profile.statusCode, 200, profile.body);
    const body = profile.json<{ status: string; name: string; invocation_enabled: boolean }>();
    assert.equal(body.status, 'active');
    assert.equal(body.name, 'Translator');
    assert.equal(body.invocation_enabled, false);
  });
});

describe("the owner's valid token succeeds on every protected route", () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry();
  });
  after(() => registry.close());

  for (const route of PROTECTED_ROUTES) {
    test(`${key(route)} with the owner's token`, async () => {
      // A fresh agent per route: DELETE deactivates its owner.
      const owner = await register(registry);
      const response = await call(registry, route, owner.did, `Bearer ${owner.token}`);
      switch (key(route)) {
        case 'PUT /api/agents/{did}': {
          assert.equal(response.statusCode, 200, response.body);
          const body = response.json<{ did: string; name: string; status: string }>();
          assert.equal(body.did, owner.did);
          assert.equal(body.name, 'x');
          assert.equal(body.status, 'active');
          break;
        }
        case 'DELETE /api/agents/{did}': {
          assert.equal(response.statusCode, 200, response.body);
          const body = response.json<{ did: string; status: string; deactivated_at: number }>();
          assert.equal(body.did, owner.did);
          assert.equal(body.status, 'deactivated');
          assert.equal(body.deactivated_at, registry.clock.now());
          break;
        }
        case 'PUT /api/agents/{did}/invocation': {
          assert.equal(response.statusCode, 200, response.body);
          assert.deepEqual(response.json(), { enabled: true, delivery_mode: 'queue', webhook_url: null });
          break;
        }
        default:
          // Task and invoke routes name resources that do not exist here (404/400): the token itself
          // must be accepted, so the answer is never a 401.
          assert.notEqual(response.statusCode, 401, `${key(route)}: ${response.body}`);
          assert.ok(response.statusCode < 500, `${key(route)}: ${response.statusCode} ${response.body}`);
      }
    });
  }

  test('the owner token also works with a lower-case scheme and surrounding spaces', async () => {
    const owner = await register(registry);
    const response = await registry.app.inject({
      method: 'PUT',
      url: agentPath(owner.did),
      headers: { authorization: `bearer   ${owner.token} ` },
      payload: { name: 'x' },
    });
    assert.equal(response.statusCode, 200, response.body);
  });
});

describe('an expired token is refused with 401 TOKEN_EXPIRED', () => {
  // A registry of its own: moving its clock 24 hours would expire every other test's tokens.
  let registry: TestRegistry;
  let owner: Registered;
  before(async () => {
    ({ registry, agent: owner } = await startWithAgent());
    const before = await registry.app.inject({
      method: 'PUT',
      url: agentPath(owner.did),
      headers: bearer(owner.token),
      payload: { name: 'still valid' },
    });
    assert.equal(before.statusCode, 200, `the token works before expiry: ${before.body}`);
    const claims = decodeJwt(owner.token);
    assert.equal((claims.exp as number) - (claims.iat as number), 24 * 60 * 60);
    registry.clock.advance(24 * 60 * 60 * 1000 + 1000);
  });
  after(() => registry.close());

  for (const route of PROTECTED_ROUTES) {
    test(`${key(route)} after 24 hours and 1 second`, async () => {
      const response = await call(registry, route, owner.did, `Bearer ${owner.token}`);
      assert401(response, 'TOKEN_EXPIRED', `${key(route)} with an expired token`);
    });
  }

  test('the agent itself is untouched: GET still shows it active', async () => {
    const profile = await registry.app.inject({ method: 'GET', url: agentPath(owner.did) });
    assert.equal(profile.statusCode, 200, profile.body);
    assert.equal(profile.json<{ status: string }>().status, 'active');
  });
});

describe("a deactivated agent's token is refused with 401 AGENT_DEACTIVATED", () => {
  let registry: TestRegistry;
  let gone: Registered;
  let other: Registered;
  before(async () => {
    ({ registry, agent: gone } = await startWithAgent());
    other = await register(registry);
    const deactivated = await registry.app.inject({
      method: 'DELETE',
      url: agentPath(gone.did),
      headers: bearer(gone.token),
    });
    assert.equal(deactivated.statusCode, 200, deactivated.body);
    assert.equal(deactivated.json<{ status: string }>().status, 'deactivated');
  });
  after(() => registry.close());

  for (const route of PROTECTED_ROUTES) {
    const ownDelete = key(route) === 'DELETE /api/agents/{did}';
    test(`${key(route)} on its own DID -> ${ownDelete ? '404 AGENT_NOT_FOUND' : '401 AGENT_DEACTIVATED'}`, async () => {
      const response = await call(registry, route, gone.did, `Bearer ${gone.token}`);
      if (ownDelete) {
        assertErrorBody(response, 404, 'AGENT_NOT_FOUND', 'second DELETE of its own DID');
      } else {
        assert401(response, 'AGENT_DEACTIVATED', `${key(route)} with a deactivated agent's token`);
      }
    });

    if (hasDidParam(route)) {
      test(`${key(route)} on another (active) agent's DID -> 401 AGENT_DEACTIVATED`, async () => {
        const response = await call(registry, route, other.did, `Bearer ${gone.token}`);
        assert401(response, 'AGENT_DEACTIVATED', `${key(route)} on another DID with a deactivated token`);
      });
    }
  }

  test('the other agent is still active', async () => {
    const profile = await registry.app.inject({ method: 'GET', url: agentPath(other.did) });
    assert.equal(profile.statusCode, 200, profile.body);
    assert.equal(profile.json<{ status: string }>().status, 'active');
  });
});
