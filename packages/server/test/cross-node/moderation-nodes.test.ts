import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  TEST_PUBLIC_URL,
  createTestDatabase,
  ed25519Agent,
  registrationBody,
  startRegistryProcess,
  testDatabase,
  type RegistryProcess,
  type TestDatabase,
} from '@agent-registry/testkit';
import { profileOf } from '../support/discovery-helpers.js';
import { http } from '../support/http.js';

const OPERATOR_TOKEN = 'cross-node-moderation-operator-01';

const postgresOnly =
  testDatabase === 'postgres'
    ? false
    : 'several registry processes share one database only on PostgreSQL (the postgres pass runs this)';

describe('a suspension across two registry processes on one PostgreSQL', { skip: postgresOnly }, () => {
  let testDb: TestDatabase;
  let a: RegistryProcess;
  let b: RegistryProcess;

  before(async () => {
    testDb = await createTestDatabase();
    const env = {
      DATABASE_URL: testDb.url,
      PUBLIC_URL: TEST_PUBLIC_URL,
      FEDERATION_ADMIN_TOKEN: OPERATOR_TOKEN,
    };
    [a, b] = await Promise.all([startRegistryProcess(env), startRegistryProcess(env)]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await testDb?.drop();
  });

  const found = async (node: RegistryProcess, did: string): Promise<boolean> => {
    const response = await http(node, 'GET', '/api/agents/search?q=Crossnode%20Cormorant');
    assert.equal(response.status, 200);
    return (response.body.agents as { did: string }[]).some((agent) => agent.did === did);
  };

  test('the other node drops the agent at its next request, and lists it again once restored', async () => {
    const body = await registrationBody(ed25519Agent(), profileOf('Crossnode Cormorant'), Date.now());
    const registered = await http(a, 'POST', '/api/agents/register', undefined, body);
    assert.equal(registered.status, 201);
    const { did, token } = registered.body as { did: string; token: string };
    assert.equal(await found(b, did), true);

    const path = `/api/admin/agents/${encodeURIComponent(did)}`;
    assert.equal((await http(a, 'POST', `${path}/suspend`, OPERATOR_TOKEN, { reason: 'spam' })).status, 200);
    assert.equal(await found(b, did), false);
    const profile = await http(b, 'GET', `/api/agents/${encodeURIComponent(did)}`);
    assert.equal(profile.body.status, 'suspended');
    const write = await http(b, 'PUT', `/api/agents/${encodeURIComponent(did)}`, token, { description: 'x' });
    assert.equal(write.status, 403);
    assert.equal(write.body.code, 'AGENT_SUSPENDED');

    assert.equal(
      (await http(b, 'POST', `${path}/restore`, OPERATOR_TOKEN, { reason: 'mistaken' })).status,
      200,
    );
    assert.equal(await found(a, did), true);
  });
});
