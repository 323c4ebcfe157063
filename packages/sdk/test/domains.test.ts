import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AgentKey, RegistryClient, RegistryError } from '../src/index.js';
import {
  createTestDatabase,
  startTxtServer,
  type RegistryProcess,
  type TestDatabase,
} from '@agent-registry/testkit';
import { registryProcess } from './registry-process.js';

describe('RegistryClient domains and handles against a real registry', () => {
  let database: TestDatabase;
  let registry: RegistryProcess;
  let dns: Awaited<ReturnType<typeof startTxtServer>>;
  before(async () => {
    dns = await startTxtServer();
    database = await createTestDatabase('sqlite');
    // The well-known fetch of sdk-domain.test finds no such host; the TXT record on the test's DNS proves it.
    registry = await registryProcess(database, {
      env: { DOMAIN_DNS_SERVERS: dns.address, DOMAIN_PROOF_ALLOW_HTTP: 'true' },
    });
  });
  after(async () => {
    await registry.stop();
    await database.drop();
    await dns.close();
  });

  test('claimDomain, setHandle, getAgentByHandle, clearHandle, dropDomain', async () => {
    const client = new RegistryClient({ registry: registry.url, key: AgentKey.generateEd25519() });
    const { did } = await client.register({ name: 'SDK Domain Agent', capabilities: [{ type: 'general' }] });
    await assert.rejects(client.claimDomain('sdk-domain.test'), (error: unknown) => {
      return error instanceof RegistryError && error.code === 'DOMAIN_PROOF_NOT_FOUND';
    });
    dns.records.set('_agent-registry.sdk-domain.test', [`did=${did}`]);
    const claimed = await client.claimDomain('sdk-domain.test');
    assert.deepEqual(
      claimed.domains.map((claim) => [claim.domain, claim.method]),
      [['sdk-domain.test', 'dns']],
    );
    assert.equal((await client.setHandle('test.sdk-domain/helper')).handle, 'test.sdk-domain/helper');
    const profile = await new RegistryClient({ registry: registry.url }).getAgentByHandle(
      'test.sdk-domain/helper',
    );
    assert.equal(profile.did, did);
    assert.deepEqual(profile.domains, ['sdk-domain.test']);
    assert.equal((await client.clearHandle()).handle, null);
    assert.deepEqual((await client.dropDomain('sdk-domain.test')).domains, []);
    assert.deepEqual((await client.listDomains()).domains, []);
  });
});
