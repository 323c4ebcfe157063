import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  DAY_MS,
  aggregatesEverywhere,
  allReviewsOf,
  editReview,
  expectedAggregates,
  freshToken,
  getJson,
  insertTask,
  registerNamed,
  registerReviewers,
  submitReview,
  type ReviewJson,
} from './discovery-helpers.js';
import { agentPath, bearer, startRegistry, type Registered, type TestRegistry } from './helpers.js';

const emptyDistribution = { '1': 0, '2': 0, '3': 0, '4': 0, '5': 0, '6': 0, '7': 0, '8': 0, '9': 0, '10': 0 };

describe('GET /api/agents/{did}/reputation', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry({ REVIEW_RATE_LIMIT: '1000' });
  });
  after(() => registry.close());

  const reputationOf = async (did: string) => {
    const response = await getJson(registry, agentPath(did, '/reputation'));
    assert.equal(response.statusCode, 200, response.body);
    return response.json();
  };

  test('an agent without reviews is unrated: zeros everywhere', async () => {
    const agent = await registerNamed(registry, 'Unrated');
    assert.deepEqual(await reputationOf(agent.did), {
      did: agent.did,
      reputation_score: 0,
      average_rating: 0,
      rating_distribution: emptyDistribution,
      total_reviews: 0,
      verified_reviews: 0,
    });
  });

  test('400 for a missing or malformed DID, 404 for an unknown agent; a deactivated agent keeps its reputation', async () => {
    for (const url of [agentPath('nope', '/reputation'), '/api/agents/%20/reputation']) {
      const response = await getJson(registry, url);
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(response.json().code, 'INVALID_DID');
    }
    const unknown = await getJson(
      registry,
      agentPath(`did:web:localhost%3A8080:agent:${'12'.repeat(16)}`, '/reputation'),
    );
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().code, 'AGENT_NOT_FOUND');

    const agent = await registerNamed(registry, 'Retiring');
    const reviewer = await registerNamed(registry, 'Fan');
    await submitReview(registry, reviewer.token, { target_did: agent.did, rating: 8 });
    await registry.app.inject({ method: 'DELETE', url: agentPath(agent.did), headers: bearer(agent.token) });
    const kept = await reputationOf(agent.did);
    assert.equal(kept.total_reviews, 1);
    assert.equal(kept.average_rating, 8);
  });

  test('rating_distribution counts each rating under its whole part, "1" to "10"', async () => {
    const agent = await registerNamed(registry, 'Distributed');
    const ratings = [1, 1.99, 2, 5.5, 5.49, 9.99, 9, 10, 10];
    const reviewers = await registerReviewers(registry, ratings.length);
    for (const [index, rating] of ratings.entries()) {
      const response = await submitReview(registry, reviewers[index]!.token, {
        target_did: agent.did,
        rating,
      });
      assert.equal(response.statusCode, 201, response.body);
    }
    const reputation = await reputationOf(agent.did);
    assert.deepEqual(reputation.rating_distribution, {
      ...emptyDistribution,
      '1': 2,
      '2': 1,
      '5': 2,
      '9': 2,
      '10': 2,
    });
    assert.equal(reputation.total_reviews, ratings.length);
    // The plain mean, to two decimals: 54.97 / 9 = 6.1077...
    assert.equal(reputation.average_rating, 6.11);
  });

  describe('the reputation formula, with a fixed clock', () => {
    test('one 10 from a fresh account is 62.5, not 100; a verified one 70', async () => {
      const [a, b] = [await registerNamed(registry, 'Solo A'), await registerNamed(registry, 'Solo B')];
      const [fresh, caller] = await registerReviewers(registry, 2);
      await submitReview(registry, fresh!.token, { target_did: a.did, rating: 10 });
      // (3 * 50 + 1 * 100) / (3 + 1)
      assert.equal((await reputationOf(a.did)).reputation_score, 62.5);
      const taskId = await insertTask(registry, caller!.did, b.did);
      await submitReview(registry, caller!.token, { target_did: b.did, rating: 10, call_record_id: taskId });
      // (3 * 50 + 2 * 100) / (3 + 2)
      assert.equal((await reputationOf(b.did)).reputation_score, 70);
    });

    test('a ring of fresh accounts giving 10s stays well below 100; the score rises with evidence', async () => {
      const agent = await registerNamed(registry, 'Boosted');
      const ring = await registerReviewers(registry, 5);
      for (const member of ring)
        await submitReview(registry, member.token, { target_did: agent.did, rating: 10 });
      // (150 + 5 * 100) / (3 + 5)
      assert.equal((await reputationOf(agent.did)).reputation_score, 81.25);
    });

    test('ratings map 1 -> 0 and 10 -> 100; a mediocre agent sits below the middle', async () => {
      const agent = await registerNamed(registry, 'Mediocre');
      const reviewers = await registerReviewers(registry, 3);
      for (const reviewer of reviewers) {
        await submitReview(registry, reviewer.token, { target_did: agent.did, rating: 1 });
      }
      // (150 + 3 * 0) / 6
      const reputation = await reputationOf(agent.did);
      assert.equal(reputation.reputation_score, 25);
      assert.equal(reputation.average_rating, 1);
    });

    test('older reviews weigh e^(-age_days/180); stored scores decay when the refresh runs', async () => {
      const agent = await registerNamed(registry, 'Ageing');
      const [early, late] = await registerReviewers(registry, 2);
      const start = registry.clock.now();
      await submitReview(registry, early!.token, { target_did: agent.did, rating: 10 });
      registry.clock.advance(90 * DAY_MS);
      const taskId = await insertTask(registry, late!.did, agent.did);
      const lateReview = await submitReview(registry, await freshToken(registry, late!.did), {
        target_did: agent.did,
        rating: 1,
        call_record_id: taskId,
      });
      assert.equal(lateReview.statusCode, 201, lateReview.body);
      // (150 + e^-0.5 * 100 + 2 * 0) / (3 + e^-0.5 + 2)
      let reputation = await reputationOf(agent.did);
      assert.equal(reputation.reputation_score, 37.57);
      assert.equal(reputation.average_rating, 5.5, 'the average is the plain mean, not weighted');
      const reviews = await allReviewsOf(registry, agent.did);
      assert.deepEqual(expectedAggregates(reviews, registry.clock.now()), {
        reputation_score: 37.57,
        average_rating: 5.5,
        total_reviews: 2,
      });

      // 180 days later the stored score is unchanged until the periodic refresh recomputes it.
      registry.clock.advance(180 * DAY_MS);
      assert.equal((await reputationOf(agent.did)).reputation_score, 37.57);
      const refreshed = await registry.ctx.reputation.refreshAll();
      assert.ok(refreshed >= 1);
      reputation = await reputationOf(agent.did);
      // (150 + e^-1.5 * 100) / (3 + e^-1.5 + 2 e^-1): decayed evidence, pulled toward 50.
      assert.equal(reputation.reputation_score, 43.53);
      assert.equal(registry.clock.now() - start, 270 * DAY_MS);
      const everywhere = await aggregatesEverywhere(registry, agent.did, 'Ageing');
      assert.deepEqual(everywhere.profile, everywhere.reputation);
      assert.deepEqual(everywhere.search, everywhere.reputation);
    });

    test('an edit recomputes the score at the time of the edit', async () => {
      const agent = await registerNamed(registry, 'Edited');
      const [reviewer] = await registerReviewers(registry, 1);
      const review = (
        await submitReview(registry, reviewer!.token, { target_did: agent.did, rating: 6 })
      ).json();
      registry.clock.advance(5 * 60 * 1000);
      const edited = await editReview(registry, reviewer!.token, review.review_id, { rating: 10 });
      assert.equal(edited.statusCode, 200);
      const reputation = await reputationOf(agent.did);
      const expected = expectedAggregates([{ ...review, rating: 10 }], registry.clock.now());
      assert.equal(reputation.reputation_score, expected.reputation_score);
      assert.equal(reputation.average_rating, 10);
      assert.deepEqual(reputation.rating_distribution, { ...emptyDistribution, '10': 1 });
    });
  });

  describe('profile, search and reputation agree, also under concurrent reviews', () => {
    test('many reviews of one agent submitted at once keep the aggregates exact', async () => {
      const agent = await registerNamed(registry, 'Zanzibar concurrency target');
      const reviewers = await registerReviewers(registry, 40);
      // n / 100 is the double nearest to the two-decimal value, as JSON.parse would produce it.
      const ratings = reviewers.map((_, index) => (100 + ((index * 37) % 901)) / 100);
      const tasks = await Promise.all(
        reviewers.map((reviewer, index) =>
          index % 3 === 0 ? insertTask(registry, reviewer.did, agent.did) : Promise.resolve(null),
        ),
      );
      const responses = await Promise.all(
        reviewers.map((reviewer, index) =>
          submitReview(registry, reviewer.token, {
            target_did: agent.did,
            rating: ratings[index],
            call_record_id: tasks[index],
          }),
        ),
      );
      assert.deepEqual(
        responses.map((response) => response.statusCode),
        reviewers.map(() => 201),
      );
      const reviews = await allReviewsOf(registry, agent.did);
      assert.equal(reviews.length, 40);
      const expected = expectedAggregates(reviews, registry.clock.now());
      const everywhere = await aggregatesEverywhere(registry, agent.did, 'Zanzibar');
      assert.deepEqual(everywhere.profile, everywhere.reputation);
      assert.deepEqual(everywhere.search, everywhere.reputation);
      assert.equal(everywhere.reputation.total_reviews, expected.total_reviews);
      assert.equal(everywhere.reputation.average_rating, expected.average_rating);
      assert.ok(Math.abs(everywhere.reputation.reputation_score - expected.reputation_score) <= 0.01);
      const distribution = (await getJson(registry, agentPath(agent.did, '/reputation'))).json();
      const counted = Object.values(distribution.rating_distribution as Record<string, number>).reduce(
        (sum, count) => sum + count,
        0,
      );
      assert.equal(counted, 40);
      assert.equal(distribution.verified_reviews, 14);
    });

    test('concurrent edits, new reviews and a refresh interleave without losing an update', async () => {
      const agent = await registerNamed(registry, 'Quixotic interleaving target');
      const reviewers = await registerReviewers(registry, 20);
      const first = reviewers.slice(0, 10);
      const submitted: ReviewJson[] = [];
      for (const reviewer of first) {
        submitted.push(
          (
            await submitReview(registry, reviewer.token, { target_did: agent.did, rating: 5 })
          ).json<ReviewJson>(),
        );
      }
      registry.clock.advance(60_000);
      const operations = [
        ...first.map((reviewer, index) =>
          editReview(registry, reviewer.token, submitted[index]!.review_id, { rating: 5 + (index % 5) }),
        ),
        ...reviewers
          .slice(10)
          .map((reviewer, index) =>
            submitReview(registry, reviewer.token, { target_did: agent.did, rating: 2 + index / 4 }),
          ),
        registry.ctx.reputation.refreshAll(),
      ];
      const results = await Promise.all(operations);
      for (const result of results) {
        if (typeof result === 'number') continue;
        assert.ok([200, 201].includes(result.statusCode), result.body);
      }
      const reviews = await allReviewsOf(registry, agent.did);
      const expected = expectedAggregates(reviews, registry.clock.now());
      const everywhere = await aggregatesEverywhere(registry, agent.did, 'Quixotic');
      assert.deepEqual(everywhere.profile, everywhere.reputation);
      assert.deepEqual(everywhere.search, everywhere.reputation);
      assert.equal(everywhere.reputation.total_reviews, 20);
      assert.equal(everywhere.reputation.average_rating, expected.average_rating);
      assert.ok(Math.abs(everywhere.reputation.reputation_score - expected.reputation_score) <= 0.01);
    });
  });
});

describe('reputation model', () => {
  test('aggregateReviews is the documented formula', async () => {
    const { aggregateReviews, REPUTATION_MODEL } = await import('../src/services/reputation-model.js');
    assert.deepEqual(REPUTATION_MODEL, {
      priorMean: 50,
      priorWeight: 3,
      verifiedWeight: 2,
      unverifiedWeight: 1,
      decayDays: 180,
    });
    const now = 1_000 * DAY_MS;
    assert.deepEqual(aggregateReviews([], now), { total_reviews: 0, average_rating: 0, reputation_score: 0 });
    const reviews = [
      { rating: 1000, verified: false, createdAt: now - 90 * DAY_MS },
      { rating: 100, verified: true, createdAt: now },
    ];
    assert.deepEqual(aggregateReviews(reviews, now), {
      total_reviews: 2,
      average_rating: 5.5,
      reputation_score: 37.57,
    });
    // A review dated in the future (clock skew between nodes) weighs as a fresh one, never more.
    assert.deepEqual(aggregateReviews([{ rating: 1000, verified: false, createdAt: now + DAY_MS }], now), {
      total_reviews: 1,
      average_rating: 10,
      reputation_score: 62.5,
    });
    // Thousands of old top ratings approach, but never pass, 100.
    const many = Array.from({ length: 5000 }, () => ({ rating: 1000, verified: true, createdAt: now }));
    const score = aggregateReviews(many, now).reputation_score;
    assert.ok(score > 99.9 && score <= 100, String(score));
  });
});

describe('reputation across nodes', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry({ REVIEW_RATE_LIMIT: '2', REVIEW_RATE_WINDOW_SECONDS: '3600' });
  });
  after(() => registry.close());

  test('two nodes on one database: aggregates agree and the rate limit holds across them', async () => {
    const { startSecondNode } = await import('./discovery-helpers.js');
    const second = await startSecondNode(registry);
    try {
      const agents: Registered[] = await registerReviewers(registry, 3);
      const [target] = agents;
      const reviewers = await registerReviewers(registry, 6);
      const responses = await Promise.all(
        reviewers.map((reviewer, index) =>
          (index % 2 === 0 ? registry.app : second.app).inject({
            method: 'POST',
            url: '/api/reviews',
            headers: bearer(reviewer.token),
            payload: { target_did: target!.did, rating: 3 + index },
          }),
        ),
      );
      assert.deepEqual(
        responses.map((response) => response.statusCode),
        reviewers.map(() => 201),
      );
      const fromFirst = (await getJson(registry, agentPath(target!.did, '/reputation'))).json();
      const fromSecond = (
        await second.app.inject({ method: 'GET', url: agentPath(target!.did, '/reputation') })
      ).json();
      assert.deepEqual(fromFirst, fromSecond);
      assert.equal(fromFirst.total_reviews, 6);

      // One reviewer, limit 2 per hour, alternating nodes: the third submission is refused.
      const busy = reviewers[0]!;
      const other = await submitReview(registry, busy.token, { target_did: agents[1]!.did, rating: 5 });
      assert.equal(other.statusCode, 201);
      const third = await second.app.inject({
        method: 'POST',
        url: '/api/reviews',
        headers: bearer(busy.token),
        payload: { target_did: agents[2]!.did, rating: 5 },
      });
      assert.equal(third.statusCode, 429, third.body);
    } finally {
      await second.close();
    }
  });
});
