import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getJson, registerNamed, registerReviewers, submitReview } from '../../support/discovery-helpers.js';
import { startRegistry, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';

interface SearchBody {
  agents: {
    did: string;
    name: string;
    reputation_score: number;
    average_rating: number;
    total_reviews: number;
  }[];
  next_cursor: string | null;
}

/**
 * On a new registry every reviewer is younger than 30 days, so every review weighs nothing and every
 * reviewed agent reads exactly 50. The newest of them headed every list before, however poorly rated.
 */
describe('equal reputation: the better rated, then the more reviewed, comes first', () => {
  let registry: TestRegistry;
  const agents: Record<'busy' | 'good' | 'poor', Registered> = {} as never;

  const search = async (query: string): Promise<SearchBody> => {
    const response = await getJson(registry, `/api/agents/search?${query}`);
    assert.equal(response.statusCode, 200, response.body);
    return response.json<SearchBody>();
  };
  const names = (body: SearchBody) => body.agents.map((agent) => agent.name);

  before(async () => {
    registry = await startRegistry();
    // Registered oldest first: newest-first alone would give Poor, Good, Busy.
    for (const key of ['busy', 'good', 'poor'] as const) {
      registry.clock.advance(1000);
      agents[key] = await registerNamed(registry, `Tie ${key}`, { tags: ['tie'] });
    }
    const reviewers = await registerReviewers(registry, 4);
    const reviews: [Registered, Registered, number][] = [
      [reviewers[0]!, agents.busy, 9],
      [reviewers[1]!, agents.busy, 9],
      [reviewers[2]!, agents.good, 9],
      [reviewers[3]!, agents.poor, 3.5],
    ];
    for (const [reviewer, target, rating] of reviews) {
      const response = await submitReview(registry, reviewer.token, { target_did: target.did, rating });
      assert.equal(response.statusCode, 201, response.body);
    }
  });
  after(() => registry.close());

  test('fresh reviewers weigh nothing: all three read 50', async () => {
    const body = await search('tags=tie');
    assert.deepEqual(
      body.agents.map((agent) => [
        agent.name,
        agent.reputation_score,
        agent.average_rating,
        agent.total_reviews,
      ]),
      [
        ['Tie busy', 50, 9, 2],
        ['Tie good', 50, 9, 1],
        ['Tie poor', 50, 3.5, 1],
      ],
    );
  });

  test('the default order, sort=reputation and relevance ties all put the poorly rated agent last', async () => {
    for (const query of ['tags=tie', 'tags=tie&sort=reputation', 'q=tie']) {
      assert.deepEqual(names(await search(query)), ['Tie busy', 'Tie good', 'Tie poor'], query);
    }
    assert.deepEqual(names(await search('tags=tie&sort=reputation&order=asc')), [
      'Tie poor',
      'Tie good',
      'Tie busy',
    ]);
  });

  test('a cursor inside the tie continues after its agent', async () => {
    for (const order of ['desc', 'asc']) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const body = await search(
          `tags=tie&sort=reputation&order=${order}&limit=1${cursor === null ? '' : `&cursor=${cursor}`}`,
        );
        seen.push(...names(body));
        cursor = body.next_cursor;
      } while (cursor !== null);
      const expected = ['Tie busy', 'Tie good', 'Tie poor'];
      assert.deepEqual(seen, order === 'desc' ? expected : expected.reverse());
    }
  });

  test("the home page's list by reputation starts with the best rated of the tie", async () => {
    const page = await registry.app.inject({
      method: 'GET',
      url: '/?tags=tie',
      headers: { accept: 'text/html' },
    });
    assert.equal(page.statusCode, 200);
    const order = [...page.body.matchAll(/<h3 id="card-[^"]*"><a [^>]*>(Tie \w+)<\/a>/g)].map((m) => m[1]);
    assert.deepEqual(order, ['Tie busy', 'Tie good', 'Tie poor']);
  });
});
