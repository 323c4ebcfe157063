import type { EditReviewRequest, Reputation, Review, ReviewList } from '../types.js';
import { enc, type Transport } from './transport.js';

export interface Page {
  limit?: number;
  offset?: number;
  /** `next_cursor` of the previous page of the same list, instead of `offset`. */
  cursor?: string;
}

export interface ReviewInput {
  targetDid: string;
  rating: number;
  comment?: string | null;
  /** The task id of an invocation you made: makes the review verified. */
  callRecordId?: string | null;
}

export function review(transport: Transport, input: ReviewInput): Promise<Review> {
  return transport.request('POST', '/api/reviews', {
    auth: true,
    body: {
      target_did: input.targetDid,
      rating: input.rating,
      ...(input.comment === undefined ? {} : { comment: input.comment }),
      ...(input.callRecordId === undefined ? {} : { call_record_id: input.callRecordId }),
    },
  });
}

export function editReview(transport: Transport, reviewId: string, edit: EditReviewRequest): Promise<Review> {
  return transport.request('PUT', `/api/reviews/${enc(reviewId)}`, { auth: true, body: edit });
}

export function getReviews(transport: Transport, did: string, page: Page): Promise<ReviewList> {
  return transport.request('GET', `/api/agents/${enc(did)}/reviews`, { query: { ...page } });
}

export function myReviews(transport: Transport, page: Page): Promise<ReviewList> {
  return transport.request('GET', '/api/reviews/my', { auth: true, query: { ...page } });
}

export function getReputation(transport: Transport, did: string): Promise<Reputation> {
  return transport.request('GET', `/api/agents/${enc(did)}/reputation`);
}
