import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  aggregateReviews,
  aggregateReviewsV1,
  reviewerTrust,
} from '../../../src/modules/reviews/reputation-model.js';
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
  MATURE_LONE_REVIEWER_TRUST,
  profileOf,
  registerMatureReviewers,
  registerReviewers,
  submitReview,
  type ReviewJson,
} from '../../support/discovery-helpers.js';
import { agentPath, bearer, ed25519Agent } from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';

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

  // Reputation v2 changed every expectation of this block; each test says why. The v1 value
  // is kept in the test name so the change stays visible (docs/reputation.md, "From v1 to v2").
  describe('the reputation formula, with a fixed clock', () => {
    test('accounts registered just now carry no weight: one 10 (v1 62.5) and a verified one (v1 70) leave 50', async () => {
      const [a, b] = [await registerNamed(registry, 'Solo A'), await registerNamed(registry, 'Solo B')];
      const [fresh, caller] = await registerReviewers(registry, 2);
      await submitReview(registry, fresh!.token, { target_did: a.did, rating: 10 });
      // Why changed: maturity = reviewer age / 30 days = 0, so the weight is 0 and only the prior remains.
      assert.equal((await reputationOf(a.did)).reputation_score, 50);
      const taskId = await insertTask(registry, caller!.did, b.did);
      await submitReview(registry, caller!.token, { target_did: b.did, rating: 10, call_record_id: taskId });
      assert.equal((await reputationOf(b.did)).reputation_score, 50);
      assert.equal((await reputationOf(b.did)).total_reviews, 1, 'the review still counts as a review');
    });

    test('a ring of five fresh accounts giving 10s (v1 81.25) leaves the score at 50', async () => {
      const agent = await registerNamed(registry, 'Boosted');
      const ring = await registerReviewers(registry, 5);
      for (const member of ring)
        await submitReview(registry, member.token, { target_did: agent.did, rating: 10 });
      // Why changed: the attack v1 documented as its known limit; fresh identities weigh nothing now.
      assert.equal((await reputationOf(agent.did)).reputation_score, 50);
      assert.equal((await reputationOf(agent.did)).average_rating, 10, 'the plain average still shows them');
    });

    test('a 30-day-old reviewer who called nobody else: one 10 is 52.94, a verified one 55.56', async () => {
      const [a, b] = [await registerNamed(registry, 'Mature A'), await registerNamed(registry, 'Mature B')];
      const [plain, caller] = await registerMatureReviewers(registry, 2);
      await submitReview(registry, plain!.token, { target_did: a.did, rating: 10 });
      // trust = maturity 1 * breadth 0.25 * standing 0.75 = 0.1875: (150 + 0.1875 * 100) / 3.1875
      assert.equal((await reputationOf(a.did)).reputation_score, 52.94);
      const taskId = await insertTask(registry, caller!.did, b.did);
      await submitReview(registry, caller!.token, { target_did: b.did, rating: 10, call_record_id: taskId });
      // (150 + 2 * 0.1875 * 100) / (3 + 0.375)
      assert.equal((await reputationOf(b.did)).reputation_score, 55.56);
    });

    test('ratings map 1 -> 0 and 10 -> 100; three 1.00 (v1 25) give 42.11', async () => {
      const agent = await registerNamed(registry, 'Mediocre');
      const reviewers = await registerMatureReviewers(registry, 3);
      for (const reviewer of reviewers) {
        await submitReview(registry, reviewer.token, { target_did: agent.did, rating: 1 });
      }
      // Why changed: each lone reviewer weighs 0.1875, not 1: 150 / (3 + 3 * 0.1875).
      const reputation = await reputationOf(agent.did);
      assert.equal(reputation.reputation_score, 42.11);
      assert.equal(reputation.average_rating, 1);
    });

    test('older reviews weigh e^(-age_days/180); stored scores decay when the refresh runs', async () => {
      const agent = await registerNamed(registry, 'Ageing');
      const [early, late] = await registerMatureReviewers(registry, 2);
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
      // (150 + 0.1875 e^-0.5 * 100) / (3 + 0.1875 e^-0.5 + 2 * 0.1875)  (v1 37.57, every weight x 0.1875)
      let reputation = await reputationOf(agent.did);
      assert.equal(reputation.reputation_score, 46.26);
      assert.equal(reputation.average_rating, 5.5, 'the average is the plain mean, not weighted');
      const reviews = await allReviewsOf(registry, agent.did);
      assert.deepEqual(expectedAggregates(reviews, registry.clock.now(), MATURE_LONE_REVIEWER_TRUST), {
        reputation_score: 46.26,
        average_rating: 5.5,
        total_reviews: 2,
      });

      // 180 days later the stored score is unchanged until the periodic refresh recomputes it.
      registry.clock.advance(180 * DAY_MS);
      assert.equal((await reputationOf(agent.did)).reputation_score, 46.26);
      const refreshed = await registry.ctx.reputation.refreshAll();
      assert.ok(refreshed >= 1);
      reputation = await reputationOf(agent.did);
      // (150 + 0.1875 e^-1.5 * 100) / (3 + 0.1875 (e^-1.5 + 2 e^-1)): decayed evidence, pulled toward 50 (v1 43.53).
      assert.equal(reputation.reputation_score, 48.49);
      assert.equal(registry.clock.now() - start, 270 * DAY_MS);
      const everywhere = await aggregatesEverywhere(registry, agent.did, 'Ageing');
      assert.deepEqual(everywhere.profile, everywhere.reputation);
      assert.deepEqual(everywhere.search, everywhere.reputation);
    });

    test('an edit recomputes the score at the time of the edit', async () => {
      const agent = await registerNamed(registry, 'Edited');
      const [reviewer] = await registerMatureReviewers(registry, 1);
      const review = (
        await submitReview(registry, reviewer!.token, { target_did: agent.did, rating: 6 })
      ).json();
      registry.clock.advance(5 * 60 * 1000);
      const edited = await editReview(registry, reviewer!.token, review.review_id, { rating: 10 });
      assert.equal(edited.statusCode, 200);
      const reputation = await reputationOf(agent.did);
      const expected = expectedAggregates(
        [{ ...review, rating: 10 }],
        registry.clock.now(),
        MATURE_LONE_REVIEWER_TRUST,
      );
      assert.equal(reputation.reputation_score, expected.reputation_score);
      assert.equal(reputation.average_rating, 10);
      assert.deepEqual(reputation.rating_distribution, { ...emptyDistribution, '10': 1 });
    });

    test('linked identities (a referral) neither weigh nor verify each other; mutual reviews weigh a quarter', async () => {
      const target = await registerNamed(registry, 'Referrer');
      const referred = await register(registry, ed25519Agent(), profileOf('Referred'), {
        referrer: target.did,
      });
      const [honest] = await registerMatureReviewers(registry, 1);
      const token = await freshToken(registry, referred.did);
      const taskId = await insertTask(registry, referred.did, target.did);
      const review = await submitReview(registry, token, {
        target_did: target.did,
        rating: 10,
        call_record_id: taskId,
      });
      assert.equal(review.statusCode, 201);
      assert.equal(review.json().verified, true, 'the API still reports the call record');
      // The referral links the two: the 30-day-old referred account's verified 10 weighs nothing.
      assert.equal((await reputationOf(target.did)).reputation_score, 50);

      // Mutual praise: the honest reviewer and a peer review each other.
      const peer = await registerNamed(registry, 'Peer');
      await submitReview(registry, honest!.token, { target_did: peer.did, rating: 10 });
      assert.equal((await reputationOf(peer.did)).reputation_score, 52.94);
      registry.clock.advance(30 * DAY_MS);
      await submitReview(registry, await freshToken(registry, peer.did), {
        target_did: honest!.did,
        rating: 10,
      });
      await registry.ctx.reputation.refreshAll();
      // honest's review of peer is now reciprocated (x 0.25), and honest is now rated 52.94, so its
      // standing is 0.5 + 52.94 / 200; the review is 30 days old.
      const weight = 0.25 * (0.5 + 52.94 / 200) * 0.25 * Math.exp(-30 / 180);
      const expected = (150 + weight * 100) / (3 + weight);
      // Within 0.01: the stored standing score is itself rounded to two decimals.
      assert.ok(Math.abs((await reputationOf(peer.did)).reputation_score - expected) <= 0.01);
    });
  });

  describe('reviewer breadth, from calls through the broker', () => {
    /** A brokered call completed by its target through the real terminal transition. */
    async function completedCall(caller: string, target: string): Promise<string> {
      const id = await insertTask(registry, caller, target, 'pending');
      await registry.ctx.agentTasks.result({ did: target }, id, { ok: true });
      return id;
    }

    test('a reviewer who really used three other rated agents is proven; a call back removes one', async () => {
      const partners = [
        await registerNamed(registry, 'Partner 1'),
        await registerNamed(registry, 'Partner 2'),
        await registerNamed(registry, 'Partner 3'),
      ];
      const target = await registerNamed(registry, 'Broadly reviewed');
      const [rater, reviewer] = await registerMatureReviewers(registry, 2);
      for (const partner of partners) {
        await submitReview(registry, rater!.token, { target_did: partner.did, rating: 6 });
        await completedCall(reviewer!.did, partner.did);
      }
      const callId = await completedCall(reviewer!.did, target.did);
      const token = await freshToken(registry, reviewer!.did);
      await submitReview(registry, token, { target_did: target.did, rating: 10, call_record_id: callId });
      // trust = maturity 1 * breadth 1 * standing 0.75 = 0.75, verified: w = 1.5; (150 + 150) / 4.5
      assert.equal((await reputationOf(target.did)).reputation_score, 66.67);

      // Partner 1 calls the reviewer back: that pair no longer shows independent use, 2 partners remain,
      // so the review is unproven: trust 0.75 * 0.75, w = 1.125, capped at 1: (150 + 100) / 4.
      await completedCall(partners[0]!.did, reviewer!.did);
      await registry.ctx.reputation.refreshAll();
      assert.equal((await reputationOf(target.did)).reputation_score, 62.5);
    });
  });

  describe('profile, search and reputation agree, also under concurrent reviews', () => {
    test('many reviews of one agent submitted at once keep the aggregates exact', async () => {
      const agent = await registerNamed(registry, 'Zanzibar concurrency target');
      const reviewers = await registerMatureReviewers(registry, 40);
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
      const expected = expectedAggregates(reviews, registry.clock.now(), MATURE_LONE_REVIEWER_TRUST);
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
      const reviewers = await registerMatureReviewers(registry, 20);
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
      const expected = expectedAggregates(reviews, registry.clock.now(), MATURE_LONE_REVIEWER_TRUST);
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
  const now = 1_000 * DAY_MS;
  const lone = {
    reviewerCreatedAt: now - 365 * DAY_MS,
    reviewerScore: 0,
    reviewerRated: false,
    independentPartners: 0,
    reciprocal: false,
    linked: false,
  };
  const established = { ...lone, independentPartners: 5, reviewerRated: true, reviewerScore: 80 };

  test('reviewer trust is maturity x breadth x standing x reciprocity', () => {
    assert.equal(reviewerTrust(lone, now), 0.1875);
    assert.equal(reviewerTrust(established, now), 0.9);
    assert.equal(reviewerTrust({ ...established, reviewerCreatedAt: now - 15 * DAY_MS }, now), 0.45);
    assert.equal(reviewerTrust({ ...established, reciprocal: true }, now), 0.225);
    assert.equal(reviewerTrust({ ...lone, reviewerCreatedAt: now }, now), 0);
  });

  test('aggregateReviews is the documented formula (v2), and v1 is kept for comparison', () => {
    assert.deepEqual(aggregateReviews([], now), { total_reviews: 0, average_rating: 0, reputation_score: 0 });
    const reviews = [
      { ...established, rating: 1000, verified: false, createdAt: now - 90 * DAY_MS },
      { ...established, rating: 100, verified: true, createdAt: now },
    ];
    // (150 + 0.9 e^-0.5 * 100) / (3 + 0.9 e^-0.5 + 1.8); v1 gives the same reviews 37.57
    assert.deepEqual(aggregateReviews(reviews, now), {
      total_reviews: 2,
      average_rating: 5.5,
      reputation_score: 38.27,
    });
    assert.equal(aggregateReviewsV1(reviews, now).reputation_score, 37.57);
    // A review dated in the future (clock skew between nodes) weighs as a fresh one, never more.
    const future = [{ ...established, rating: 1000, verified: false, createdAt: now + DAY_MS }];
    assert.equal(aggregateReviews(future, now).reputation_score, 61.54);
    // However many, unverified reviews together weigh at most 1: (150 + 100) / 4.
    const praise = Array.from({ length: 500 }, () => ({
      ...established,
      rating: 1000,
      verified: false,
      createdAt: now,
    }));
    assert.equal(aggregateReviews(praise, now).reputation_score, 62.5);
    assert.equal(aggregateReviewsV1(praise, now).reputation_score, 99.7);
    // Thousands of verified top ratings from established reviewers approach, but never pass, 100.
    const many = Array.from({ length: 5000 }, () => ({
      ...established,
      rating: 1000,
      verified: true,
      createdAt: now,
    }));
    const score = aggregateReviews(many, now).reputation_score;
    assert.ok(score > 99.9 && score <= 100, String(score));
    // Linked reviewers weigh nothing, verified or not.
    assert.equal(aggregateReviews([{ ...many[0]!, linked: true }], now).reputation_score, 50);
  });
});

describe('reputation across nodes', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry({ REVIEW_RATE_LIMIT: '2', REVIEW_RATE_WINDOW_SECONDS: '3600' });
  });
  after(() => registry.close());

  test('two nodes on one database: aggregates agree and the rate limit holds across them', async () => {
    const { startSecondNode } = await import('../../support/discovery-helpers.js');
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
