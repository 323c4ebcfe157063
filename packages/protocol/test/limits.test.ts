import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  INVOCATION_LIMITS,
  REVIEW_LIMITS,
  SEARCH_LIMITS,
  SEARCH_ORDERS,
  SEARCH_SORTS,
} from '../src/index.js';

// The interface's own numbers (section 8 and the tables of section 4): the registry, the SDK and the
// CLI all read these constants, so a change here changes the public interface.
describe('limits', () => {
  it('search: pages of 50 (at most 100), offsets up to 9999, min_reputation 0-100, sorts and orders of section 4.4', () => {
    assert.equal(SEARCH_LIMITS.limitDefault, 50);
    assert.equal(SEARCH_LIMITS.limitMax, 100);
    assert.equal(SEARCH_LIMITS.offsetMax, 9999);
    assert.deepEqual(SEARCH_LIMITS.minReputation, { min: 0, max: 100 });
    assert.deepEqual(SEARCH_SORTS.slice(0, 2), ['reputation', 'created_at']);
    assert.deepEqual(SEARCH_ORDERS, ['asc', 'desc']);
  });

  it('search: each default is one of its choices', () => {
    assert.ok(SEARCH_LIMITS.sorts.includes(SEARCH_LIMITS.sortDefault));
    assert.ok(SEARCH_LIMITS.orders.includes(SEARCH_LIMITS.orderDefault));
    assert.ok(!(SEARCH_LIMITS.sorts as readonly string[]).includes(SEARCH_LIMITS.sortDefaultWithQuery));
  });

  it('invocation: timeout_ms default 30000 and at most 300000, payload 1 MB, pending tasks 10 (at most 50)', () => {
    assert.equal(INVOCATION_LIMITS.timeoutDefaultMs, 30_000);
    assert.equal(INVOCATION_LIMITS.timeoutMaxMs, 300_000);
    assert.ok(INVOCATION_LIMITS.timeoutMinMs <= INVOCATION_LIMITS.timeoutDefaultMs);
    assert.equal(INVOCATION_LIMITS.payloadMaxBytes, 2 ** 20);
    assert.equal(INVOCATION_LIMITS.pendingTasksDefaultLimit, 10);
    assert.equal(INVOCATION_LIMITS.pendingTasksMaxLimit, 50);
  });

  it('reviews: ratings 1.00-10.00 with two decimals, comments of 1000 characters, a 10-minute edit window of 4.0', () => {
    assert.equal(REVIEW_LIMITS.ratingMin, 1);
    assert.equal(REVIEW_LIMITS.ratingMax, 10);
    assert.equal(REVIEW_LIMITS.ratingDecimals, 2);
    assert.equal(REVIEW_LIMITS.commentMaxLength, 1000);
    assert.equal(REVIEW_LIMITS.reviewsPerAgent, 1);
    assert.equal(REVIEW_LIMITS.editWindowMs, 10 * 60 * 1000);
    assert.equal(REVIEW_LIMITS.editMaxRatingChange, 4);
    assert.equal(REVIEW_LIMITS.pageLimitDefault, 50);
    assert.equal(REVIEW_LIMITS.pageLimitMax, 100);
  });
});
