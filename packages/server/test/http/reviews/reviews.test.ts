import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  editReview,
  getJson,
  insertTask,
  registerNamed,
  registerReviewers,
  submitReview,
  type ReviewJson,
} from '../../support/discovery-helpers.js';
import { agentPath, bearer } from '@agent-registry/testkit';
import { startRegistry, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';

describe('reviews', () => {
  let registry: TestRegistry;
  let target: Registered;
  before(async () => {
    registry = await startRegistry({ REVIEW_RATE_LIMIT: '1000' });
    target = await registerNamed(registry, 'Reviewed agent');
  });
  after(() => registry.close());

  /** A fresh reviewer and a fresh target, so each case starts without reviews or rate-limit history. */
  const pair = async (): Promise<{ reviewer: Registered; target: Registered }> => ({
    reviewer: await registerNamed(registry, 'Reviewer'),
    target: await registerNamed(registry, 'Target'),
  });

  describe('POST /api/reviews', () => {
    test('201 with the review; the target profile counts it', async () => {
      const { reviewer, target } = await pair();
      const response = await submitReview(registry, reviewer.token, {
        target_did: target.did,
        rating: 8.75,
        comment: 'Fast and accurate',
      });
      assert.equal(response.statusCode, 201, response.body);
      const review = response.json<ReviewJson>();
      assert.match(review.review_id, /^[0-9a-f-]{36}$/);
      assert.deepEqual(
        { ...review, review_id: undefined },
        {
          review_id: undefined,
          reviewer_did: reviewer.did,
          target_did: target.did,
          rating: 8.75,
          comment: 'Fast and accurate',
          created_at: registry.clock.now(),
          updated_at: registry.clock.now(),
          is_edited: false,
          edit_count: 0,
          verified: false,
        },
      );
      const profile = (await getJson(registry, agentPath(target.did))).json();
      assert.equal(profile.total_reviews, 1);
      assert.equal(profile.average_rating, 8.75);
    });

    test('a comment is optional: absent, null or "" is stored as null', async () => {
      for (const comment of [undefined, null, '']) {
        const { reviewer, target } = await pair();
        const body = comment === undefined ? {} : { comment };
        const response = await submitReview(registry, reviewer.token, {
          target_did: target.did,
          rating: 5,
          ...body,
        });
        assert.equal(response.statusCode, 201, response.body);
        assert.equal(response.json().comment, null);
      }
    });

    test('ratings 1.00 to 10.00 with at most two decimals are exact, without binary rounding', async () => {
      for (const rating of [1, 1.0, 1.1, 1.13, 2.01, 5.5, 9.99, 9.9, 10, 10.0, 4.35, 0.29 * 100 - 27]) {
        const { reviewer, target } = await pair();
        const response = await submitReview(registry, reviewer.token, { target_did: target.did, rating });
        // 0.29 * 100 - 27 is 2.0000000000000036 in binary floating point: three decimals and more.
        if (rating === 0.29 * 100 - 27) {
          assert.equal(response.statusCode, 400, `${rating}: ${response.body}`);
          continue;
        }
        assert.equal(response.statusCode, 201, `${rating}: ${response.body}`);
        assert.equal(response.json().rating, rating);
        const reputation = (await getJson(registry, agentPath(target.did, '/reputation'))).json();
        assert.equal(reputation.average_rating, rating);
      }
    });

    test('400 INVALID_RATING outside 1.00-10.00 or with more than two decimals', async () => {
      const { reviewer, target } = await pair();
      for (const rating of [1.005, 9.999, 5.555, 0.99, 10.01, 0, -1, 11, 100, 1e-7, 1e21]) {
        const response = await submitReview(registry, reviewer.token, { target_did: target.did, rating });
        assert.equal(response.statusCode, 400, `${rating}: ${response.body}`);
        assert.equal(response.json().code, 'INVALID_RATING', String(rating));
      }
      // The raw JSON text the client wrote, not only what JavaScript would produce.
      for (const raw of ['1.005', '10.001', '0.5', '1.131']) {
        const response = await registry.app.inject({
          method: 'POST',
          url: '/api/reviews',
          headers: { ...bearer(reviewer.token), 'content-type': 'application/json' },
          payload: `{"target_did":${JSON.stringify(target.did)},"rating":${raw}}`,
        });
        assert.equal(response.statusCode, 400, `${raw}: ${response.body}`);
        assert.equal(response.json().code, 'INVALID_RATING');
      }
      for (const rating of ['5', null, true, [5], { value: 5 }]) {
        const response = await submitReview(registry, reviewer.token, { target_did: target.did, rating });
        assert.equal(response.statusCode, 400, `${JSON.stringify(rating)}: ${response.body}`);
        assert.equal(response.json().code, 'VALIDATION_FAILED');
      }
      const missing = await submitReview(registry, reviewer.token, { target_did: target.did });
      assert.equal(missing.statusCode, 400);
      const reputation = (await getJson(registry, agentPath(target.did, '/reputation'))).json();
      assert.equal(reputation.total_reviews, 0, 'nothing was stored');
    });

    test('comments of up to 1000 characters; 1001 is a 400', async () => {
      const { reviewer, target } = await pair();
      const tooLong = await submitReview(registry, reviewer.token, {
        target_did: target.did,
        rating: 7,
        comment: 'x'.repeat(1001),
      });
      assert.equal(tooLong.statusCode, 400, tooLong.body);
      assert.equal(tooLong.json().code, 'VALIDATION_FAILED');
      assert.match(tooLong.json().details, /comment/);
      // 1000 characters, counted as characters (code points), not UTF-16 units.
      const longest = await submitReview(registry, reviewer.token, {
        target_did: target.did,
        rating: 7,
        comment: '😀'.repeat(1000),
      });
      assert.equal(longest.statusCode, 201, longest.body);
      assert.equal([...longest.json().comment].length, 1000);
    });

    test('400 for a missing or malformed target DID', async () => {
      const { reviewer } = await pair();
      for (const target_did of ['not-a-did', 'did:key:z6Mk', '']) {
        const response = await submitReview(registry, reviewer.token, { target_did, rating: 5 });
        assert.equal(response.statusCode, 400, `${target_did}: ${response.body}`);
        assert.equal(response.json().code, 'INVALID_DID');
      }
      const missing = await submitReview(registry, reviewer.token, { rating: 5 });
      assert.equal(missing.statusCode, 400);
      assert.equal(missing.json().code, 'VALIDATION_FAILED');
    });

    test('401 without a token or with a bad one', async () => {
      const none = await submitReview(registry, undefined, { target_did: target.did, rating: 5 });
      assert.equal(none.statusCode, 401);
      assert.equal(none.json().code, 'TOKEN_MISSING');
      const bad = await submitReview(registry, 'not.a.jwt', { target_did: target.did, rating: 5 });
      assert.equal(bad.statusCode, 401);
      assert.equal(bad.json().code, 'TOKEN_INVALID');
    });

    test('403 SELF_REVIEW for reviewing oneself', async () => {
      const response = await submitReview(registry, target.token, { target_did: target.did, rating: 10 });
      assert.equal(response.statusCode, 403, response.body);
      assert.equal(response.json().code, 'SELF_REVIEW');
    });

    test('404 for an unknown or a deactivated target', async () => {
      const { reviewer, target } = await pair();
      const unknown = await submitReview(registry, reviewer.token, {
        target_did: `did:web:localhost%3A8080:agent:${'cd'.repeat(16)}`,
        rating: 5,
      });
      assert.equal(unknown.statusCode, 404, unknown.body);
      assert.equal(unknown.json().code, 'AGENT_NOT_FOUND');
      const deactivated = await registry.app.inject({
        method: 'DELETE',
        url: agentPath(target.did),
        headers: bearer(target.token),
      });
      assert.equal(deactivated.statusCode, 200);
      const response = await submitReview(registry, reviewer.token, { target_did: target.did, rating: 5 });
      assert.equal(response.statusCode, 404, response.body);
      assert.equal(response.json().code, 'AGENT_NOT_FOUND');
    });

    test('409 REVIEW_EXISTS for a second review of the same agent, also when both race', async () => {
      const { reviewer, target } = await pair();
      const first = await submitReview(registry, reviewer.token, { target_did: target.did, rating: 6 });
      assert.equal(first.statusCode, 201);
      const second = await submitReview(registry, reviewer.token, { target_did: target.did, rating: 9 });
      assert.equal(second.statusCode, 409, second.body);
      assert.equal(second.json().code, 'REVIEW_EXISTS');

      const racing = await pair();
      const responses = await Promise.all(
        Array.from({ length: 8 }, (_, index) =>
          submitReview(registry, racing.reviewer.token, { target_did: racing.target.did, rating: 2 + index }),
        ),
      );
      assert.deepEqual(
        responses.map((response) => response.statusCode).sort(),
        [201, 409, 409, 409, 409, 409, 409, 409],
      );
      const reputation = (await getJson(registry, agentPath(racing.target.did, '/reputation'))).json();
      assert.equal(reputation.total_reviews, 1);
    });

    test('a did:pkh target may be named in any letter case', async () => {
      const reviewer = await registerNamed(registry, 'Case reviewer');
      const { secp256k1Agent } = await import('@agent-registry/testkit');
      const { register } = await import('@agent-registry/testkit/in-process');
      const agent = secp256k1Agent();
      const pkh = await register(registry, agent);
      const lower = pkh.did.replace(agent.wallet.address, agent.wallet.address.toLowerCase());
      const response = await submitReview(registry, reviewer.token, { target_did: lower, rating: 7 });
      assert.equal(response.statusCode, 201, response.body);
      assert.equal(response.json().target_did, pkh.did);
    });
  });

  describe('verified reviews', () => {
    test('a completed task from the reviewer to the target makes the review verified', async () => {
      const { reviewer, target } = await pair();
      const taskId = await insertTask(registry, reviewer.did, target.did, 'completed');
      const response = await submitReview(registry, reviewer.token, {
        target_did: target.did,
        rating: 9,
        call_record_id: taskId,
      });
      assert.equal(response.statusCode, 201, response.body);
      assert.equal(response.json().verified, true);
      const reputation = (await getJson(registry, agentPath(target.did, '/reputation'))).json();
      assert.equal(reputation.verified_reviews, 1);
    });

    test('an empty or null call_record_id is an ordinary, unverified review', async () => {
      for (const call_record_id of [null, '']) {
        const { reviewer, target } = await pair();
        const response = await submitReview(registry, reviewer.token, {
          target_did: target.did,
          rating: 6,
          call_record_id,
        });
        assert.equal(response.statusCode, 201, response.body);
        assert.equal(response.json().verified, false);
      }
    });

    test('400 with a clear code for any other call_record_id, and nothing is stored', async () => {
      const { reviewer, target } = await pair();
      const other = await registerNamed(registry, 'Other');
      const cases: [string, string][] = [
        ['00000000-0000-7000-8000-000000000000', 'CALL_RECORD_NOT_FOUND'],
        [await insertTask(registry, other.did, target.did, 'completed'), 'CALL_RECORD_NOT_FOUND'],
        [await insertTask(registry, reviewer.did, other.did, 'completed'), 'CALL_RECORD_TARGET_MISMATCH'],
        [await insertTask(registry, reviewer.did, target.did, 'pending'), 'CALL_RECORD_NOT_COMPLETED'],
        [await insertTask(registry, reviewer.did, target.did, 'processing'), 'CALL_RECORD_NOT_COMPLETED'],
        [await insertTask(registry, reviewer.did, target.did, 'failed'), 'CALL_RECORD_NOT_COMPLETED'],
        [await insertTask(registry, reviewer.did, target.did, 'timeout'), 'CALL_RECORD_NOT_COMPLETED'],
        [await insertTask(registry, target.did, reviewer.did, 'completed'), 'CALL_RECORD_NOT_FOUND'],
      ];
      for (const [call_record_id, code] of cases) {
        const response = await submitReview(registry, reviewer.token, {
          target_did: target.did,
          rating: 9,
          call_record_id,
        });
        assert.equal(response.statusCode, 400, `${code}: ${response.body}`);
        assert.equal(response.json().code, code);
      }
      const tooLong = await submitReview(registry, reviewer.token, {
        target_did: target.did,
        rating: 9,
        call_record_id: 'x'.repeat(129),
      });
      assert.equal(tooLong.statusCode, 400);
      const reputation = (await getJson(registry, agentPath(target.did, '/reputation'))).json();
      assert.equal(reputation.total_reviews, 0);
    });
  });

  describe('GET /api/agents/{did}/reviews and /api/reviews/my', () => {
    test('newest first, paginated, with an exact total', async () => {
      const subject = await registerNamed(registry, 'Popular');
      const reviewers = await registerReviewers(registry, 5);
      for (const [index, reviewer] of reviewers.entries()) {
        registry.clock.advance(1000);
        const response = await submitReview(registry, reviewer.token, {
          target_did: subject.did,
          rating: index + 1,
        });
        assert.equal(response.statusCode, 201);
      }
      const all = await getJson(registry, agentPath(subject.did, '/reviews'));
      assert.equal(all.statusCode, 200, all.body);
      const body = all.json();
      assert.equal(body.total, 5);
      assert.equal(body.limit, 50);
      assert.equal(body.offset, 0);
      assert.deepEqual(
        body.reviews.map((review: ReviewJson) => review.rating),
        [5, 4, 3, 2, 1],
      );
      const page = (await getJson(registry, agentPath(subject.did, '/reviews?limit=2&offset=2'))).json();
      assert.equal(page.total, 5);
      assert.equal(page.limit, 2);
      assert.equal(page.offset, 2);
      assert.deepEqual(
        page.reviews.map((review: ReviewJson) => review.rating),
        [3, 2],
      );
      const beyond = (await getJson(registry, agentPath(subject.did, '/reviews?offset=10'))).json();
      assert.deepEqual(beyond.reviews, []);
      assert.equal(beyond.total, 5);
    });

    test('an agent without reviews, or an unknown one, has an empty list', async () => {
      for (const did of [
        (await registerNamed(registry, 'Quiet')).did,
        `did:web:localhost%3A8080:agent:${'ef'.repeat(16)}`,
      ]) {
        const response = await getJson(registry, agentPath(did, '/reviews'));
        assert.equal(response.statusCode, 200, response.body);
        assert.deepEqual(response.json(), { reviews: [], total: 0, limit: 50, offset: 0, next_cursor: null });
      }
    });

    test('400 for a missing or malformed DID and for out-of-range pagination', async () => {
      for (const url of [
        agentPath('not-a-did', '/reviews'),
        '/api/agents/%20/reviews',
        agentPath(target.did, '/reviews?limit=0'),
        agentPath(target.did, '/reviews?limit=101'),
        agentPath(target.did, '/reviews?offset=-1'),
        agentPath(target.did, '/reviews?limit=ten'),
      ]) {
        const response = await getJson(registry, url);
        assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
        assert.ok(['INVALID_DID', 'VALIDATION_FAILED'].includes(response.json().code));
      }
      const maximum = await getJson(registry, agentPath(target.did, '/reviews?limit=100'));
      assert.equal(maximum.statusCode, 200);
    });

    test('/api/reviews/my lists the caller’s own reviews; 401 without a token', async () => {
      const reviewer = await registerNamed(registry, 'Prolific');
      const targets = [await registerNamed(registry, 'T1'), await registerNamed(registry, 'T2')];
      for (const subject of targets) {
        registry.clock.advance(1000);
        await submitReview(registry, reviewer.token, { target_did: subject.did, rating: 7 });
      }
      const mine = await getJson(registry, '/api/reviews/my', reviewer.token);
      assert.equal(mine.statusCode, 200, mine.body);
      const body = mine.json();
      assert.equal(body.total, 2);
      assert.deepEqual(
        body.reviews.map((review: ReviewJson) => review.target_did),
        [targets[1]!.did, targets[0]!.did],
      );
      assert.ok(body.reviews.every((review: ReviewJson) => review.reviewer_did === reviewer.did));
      const paged = (await getJson(registry, '/api/reviews/my?limit=1&offset=1', reviewer.token)).json();
      assert.equal(paged.reviews.length, 1);
      assert.equal(paged.total, 2);
      const nobody = await getJson(registry, '/api/reviews/my', (await registerNamed(registry, 'New')).token);
      assert.deepEqual(nobody.json(), { reviews: [], total: 0, limit: 50, offset: 0, next_cursor: null });
      const none = await getJson(registry, '/api/reviews/my');
      assert.equal(none.statusCode, 401);
      const bad = await getJson(registry, '/api/reviews/my', 'garbage');
      assert.equal(bad.statusCode, 401);
    });
  });

  describe('PUT /api/reviews/{review_id}', () => {
    const submitted = async (rating = 5, comment: string | null = 'first') => {
      const { reviewer, target } = await pair();
      const response = await submitReview(registry, reviewer.token, {
        target_did: target.did,
        rating,
        comment,
      });
      assert.equal(response.statusCode, 201, response.body);
      return { reviewer, target, review: response.json<ReviewJson>() };
    };

    test('200: the author edits within the window; is_edited and edit_count kept; aggregates follow', async () => {
      const { reviewer, target, review } = await submitted(5);
      registry.clock.advance(60_000);
      const first = await editReview(registry, reviewer.token, review.review_id, {
        rating: 9,
        comment: 'better',
      });
      assert.equal(first.statusCode, 200, first.body);
      assert.deepEqual(first.json(), {
        ...review,
        rating: 9,
        comment: 'better',
        updated_at: registry.clock.now(),
        is_edited: true,
        edit_count: 1,
      });
      // Absent comment keeps it; the rating limit is from the current rating (9 -> 5.5 is 3.5).
      const second = await editReview(registry, reviewer.token, review.review_id, { rating: 5.5 });
      assert.equal(second.statusCode, 200, second.body);
      assert.equal(second.json().comment, 'better');
      assert.equal(second.json().edit_count, 2);
      const third = await editReview(registry, reviewer.token, review.review_id, {
        rating: 5.5,
        comment: '',
      });
      assert.equal(third.json().comment, null);
      assert.equal(third.json().edit_count, 3);

      const listed = (await getJson(registry, agentPath(target.did, '/reviews'))).json().reviews[0];
      assert.deepEqual(listed, third.json());
      const profile = (await getJson(registry, agentPath(target.did))).json();
      assert.equal(profile.average_rating, 5.5);
      assert.equal(profile.total_reviews, 1);
    });

    test('a change of exactly 4.0 either way is allowed; 4.01 is a 400', async () => {
      const { reviewer, review } = await submitted(5);
      const up = await editReview(registry, reviewer.token, review.review_id, { rating: 9 });
      assert.equal(up.statusCode, 200, up.body);
      const down = await editReview(registry, reviewer.token, review.review_id, { rating: 5 });
      assert.equal(down.statusCode, 200, down.body);
      const tooFar = await editReview(registry, reviewer.token, review.review_id, { rating: 9.01 });
      assert.equal(tooFar.statusCode, 400, tooFar.body);
      assert.equal(tooFar.json().code, 'RATING_CHANGE_TOO_LARGE');
      const belowScale = await editReview(registry, reviewer.token, review.review_id, { rating: 0.99 });
      assert.equal(belowScale.json().code, 'INVALID_RATING');
      const lowest = await editReview(registry, reviewer.token, review.review_id, { rating: 1 });
      assert.equal(lowest.statusCode, 200, lowest.body);
      const backUp = await editReview(registry, reviewer.token, review.review_id, { rating: 5.01 });
      assert.equal(backUp.json().code, 'RATING_CHANGE_TOO_LARGE');
      const bad = await editReview(registry, reviewer.token, review.review_id, { rating: 5.005 });
      assert.equal(bad.json().code, 'INVALID_RATING');
      const missing = await editReview(registry, reviewer.token, review.review_id, { comment: 'no rating' });
      assert.equal(missing.statusCode, 400);
      const long = await editReview(registry, reviewer.token, review.review_id, {
        rating: 5,
        comment: 'x'.repeat(1001),
      });
      assert.equal(long.statusCode, 400);
    });

    test('the edit window is 10 minutes from creation: 600 s is allowed, 600.001 s is 403', async () => {
      const early = await submitted(5);
      registry.clock.advance(10 * 60 * 1000);
      const atLimit = await editReview(registry, early.reviewer.token, early.review.review_id, { rating: 6 });
      assert.equal(atLimit.statusCode, 200, atLimit.body);
      registry.clock.advance(1);
      const late = await editReview(registry, early.reviewer.token, early.review.review_id, { rating: 7 });
      assert.equal(late.statusCode, 403, late.body);
      assert.equal(late.json().code, 'EDIT_WINDOW_CLOSED');
    });

    test('403 for anyone but the author, 404 for an unknown review, 401 without a token', async () => {
      const { target, review } = await submitted(5);
      const stranger = await registerNamed(registry, 'Stranger');
      for (const token of [stranger.token, target.token]) {
        const response = await editReview(registry, token, review.review_id, { rating: 6 });
        assert.equal(response.statusCode, 403, response.body);
        assert.equal(response.json().code, 'NOT_REVIEW_AUTHOR');
      }
      const unknown = await editReview(registry, stranger.token, '01900000-0000-7000-8000-000000000000', {
        rating: 6,
      });
      assert.equal(unknown.statusCode, 404);
      assert.equal(unknown.json().code, 'REVIEW_NOT_FOUND');
      const none = await editReview(registry, undefined, review.review_id, { rating: 6 });
      assert.equal(none.statusCode, 401);
      const bad = await editReview(registry, 'x.y.z', review.review_id, { rating: 6 });
      assert.equal(bad.statusCode, 401);
    });

    test('404 when the reviewed agent has been deactivated since', async () => {
      const { reviewer, target, review } = await submitted(5);
      await registry.app.inject({
        method: 'DELETE',
        url: agentPath(target.did),
        headers: bearer(target.token),
      });
      const response = await editReview(registry, reviewer.token, review.review_id, { rating: 6 });
      assert.equal(response.statusCode, 404, response.body);
      assert.equal(response.json().code, 'AGENT_NOT_FOUND');
    });
  });
});

describe('review rate limit', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry({ REVIEW_RATE_LIMIT: '3', REVIEW_RATE_WINDOW_SECONDS: '600' });
  });
  after(() => registry.close());

  test('429 with a JSON body and Retry-After past the limit; allowed again when the window moves', async () => {
    const reviewer = await registerNamed(registry, 'Busy reviewer');
    const targets = await registerReviewers(registry, 5);
    for (const subject of targets.slice(0, 3)) {
      const response = await submitReview(registry, reviewer.token, { target_did: subject.did, rating: 8 });
      assert.equal(response.statusCode, 201, response.body);
      registry.clock.advance(60_000);
    }
    // The first review is 180 s old; it leaves the 600 s window in 420 s.
    const limited = await submitReview(registry, reviewer.token, { target_did: targets[3]!.did, rating: 8 });
    assert.equal(limited.statusCode, 429, limited.body);
    assert.equal(limited.headers['retry-after'], '420');
    assert.match(String(limited.headers['content-type']), /application\/json/);
    assert.equal(limited.json().code, 'REVIEW_RATE_LIMITED');
    assert.equal(typeof limited.json().error, 'string');
    assert.equal(typeof limited.json().details, 'string');

    // Another reviewer is not affected.
    const other = await registerNamed(registry, 'Calm reviewer');
    const fine = await submitReview(registry, other.token, { target_did: targets[3]!.did, rating: 8 });
    assert.equal(fine.statusCode, 201);

    registry.clock.advance(419_000);
    const stillLimited = await submitReview(registry, reviewer.token, {
      target_did: targets[3]!.did,
      rating: 8,
    });
    assert.equal(stillLimited.statusCode, 429);
    assert.equal(stillLimited.headers['retry-after'], '1');
    registry.clock.advance(1000);
    const allowed = await submitReview(registry, reviewer.token, { target_did: targets[3]!.did, rating: 8 });
    assert.equal(allowed.statusCode, 201, allowed.body);
    // Edits are not submissions and are not limited.
    const edit = await editReview(registry, reviewer.token, allowed.json().review_id, { rating: 9 });
    assert.equal(edit.statusCode, 200);
  });

  test('concurrent submissions by one reviewer cannot exceed the limit', async () => {
    const reviewer = await registerNamed(registry, 'Burst reviewer');
    const targets = await registerReviewers(registry, 8);
    const responses = await Promise.all(
      targets.map((subject) =>
        submitReview(registry, reviewer.token, { target_did: subject.did, rating: 6 }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    assert.deepEqual(statuses, [201, 201, 201, 429, 429, 429, 429, 429]);
    const mine = (await getJson(registry, '/api/reviews/my', reviewer.token)).json();
    assert.equal(mine.total, 3);
  });

  test('REVIEW_RATE_LIMIT, REVIEW_RATE_WINDOW_SECONDS and REPUTATION_REFRESH_SECONDS are validated at boot', async () => {
    const { loadConfig, ConfigError } = await import('../../../src/kernel/config.js');
    assert.throws(() => loadConfig({ REVIEW_RATE_LIMIT: '0' }), ConfigError);
    assert.throws(() => loadConfig({ REVIEW_RATE_WINDOW_SECONDS: 'soon' }), ConfigError);
    const defaults = loadConfig({});
    assert.equal(defaults.reviews.rateLimit, 10);
    assert.equal(defaults.reviews.rateWindowSeconds, 3600);
    assert.equal(defaults.reviews.reputationRefreshSeconds, 3600);
    assert.throws(() => loadConfig({ REPUTATION_REFRESH_SECONDS: '10' }), ConfigError);
  });
});
