import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AgentKey, RegistryClient, RegistryError } from '../src/index.js';
import { createTestDatabase, type RegistryProcess, type TestDatabase } from '@agent-registry/testkit';
import { registryProcess } from './registry-process.js';

const ADMIN_TOKEN = 'sdk-moderation-operator-0123456';

let database: TestDatabase;
let registry: RegistryProcess;
before(async () => {
  database = await createTestDatabase();
  registry = await registryProcess(database, { env: { FEDERATION_ADMIN_TOKEN: ADMIN_TOKEN } });
});
after(async () => {
  await registry.stop();
  await database.drop();
});

test('client.moderation: report, list reports, suspend, read decisions, restore', async () => {
  const reporter = new RegistryClient({ registry: registry.url, key: AgentKey.generateEd25519() });
  await reporter.register({ name: 'SDK Reporter', capabilities: [{ type: 'reporting' }] });
  const target = new RegistryClient({ registry: registry.url, key: AgentKey.generateEd25519() });
  const { did } = await target.register({ name: 'SDK Reported', capabilities: [{ type: 'spamming' }] });

  const receipt = await reporter.moderation.report({ target: did, reason: 'spam', details: 'ads only' });
  assert.equal(receipt.state, 'open');
  assert.equal(receipt.verified, false);
  await assert.rejects(reporter.moderation.report({ target: did, reason: 'spam' }), (error: unknown) => {
    assert.ok(error instanceof RegistryError);
    assert.equal(error.code, 'REPORT_EXISTS');
    return true;
  });

  const anyone = new RegistryClient({ registry: registry.url });
  const reports = await anyone.moderation.reports(ADMIN_TOKEN, { target: did });
  assert.deepEqual(
    reports.reports.map((report) => report.id),
    [receipt.id],
  );
  const suspended = await anyone.moderation.suspend(ADMIN_TOKEN, did, { reason: 'spam', note: 'ads only' });
  assert.equal(suspended.action, 'suspended');
  const decisions = await anyone.moderation.decisions({ target: did });
  assert.deepEqual(
    decisions.decisions.map((decision) => decision.action),
    ['suspended'],
  );
  await assert.rejects(target.updateAgent({ description: 'still here' }), (error: unknown) => {
    assert.ok(error instanceof RegistryError);
    assert.equal(error.code, 'AGENT_SUSPENDED');
    return true;
  });
  const appeal = await target.appealSuspension(suspended.seq, 'Only announcements, as documented');
  assert.equal(appeal.decision, suspended.seq);
  const restored = await anyone.moderation.restore(ADMIN_TOKEN, did, { reason: 'resolved' });
  assert.equal(restored.action, 'restored');
  await assert.rejects(anyone.moderation.reports('not-the-operator-token'), (error: unknown) => {
    assert.ok(error instanceof RegistryError);
    assert.equal(error.code, 'INVALID_ADMIN_TOKEN');
    return true;
  });
});
