import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  TEST_PUBLIC_URL,
  agentPath,
  bearer,
  defaultProfile,
  ed25519Agent,
  register,
  registrationBody,
  startRegistry,
  testDatabase,
  type TestAgent,
  type TestRegistry,
} from './helpers.js';

/**
 * Concurrent registrations over a listening server. On SQLite they share transactions (group commit,
 * a savepoint each); a registration that fails inside a group must fail alone and leave nothing.
 */
describe('concurrent registrations (group commit on SQLite)', () => {
  let registry: TestRegistry;
  let origin: string;
  before(async () => {
    registry = await startRegistry();
    origin = await registry.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => registry.close());

  const post = async (body: Record<string, unknown>) => {
    const response = await fetch(`${origin}/api/agents/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const bodyFor = (agent: TestAgent, name: string) =>
    registrationBody(agent, { ...defaultProfile(), name }, registry.clock.now(), {
      audience: TEST_PUBLIC_URL,
    });

  test('a duplicate key inside a group gets 409 alone; every other registration is stored and answered', async () => {
    const existing = await register(registry);
    const twice = ed25519Agent();
    const fresh = Array.from({ length: 24 }, () => ed25519Agent());
    const bodies = [
      ...(await Promise.all(fresh.map((agent, index) => bodyFor(agent, `Fresh ${index}`)))),
      await bodyFor(existing.agent, 'Existing again'),
      await bodyFor(twice, 'Twice A'),
      await bodyFor(twice, 'Twice B'),
      await bodyFor(existing.agent, 'Existing once more'),
    ];
    // Interleaved, so the failing rows sit between succeeding ones in a group.
    const order = bodies
      .map((_, index) => index)
      .sort((a, b) => ((a * 7) % bodies.length) - ((b * 7) % bodies.length));
    const answers = new Array<{ status: number; json: Record<string, unknown> }>(bodies.length);
    await Promise.all(
      order.map(async (index) => (answers[index] = await post(bodies[index] as Record<string, unknown>))),
    );

    const freshAnswers = answers.slice(0, fresh.length);
    for (const answer of freshAnswers) assert.equal(answer.status, 201, JSON.stringify(answer.json));
    const [existingAgain, twiceA, twiceB, existingOnceMore] = answers.slice(fresh.length);
    assert.equal(existingAgain?.status, 409);
    assert.equal(existingAgain?.json.code, 'PUBLIC_KEY_EXISTS');
    assert.equal(existingOnceMore?.status, 409);
    assert.deepEqual([twiceA?.status, twiceB?.status].sort(), [201, 409]);
    if (testDatabase === 'sqlite') {
      assert.ok(registry.ctx.registrationWrites.largestGroup > 1, 'registrations shared a transaction');
    }

    // Every 201 was committed: readable, its token accepted, in the change feed; the 409s left nothing.
    const stored = [...freshAnswers, twiceA?.status === 201 ? twiceA : twiceB];
    for (const answer of stored) {
      const did = answer?.json.did as string;
      const profile = await registry.app.inject({ url: agentPath(did) });
      assert.equal(profile.statusCode, 200);
      const renamed = await registry.app.inject({
        method: 'PUT',
        url: agentPath(did),
        headers: bearer(answer?.json.token as string),
        payload: { description: 'still here' },
      });
      assert.equal(renamed.statusCode, 200, renamed.body);
    }
    const { db } = registry.ctx.database;
    const byKey = async (agent: TestAgent) =>
      (await db.selectFrom('agents').select('did').where('public_key', '=', agent.publicKey).execute())
        .length;
    assert.equal(await byKey(existing.agent), 1);
    assert.equal(await byKey(twice), 1);
    const stamped = await db
      .selectFrom('agents')
      .select('change_seq')
      .where(
        'did',
        'in',
        stored.map((answer) => answer?.json.did as string),
      )
      .execute();
    assert.equal(stamped.length, stored.length);
    assert.ok(stamped.every((row) => row.change_seq !== null));
    assert.equal(new Set(stamped.map((row) => Number(row.change_seq))).size, stored.length);
    // Every stored agent is in the next search (the index follows the change feed).
    const found = await registry.app.inject({ url: '/api/agents/search?q=fresh&limit=100' });
    const foundDids = new Set(found.json<{ agents: { did: string }[] }>().agents.map((agent) => agent.did));
    for (const answer of freshAnswers) assert.ok(foundDids.has(answer.json.did as string), 'in the search');
  });
});
