import assert from 'node:assert/strict';
import { test } from 'node:test';
import { registerNamed, registerReviewers, submitReview } from '../../support/discovery-helpers.js';
import { agentPath, bearer } from '@agent-registry/testkit';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';

/** A counter of GET /metrics (the profile cache's hits and misses). */
async function metric(registry: TestRegistry, name: string): Promise<number> {
  const text = (await registry.app.inject({ url: '/metrics' })).body;
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `));
  assert.ok(line !== undefined, `${name} is not in /metrics`);
  return Number(line.slice(name.length + 1));
}

async function profile(registry: TestRegistry, did: string): Promise<Record<string, unknown>> {
  const response = await registry.app.inject({ url: agentPath(did) });
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
  return response.json();
}

// GET profile serves a serialised profile from a per-agent cache, checked against the agent's change
// number in the database on every read. Two registries on one database stand for two nodes: node A
// caches, node B writes, and A's next read must show the write.
test('a cached profile follows every write to the agent, made on this node or another', async () => {
  const nodeA = await startRegistry();
  const nodeB = await startRegistry({ PROFILE_CACHE_MB: '0' }, { database: nodeA.database });
  try {
    const agent = await registerNamed(nodeA, 'Cached Agent');
    const fresh = await profile(nodeB, agent.did);
    assert.deepEqual(await profile(nodeA, agent.did), fresh);
    const hitsBefore = await metric(nodeA, 'registry_profile_cache_hits_total');
    assert.deepEqual(await profile(nodeA, agent.did), fresh, 'the cached body is the fresh one');
    assert.equal(await metric(nodeA, 'registry_profile_cache_hits_total'), hitsBefore + 1);
    assert.equal(await metric(nodeB, 'registry_profile_cache_hits_total'), 0, 'PROFILE_CACHE_MB=0: no cache');

    const put = (path: string, payload: Record<string, unknown>) =>
      nodeB.app.inject({
        method: 'PUT',
        url: agentPath(agent.did, path),
        headers: bearer(agent.token),
        payload,
      });

    assert.equal((await put('', { name: 'Renamed Agent', tags: ['fresh'] })).statusCode, 200);
    const renamed = await profile(nodeA, agent.did);
    assert.equal(renamed.name, 'Renamed Agent');
    assert.deepEqual(renamed.tags, ['fresh']);

    assert.equal((await put('/invocation', { enabled: true, delivery_mode: 'queue' })).statusCode, 200);
    const invocable = await profile(nodeA, agent.did);
    assert.equal(invocable.invocation_enabled, true);
    assert.ok((invocable.endpoints as { type: string }[]).some((endpoint) => endpoint.type === 'invoke'));

    const [reviewer] = await registerReviewers(nodeB, 1);
    assert.ok(reviewer);
    const review = await submitReview(nodeB, reviewer.token, { target_did: agent.did, rating: 4 });
    assert.equal(review.statusCode, 201, review.body);
    assert.equal((await profile(nodeA, agent.did)).total_reviews, 1);

    // A service record appears with the first counted call, without a change number: such agents are
    // read afresh every time.
    await nodeB.ctx.database.db
      .insertInto('service_totals')
      .values({
        did: agent.did,
        capability: 'general',
        completed: 3,
        failed: 0,
        timeout: 0,
        last_completed_at: nodeB.clock.now(),
      })
      .execute();
    const measured = (await profile(nodeA, agent.did)).service_record as { all_time: { completed: number } };
    assert.equal(measured.all_time.completed, 3);
    assert.equal(
      await metric(nodeA, 'registry_profile_cache_entries'),
      0,
      'an agent with a service record leaves the cache',
    );
    assert.deepEqual(await profile(nodeA, agent.did), await profile(nodeB, agent.did));

    const deactivated = await nodeB.app.inject({
      method: 'DELETE',
      url: agentPath(agent.did),
      headers: bearer(agent.token),
    });
    assert.equal(deactivated.statusCode, 200, deactivated.body);
    assert.equal((await profile(nodeA, agent.did)).status, 'deactivated');
    assert.deepEqual(await profile(nodeA, agent.did), await profile(nodeB, agent.did));
  } finally {
    await nodeB.close();
    await nodeA.close();
  }
});

test('unknown and malformed DIDs answer as before, and are not cached', async () => {
  const registry = await startRegistry();
  try {
    const unknown = await registry.app.inject({
      url: agentPath(`did:web:localhost%3A8080:agent:${'0'.repeat(32)}`),
    });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().code, 'AGENT_NOT_FOUND');
    const malformed = await registry.app.inject({ url: agentPath('not-a-did') });
    assert.equal(malformed.statusCode, 400);
    assert.equal(malformed.json().code, 'INVALID_DID');
    assert.equal(await metric(registry, 'registry_profile_cache_entries'), 0);
  } finally {
    await registry.close();
  }
});
