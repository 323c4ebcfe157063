import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer } from '@agent-registry/testkit';
import { type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';
import { startWithAgent } from '../../../support/registry-setup.js';

describe('a missing path parameter is a 400 with a JSON error (the "missing DID / task ID / chain_id" rows)', () => {
  let registry: TestRegistry;
  let agent: Registered;
  before(async () => {
    ({ registry, agent } = await startWithAgent());
  });
  after(() => registry.close());

  const cases: [method: 'GET' | 'POST', url: string, code: string][] = [
    ['GET', '/api/agents/', 'INVALID_DID'],
    ['GET', '/api/agents//invocation', 'INVALID_DID'],
    ['GET', '/api/agents//payment-address', 'INVALID_DID'],
    ['GET', '/api/did/', 'INVALID_DID'],
    ['GET', '/api/chains/', 'INVALID_CHAIN_ID'],
    ['GET', '/agent//did.json', 'INVALID_AGENT_ID'],
    ['GET', '/api/tasks/', 'VALIDATION_FAILED'],
    ['POST', '/api/agent/tasks//accept', 'VALIDATION_FAILED'],
  ];
  for (const [method, url, code] of cases) {
    test(`${method} ${url}`, async () => {
      const response = await registry.app.inject({ method, url, headers: bearer(agent.token) });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(response.json().code, code);
      assert.ok(response.json().details.length > 0);
    });
  }
});
