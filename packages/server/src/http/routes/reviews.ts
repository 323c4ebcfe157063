import type { AppContext } from '../../context.js';
import { DidParams, bearerAuth, errors } from '../schemas/common.js';
import {
  EditReviewRequest,
  ReputationStats,
  Review,
  ReviewIdParams,
  ReviewsPage,
  ReviewsQuery,
  SubmitReviewRequest,
} from '../schemas/reviews.js';
import type { App } from '../types.js';

const tags = ['Reviews'];

export function reviewRoutes(app: App, ctx: AppContext): void {
  app.post(
    '/api/reviews',
    {
      schema: {
        tags,
        summary: 'Review another agent (one review per agent; verified when call_record_id is given)',
        security: bearerAuth,
        body: SubmitReviewRequest,
        response: { 201: Review, ...errors(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const caller = await ctx.authentication.authenticate(request.headers.authorization);
      return reply.status(201).send(await ctx.reviews.submit(caller, request.body));
    },
  );

  app.get(
    '/api/agents/:did/reviews',
    {
      schema: {
        tags,
        summary: 'Reviews of an agent, newest first',
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
      schema: {
        tags,
        summary: 'Reviews written by the caller, newest first',
        security: bearerAuth,
        querystring: ReviewsQuery,
        response: { 200: ReviewsPage, ...errors(400, 401) },
      },
    },
    async (request) => {
      const caller = await ctx.authentication.authenticate(request.headers.authorization);
      return ctx.reviews.listByReviewer(caller, request.query);
    },
  );

  app.put(
    '/api/reviews/:review_id',
    {
      schema: {
        tags,
        summary: 'Edit your review within 10 minutes of submitting it (rating change at most 4.0)',
        security: bearerAuth,
        params: ReviewIdParams,
        body: EditReviewRequest,
        response: { 200: Review, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const caller = await ctx.authentication.authenticate(request.headers.authorization);
      return ctx.reviews.edit(caller, request.params.review_id, request.body);
    },
  );

  app.get(
    '/api/agents/:did/reputation',
    {
      schema: {
        tags,
        summary: 'Reputation of an agent: score, mean rating and rating distribution',
        params: DidParams,
        response: { 200: ReputationStats, ...errors(400, 404) },
      },
    },
    async (request) => ctx.reputation.get(request.params.did),
  );
}
