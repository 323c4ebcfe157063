import { createHash } from 'node:crypto';
import type { Telemetry } from '../../telemetry/telemetry.js';
import { v7 as uuidv7 } from 'uuid';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/errors.js';
import { findAgentStatus } from '../agents/agents-store.js';
import {
  findCallRecord,
  findReview,
  findReviewByPair,
  insertReview,
  listReviews,
  lockAgentRows,
  reviewsSubmittedSince,
  updateReview,
  type ReviewListFilter,
  type ReviewRow,
} from './reviews-store.js';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  TooManyRequestsError,
  agentNotFound,
} from '../../kernel/errors.js';
import type { AuthenticatedAgent } from '../agents/authentication.js';
import { requireDid } from '../identity/did-param.js';
import { REVIEW_RULES } from '../../kernel/discovery-rules.js';
import { ratingFromHundredths, ratingHundredths } from './rating.js';
import type { ReputationService } from './reputation.js';
import type { EditReviewCommand, Review, ReviewsPage, ReviewsQuery, SubmitReviewCommand } from './schemas.js';

export interface ReviewRateLimit {
  maxReviews: number;
  windowMs: number;
}

export interface ReviewServiceDeps {
  db: Db;
  telemetry: Telemetry;
  clock: Clock;
  didWebDomain: string;
  reputation: ReputationService;
  rateLimit: ReviewRateLimit;
}

export class ReviewService {
  constructor(private readonly deps: ReviewServiceDeps) {}

  /**
   * One transaction: lock reviewer and target rows, check the target, the one-review rule, the call
   * record and the rate limit, insert, and recompute the target's aggregates from its reviews.
   */
  async submit(caller: AuthenticatedAgent, command: SubmitReviewCommand): Promise<Review> {
    const rating = ratingHundredths(command.rating);
    const target = requireDid(command.target_did, this.deps.didWebDomain).did;
    if (target === caller.did) {
      throw new ForbiddenError('SELF_REVIEW', 'An agent cannot review itself');
    }
    const callRecordId = command.call_record_id || null;
    const now = this.deps.clock.now();
    const row: ReviewRow = {
      id: uuidv7(),
      reviewer_did: caller.did,
      target_did: target,
      rating,
      comment: command.comment || null,
      verified: callRecordId === null ? 0 : 1,
      call_record_id: callRecordId,
      edit_count: 0,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.deps.db.transaction().execute(async (trx) => {
        await lockAgentRows(trx, [caller.did, target]);
        if ((await findAgentStatus(trx, target)) !== 'active') throw agentNotFound(target);
        if ((await findReviewByPair(trx, caller.did, target)) !== undefined) throw alreadyReviewed(target);
        if (callRecordId !== null) await assertCallRecord(trx, callRecordId, caller.did, target);
        await this.assertWithinRateLimit(trx, caller.did, now);
        await insertReview(trx, row);
        await this.deps.reputation.recompute(trx, target, now);
      });
    } catch (error) {
      // The unique (reviewer, target) index is the last word when two submissions race.
      if (isUniqueViolation(error)) throw alreadyReviewed(target);
      throw error;
    }
    this.deps.telemetry.reviewSubmitted({
      reviewId: row.id,
      reviewerDid: caller.did,
      targetDid: target,
      verified: row.verified === 1,
    });
    return toReview(row);
  }

  /** Only the author, within 10 minutes of creation, by at most 4.0 from the current rating. */
  async edit(caller: AuthenticatedAgent, reviewId: string, command: EditReviewCommand): Promise<Review> {
    const rating = ratingHundredths(command.rating);
    const now = this.deps.clock.now();
    return this.deps.db.transaction().execute(async (trx) => {
      const located = await findReview(trx, reviewId);
      if (located === undefined) throw reviewNotFound(reviewId);
      await lockAgentRows(trx, [located.target_did]);
      // Read again under the lock: a concurrent edit may have changed the rating.
      const review = (await findReview(trx, reviewId)) as ReviewRow;
      if (review.reviewer_did !== caller.did) {
        throw new ForbiddenError('NOT_REVIEW_AUTHOR', 'Only the author of a review may edit it');
      }
      const age = now - Number(review.created_at);
      if (age > REVIEW_RULES.editWindowMs) {
        throw new ForbiddenError(
          'EDIT_WINDOW_CLOSED',
          `A review can be edited for ${REVIEW_RULES.editWindowMs / 60_000} minutes after it was submitted; this one is ${Math.floor(age / 1000)} s old`,
        );
      }
      if (Math.abs(rating - review.rating) > REVIEW_RULES.maxRatingChangeHundredths) {
        throw new BadRequestError(
          'RATING_CHANGE_TOO_LARGE',
          `An edit may change the rating by at most ${REVIEW_RULES.maxRatingChangeHundredths / 100} either way; the current rating is ${ratingFromHundredths(review.rating)}`,
        );
      }
      if ((await findAgentStatus(trx, review.target_did)) !== 'active')
        throw agentNotFound(review.target_did);
      const comment =
        command.comment === undefined || command.comment === null ? review.comment : command.comment || null;
      await updateReview(trx, reviewId, { rating, comment, updated_at: now });
      await this.deps.reputation.recompute(trx, review.target_did, now);
      return toReview({ ...review, rating, comment, updated_at: now, edit_count: review.edit_count + 1 });
    });
  }

  /** Reviews of an agent, newest first. An agent without reviews, or unknown, has an empty list. */
  async listForAgent(rawDid: string | undefined, page: ReviewsQuery): Promise<ReviewsPage> {
    const did = requireDid(rawDid, this.deps.didWebDomain).did;
    return this.page({ target_did: did }, page);
  }

  async listByReviewer(caller: AuthenticatedAgent, page: ReviewsQuery): Promise<ReviewsPage> {
    return this.page({ reviewer_did: caller.did }, page);
  }

  /** The caller's review of an agent, if it wrote one (each reviewer reviews an agent once). */
  async ownReviewOf(caller: AuthenticatedAgent, rawTargetDid: string): Promise<Review | undefined> {
    const target = requireDid(rawTargetDid, this.deps.didWebDomain).did;
    const row = await findReviewByPair(this.deps.db, caller.did, target);
    return row === undefined ? undefined : toReview(row);
  }

  private async page(filter: ReviewListFilter, page: ReviewsQuery): Promise<ReviewsPage> {
    const limit = page.limit ?? REVIEW_RULES.pageLimitDefault;
    const list = 'target_did' in filter ? `of:${filter.target_did}` : `by:${filter.reviewer_did}`;
    let after: { createdAt: number; id: string } | undefined;
    if (page.cursor !== undefined) {
      // The route's schema defaults offset to 0: only a non-zero offset says something else.
      if (page.offset !== undefined && page.offset !== 0) {
        throw new BadRequestError(
          'INVALID_CURSOR',
          'send either cursor or offset, not both: cursor already says where the page starts',
        );
      }
      after = decodeReviewCursor(page.cursor, list);
    }
    const offset = after === undefined ? (page.offset ?? 0) : 0;
    const { rows, total } = await listReviews(this.deps.db, filter, limit + 1, offset, after);
    const shown = rows.slice(0, limit);
    const last = shown.at(-1);
    return {
      reviews: shown.map(toReview),
      total,
      limit,
      offset,
      next_cursor:
        rows.length > limit && last !== undefined
          ? encodeReviewCursor(list, Number(last.created_at), last.id)
          : null,
    };
  }

  /** Counted in the database under the reviewer's row lock, so the limit holds across nodes. */
  private async assertWithinRateLimit(trx: Db, reviewerDid: string, now: number): Promise<void> {
    const { maxReviews, windowMs } = this.deps.rateLimit;
    const recent = await reviewsSubmittedSince(trx, reviewerDid, now - windowMs);
    if (recent.count < maxReviews) return;
    const retryAfter = Math.max(1, Math.ceil(((recent.oldest ?? now) + windowMs - now) / 1000));
    throw new TooManyRequestsError(
      'REVIEW_RATE_LIMITED',
      `At most ${maxReviews} reviews per ${windowMs / 1000} s; try again in ${retryAfter} s`,
      retryAfter,
    );
  }
}

/**
 * A verified review cites a completed task in which the reviewer was the caller and the reviewed agent
 * the target. A task the reviewer did not call is reported as not found, so task ids of others leak nothing.
 */
async function assertCallRecord(
  trx: Db,
  taskId: string,
  reviewerDid: string,
  targetDid: string,
): Promise<void> {
  const task = await findCallRecord(trx, taskId);
  if (task === undefined || task.caller_did !== reviewerDid) {
    throw new BadRequestError(
      'CALL_RECORD_NOT_FOUND',
      `call_record_id ${taskId.slice(0, 128)} is not the task_id of an invocation you made`,
      'Invalid call record',
    );
  }
  if (task.target_did !== targetDid) {
    throw new BadRequestError(
      'CALL_RECORD_TARGET_MISMATCH',
      `Task ${task.id} invoked ${task.target_did}, not ${targetDid}`,
      'Invalid call record',
    );
  }
  if (task.status !== 'completed') {
    throw new BadRequestError(
      'CALL_RECORD_NOT_COMPLETED',
      `Task ${task.id} is ${task.status}; only a completed invocation verifies a review`,
      'Invalid call record',
    );
  }
}

function toReview(row: ReviewRow): Review {
  return {
    review_id: row.id,
    reviewer_did: row.reviewer_did,
    target_did: row.target_did,
    rating: ratingFromHundredths(row.rating),
    comment: row.comment,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    is_edited: row.edit_count > 0,
    edit_count: row.edit_count,
    verified: row.verified === 1,
  };
}

const alreadyReviewed = (target: string): ConflictError =>
  new ConflictError(
    'REVIEW_EXISTS',
    `You have already reviewed ${target}; edit that review with PUT /api/reviews/{review_id} within ${REVIEW_RULES.editWindowMs / 60_000} minutes of submitting it`,
    'Already reviewed',
  );

const reviewNotFound = (id: string): NotFoundError =>
  new NotFoundError('REVIEW_NOT_FOUND', `No review has id ${id.slice(0, 128)}`, 'Review not found');

/** Review-list cursors: the list they belong to, and the last review's (created_at, id). */
function encodeReviewCursor(list: string, createdAt: number, id: string): string {
  return Buffer.from(JSON.stringify({ v: 1, l: listDigest(list), c: createdAt, i: id })).toString(
    'base64url',
  );
}

function decodeReviewCursor(cursor: string, list: string): { createdAt: number; id: string } {
  let body: { v?: unknown; l?: unknown; c?: unknown; i?: unknown } | undefined;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as typeof body;
  } catch {
    body = undefined;
  }
  if (
    body === undefined ||
    body === null ||
    body.v !== 1 ||
    typeof body.c !== 'number' ||
    !Number.isSafeInteger(body.c) ||
    typeof body.i !== 'string'
  ) {
    throw new BadRequestError(
      'INVALID_CURSOR',
      'cursor is not one this registry issued: pass next_cursor from a review list unchanged',
    );
  }
  if (body.l !== listDigest(list)) {
    throw new BadRequestError(
      'INVALID_CURSOR',
      'cursor belongs to another review list: use it only with the list that returned it',
    );
  }
  return { createdAt: body.c, id: body.i };
}

function listDigest(list: string): string {
  return createHash('sha256').update(list).digest('base64url').slice(0, 16);
}
