import { Type } from '@sinclair/typebox';
import { REVIEW_RULES } from '../../services/discovery-rules.js';
import { Nullable } from './common.js';

const Comment = Type.String({ maxLength: REVIEW_RULES.commentMaxLength });
// Range and decimals are checked by the service (one code, INVALID_RATING), exactly in decimal.
const Rating = Type.Number({
  description: '1.00 to 10.00 with at most two decimals',
  examples: [8.75],
});

export const SubmitReviewRequest = Type.Object({
  target_did: Type.String({ maxLength: 512, description: 'DID of the agent reviewed' }),
  rating: Rating,
  comment: Type.Optional(Nullable(Comment)),
  call_record_id: Type.Optional(
    Nullable(
      Type.String({
        maxLength: REVIEW_RULES.callRecordIdMaxLength,
        description:
          'task_id of a completed invocation in which you were the caller and target_did the target; makes the review verified',
      }),
    ),
  ),
});

export const EditReviewRequest = Type.Object({
  rating: Type.Number({
    description: '1.00 to 10.00 with at most two decimals, at most 4.0 away from the current rating',
  }),
  comment: Type.Optional(
    Nullable(
      Type.String({
        maxLength: REVIEW_RULES.commentMaxLength,
        description: 'absent or null keeps it; "" removes it',
      }),
    ),
  ),
});

export const Review = Type.Object({
  review_id: Type.String(),
  reviewer_did: Type.String(),
  target_did: Type.String(),
  rating: Type.Number(),
  comment: Nullable(Type.String()),
  created_at: Type.Integer(),
  updated_at: Type.Integer(),
  is_edited: Type.Boolean(),
  edit_count: Type.Integer(),
  verified: Type.Boolean({
    description: 'The review cites a completed invocation of the agent by the reviewer',
  }),
});

export const ReviewsPage = Type.Object({
  reviews: Type.Array(Review),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const ReviewsQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: REVIEW_RULES.pageLimitMax, default: REVIEW_RULES.pageLimitDefault }),
  ),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: REVIEW_RULES.pageOffsetMax, default: 0 })),
});

export const ReviewIdParams = Type.Object({
  review_id: Type.String({ maxLength: 128, description: 'review_id returned when the review was submitted' }),
});

const bucket = Type.Integer({ minimum: 0 });

export const ReputationStats = Type.Object({
  did: Type.String(),
  reputation_score: Type.Number({
    minimum: 0,
    maximum: 100,
    description: 'Time-weighted, verified-weighted Bayesian score (docs/reputation.md); 0 when unrated',
  }),
  average_rating: Type.Number({ description: 'Plain mean of the ratings, two decimals; 0 when unrated' }),
  rating_distribution: Type.Object(
    {
      '1': bucket,
      '2': bucket,
      '3': bucket,
      '4': bucket,
      '5': bucket,
      '6': bucket,
      '7': bucket,
      '8': bucket,
      '9': bucket,
      '10': bucket,
    },
    {
      description:
        'Reviews counted by the whole part of their rating (9.99 counts under "9", 10.00 under "10")',
    },
  ),
  total_reviews: Type.Integer(),
  verified_reviews: Type.Integer(),
});
