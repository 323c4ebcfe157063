import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testDatabase } from '@agent-registry/testkit';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import {
  putRemoteEntry,
  type RemoteEntryWrite,
} from '../../../src/modules/federation/remote-entries-store.js';
import { mirroredEntry, PEER } from '../../support/remote-entries.js';

const ADMIN_TOKEN = 'entries-moderation-operator-012345';
const MIRRORED_DID = 'did:web:peer.example:agent:0123456789abcdef0123456789abcdef';
const ENTRY_ID = `peer:${PEER}#${MIRRORED_DID}`;

const entry = (description: string): RemoteEntryWrite =>
  mirroredEntry(MIRRORED_DID, {
    name: 'Lookalike Wallet',
    description,
    capability: 'payments',
    tag: 'wallet',
  });

describe(`moderation of remote entries (${testDatabase})`, () => {
  let registry: TestRegistry;
  const operator = (method: 'POST', url: string, payload: Record<string, unknown>) =>
    registry.app.inject({ method, url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload });
  const found = async (): Promise<string[]> => {
    const response = await registry.app.inject({
      method: 'GET',
      url: '/api/agents/search?scope=federated&capability=payments',
    });
    assert.equal(response.statusCode, 200, response.body);
    return response
      .json<{ agents: { did: string; description: string }[] }>()
      .agents.map((agent) => `${agent.did} ${agent.description}`);
  };
  const path = (action: string) => `/api/admin/entries/${encodeURIComponent(ENTRY_ID)}/${action}`;

  before(async () => {
    registry = await startRegistry({ FEDERATION_ADMIN_TOKEN: ADMIN_TOKEN });
    await putRemoteEntry(registry.ctx.database.db, entry('Pays invoices'), Date.now());
  });
  after(async () => {
    await registry.close();
  });

  test('a suspended entry leaves federated search and the entries, stays out when its source sends it again, and comes back restored', async () => {
    assert.deepEqual(await found(), [`${MIRRORED_DID} Pays invoices`]);

    const suspended = await operator('POST', path('suspend'), {
      reason: 'impersonation',
      note: 'copies a bank',
    });
    assert.equal(suspended.statusCode, 200, suspended.body);
    const decision = suspended.json<{ seq: number; target: string; action: string }>();
    assert.equal(decision.target, ENTRY_ID);
    assert.equal(decision.action, 'suspended');
    assert.deepEqual(await found(), []);
    const listed = await registry.app.inject({ method: 'GET', url: '/api/federation/entries?limit=200' });
    assert.deepEqual(listed.json<{ entries: unknown[] }>().entries, []);
    const read = await registry.app.inject({
      method: 'GET',
      url: `/api/federation/entries/${encodeURIComponent(ENTRY_ID)}`,
    });
    assert.equal(read.statusCode, 404);
    assert.match(read.json<{ details: string }>().details, /suspended by this registry's operator/);
    // Public and in the log, under the entry's id.
    const decisions = await registry.app.inject({
      method: 'GET',
      url: `/api/moderation?target=${encodeURIComponent(ENTRY_ID)}`,
    });
    assert.deepEqual(
      decisions
        .json<{ decisions: { seq: number; reason: string }[] }>()
        .decisions.map((row) => [row.seq, row.reason]),
      [[decision.seq, 'impersonation']],
    );
    const leaf = await registry.ctx.database.db
      .selectFrom('log_records')
      .select(['operation', 'record'])
      .where('seq', '=', decision.seq)
      .executeTakeFirstOrThrow();
    assert.equal(leaf.operation, 'moderation.suspended');
    assert.equal((JSON.parse(leaf.record) as { subject: string }).subject, ENTRY_ID);

    // Its source sends it again, changed: stored, still not listed.
    await putRemoteEntry(registry.ctx.database.db, entry('Pays invoices, now faster'), Date.now());
    assert.deepEqual(await found(), []);

    const again = await operator('POST', path('suspend'), { reason: 'spam' });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json<{ code: string }>().code, 'NOT_SUSPENDABLE');

    const restored = await operator('POST', path('restore'), { reason: 'mistaken' });
    assert.equal(restored.statusCode, 200, restored.body);
    assert.deepEqual(await found(), [`${MIRRORED_DID} Pays invoices, now faster`]);
    const twice = await operator('POST', path('restore'), { reason: 'mistaken' });
    assert.equal(twice.statusCode, 409);
    assert.equal(twice.json<{ code: string }>().code, 'NOT_SUSPENDED');
  });

  test('an unknown entry, or no operator token, is refused', async () => {
    const unknown = await operator(
      'POST',
      `/api/admin/entries/${encodeURIComponent('a2a:https://nowhere.example/card')}/suspend`,
      {
        reason: 'spam',
      },
    );
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json<{ code: string }>().code, 'REMOTE_ENTRY_NOT_FOUND');
    const anonymous = await registry.app.inject({
      method: 'POST',
      url: path('suspend'),
      payload: { reason: 'spam' },
    });
    assert.equal(anonymous.statusCode, 401);
  });
});
