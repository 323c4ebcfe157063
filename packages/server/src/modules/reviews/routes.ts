import type { ReputationService } from './reputation.js';
import type { ReviewService } from './reviews.js';
import { DidParams, bearerAuth, errors, ref } from '../../http/common-schemas.js';
import {
  EditReviewRequest,
  ReputationStats,
  Review,
  ReviewIdParams,
  ReviewsPage,
  ReviewsQuery,
  SubmitReviewRequest,
} from './schemas.js';
import type { App } from '../../http/types.js';
import { authenticated, callerOf, type AuthenticatedRouteDeps } from '../agents/authenticate.js';

const tags = ['Reviews'];

/** What the review routes use of the context. */
export interface ReviewRouteDeps extends AuthenticatedRouteDeps {
  reviews: ReviewService;
  reputation: ReputationService;
}

export function reviewRoutes(app: App, ctx: ReviewRouteDeps): void {
  app.post(
    '/api/reviews',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags,
        operationId: 'submitReview',
        summary: 'Review another agent (one review per agent; verified when call_record_id is given)',
        description:
          'Rates another agent from 1.00 to 10.00. Citing the task_id of an invocation you made of it ' +
          '(call_record_id) makes the review verified; verified reviews weigh double in reputation.',
        security: bearerAuth,
        body: ref(SubmitReviewRequest),
        'x-rate-limited': true,
        'x-status-reasons': {
          201: 'The review, as stored.',
          400: 'The rating is outside 1.00-10.00 or has more than two decimals (`INVALID_RATING`), the comment is too long, or call_record_id is not a completed invocation of this agent by you.',
          403: 'An agent cannot review itself (`SELF_REVIEW`).',
          404: 'No active agent has target_did (`AGENT_NOT_FOUND`).',
          409: 'You already reviewed this agent (`REVIEW_EXISTS`); edit it with PUT /api/reviews/{review_id}.',
          429: 'More reviews than REVIEW_RATE_LIMIT in the window (`REVIEW_RATE_LIMITED`); retry after Retry-After seconds.',
        },
        response: { 201: ref(Review), ...errors(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      return reply.status(201).send(await ctx.reviews.submit(caller, request.body));
    },
  );

  app.get(
    '/api/agents/:did/reviews',
    {
      schema: {
        tags,
        operationId: 'listAgentReviews',
        summary: 'Reviews of an agent, newest first',
        description: 'A page of the reviews of an agent, newest first.',
        security: [],
        params: DidParams,
        querystring: ReviewsQuery,
        response: { 200: ReviewsPage, ...errors(400) },
      },
    },
    async (request) => ctx.reviews.listForAgent(request.params.did, request.query),
  );

  app.get(
    '/api/reviews/my',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags,
        operationId: 'listMyReviews',
        summary: 'Reviews written by the caller, newest first',
        description: 'A page of the reviews the calling agent wrote, newest first.',
        security: bearerAuth,
        querystring: ReviewsQuery,
        response: { 200: ReviewsPage, ...errors(400, 401) },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      return ctx.reviews.listByReviewer(caller, request.query);
    },
  );

  app.put(
    '/api/reviews/:review_id',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags,
        operationId: 'editReview',
        summary: 'Edit your review within 10 minutes of submitting it (rating change at most 4.0)',
        description:
          'Changes the rating or comment of a review the caller wrote, within 10 minutes of submitting it.',
        security: bearerAuth,
        params: ReviewIdParams,
        body: EditReviewRequest,
        'x-status-reasons': {
          400: 'The rating is invalid (`INVALID_RATING`), moves more than 4.0 (`RATING_CHANGE_TOO_LARGE`), or the 10 minutes have passed (`EDIT_WINDOW_CLOSED`).',
          403: 'The review was written by another agent (`NOT_REVIEW_AUTHOR`).',
          404: 'No review has this id (`REVIEW_NOT_FOUND`).',
        },
        response: { 200: ref(Review), ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      return ctx.reviews.edit(caller, request.params.review_id, request.body);
    },
  );

  app.get(
    '/api/agents/:did/reputation',
    {
      schema: {
        tags,
        operationId: 'getReputation',
        summary: 'Reputation of an agent: score, mean rating and rating distribution',
        description:
          'Reputation score (0-100, docs/reputation.md), mean rating and rating distribution of an agent.',
        security: [],
        'x-status-reasons': { 404: 'No agent has this DID (`AGENT_NOT_FOUND`).' },
        params: DidParams,
        response: { 200: ReputationStats, ...errors(400, 404) },
      },
    },
    async (request) => ctx.reputation.get(request.params.did),
  );
}
