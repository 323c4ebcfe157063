import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getJson, registerNamed, registerReviewers, submitReview } from '../../support/discovery-helpers.js';
import { agentPath, bearer } from '@agent-registry/testkit';
import { startRegistry, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';

interface ReviewsBody {
  reviews: { review_id: string }[];
  total: number;
  offset: number;
  next_cursor: string | null;
}

describe('review lists page by cursor', () => {
  let registry: TestRegistry;
  let target: Registered;
  let reviewers: Registered[];

  const list = async (url: string, token?: string) => {
    const response = await getJson(registry, url, token);
    assert.equal(response.statusCode, 200, response.body);
    return response.json<ReviewsBody>();
  };

  const follow = async (
    path: string,
    limit: number,
    token?: string,
    between: () => Promise<void> = async () => {},
  ) => {
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 100; pages += 1) {
      const page: ReviewsBody = await list(
        `${path}?limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`,
        token,
      );
      if (cursor !== null) assert.equal(page.offset, 0);
      ids.push(...page.reviews.map((review) => review.review_id));
      cursor = page.next_cursor;
      if (cursor === null) return ids;
      await between();
    }
    throw new Error('cursor paging did not end');
  };

  before(async () => {
    registry = await startRegistry();
    target = await registerNamed(registry, 'Reviewed Wren');
    reviewers = await registerReviewers(registry, 24);
    for (const [index, reviewer] of reviewers.entries()) {
      // Several reviews share a millisecond: the id settles their order.
      if (index % 3 === 0) registry.clock.advance(1000);
      const response = await submitReview(registry, reviewer.token, {
        target_did: target.did,
        rating: 1 + (index % 10),
      });
      assert.equal(response.statusCode, 201, response.body);
    }
  });

  after(async () => {
    await registry.close();
  });

  test("an agent's reviews: cursor pages equal offset pages, each review once", async () => {
    const all = (await list(`${agentPath(target.did, '/reviews')}?limit=100`)).reviews.map(
      (review) => review.review_id,
    );
    assert.equal(all.length, 24);
    assert.deepEqual(await follow(agentPath(target.did, '/reviews'), 5), all);
  });

  test('reviews written while a client pages neither repeat nor push others out', async () => {
    const before = (await list(`${agentPath(target.did, '/reviews')}?limit=100`)).reviews.map(
      (review) => review.review_id,
    );
    const late = await registerReviewers(registry, 6);
    let written = 0;
    const seen = await follow(agentPath(target.did, '/reviews'), 4, undefined, async () => {
      const reviewer = late[written];
      if (reviewer === undefined) return;
      written += 1;
      registry.clock.advance(1000);
      const response = await submitReview(registry, reviewer.token, { target_did: target.did, rating: 5 });
      assert.equal(response.statusCode, 201, response.body);
    });
    assert.ok(written > 0);
    assert.deepEqual(seen, before, 'the pages list exactly the reviews there when paging began');
  });

  test('my reviews page by cursor too', async () => {
    const reviewer = reviewers[0] as Registered;
    const others = await registerReviewers(registry, 7);
    for (const other of others) {
      registry.clock.advance(1000);
      const response = await submitReview(registry, reviewer.token, { target_did: other.did, rating: 6 });
      assert.equal(response.statusCode, 201, response.body);
    }
    const all = (await list('/api/reviews/my?limit=100', reviewer.token)).reviews.map(
      (review) => review.review_id,
    );
    assert.equal(all.length, 8);
    assert.deepEqual(await follow('/api/reviews/my', 3, reviewer.token), all);
  });

  test('a cursor from another list, a malformed one, or one with offset is a 400', async () => {
    const first = await list(`${agentPath(target.did, '/reviews')}?limit=2`);
    assert.ok(first.next_cursor !== null);
    const other = await registerNamed(registry, 'Other Wren');
    const reviewer = reviewers[1] as Registered;
    const cases: [string, string | undefined, RegExp][] = [
      [`${agentPath(other.did, '/reviews')}?cursor=${first.next_cursor}`, undefined, /another review list/],
      [`/api/reviews/my?cursor=${first.next_cursor}`, reviewer.token, /another review list/],
      [`${agentPath(target.did, '/reviews')}?cursor=zzz`, undefined, /unchanged/],
      [
        `${agentPath(target.did, '/reviews')}?offset=2&cursor=${first.next_cursor}`,
        undefined,
        /either cursor or offset/,
      ],
    ];
    for (const [url, token, message] of cases) {
      const response = await registry.app.inject({
        method: 'GET',
        url,
        headers: token === undefined ? {} : bearer(token),
      });
      assert.equal(response.statusCode, 400, url);
      const body = response.json<{ code: string; details: string }>();
      assert.equal(body.code, 'INVALID_CURSOR', url);
      assert.match(body.details, message, url);
    }
  });
});
