import { Type, type Static } from '@sinclair/typebox';
import { REVIEW_RULES } from '../../kernel/discovery-rules.js';
import { Nullable, checkedByService, ref } from '../../http/common-schemas.js';

const Comment = Type.String({ maxLength: REVIEW_RULES.commentMaxLength });
// Range and decimals are checked by the service (one code, INVALID_RATING), exactly in decimal; a
// floating-point multipleOf would refuse 8.75.
const Rating = checkedByService(
  Type.Number({
    description: '1.00 to 10.00 with at most two decimals',
    minimum: REVIEW_RULES.ratingMinHundredths / 100,
    maximum: REVIEW_RULES.ratingMaxHundredths / 100,
    multipleOf: 0.01,
    examples: [8.75],
  }),
  ['minimum', 'maximum', 'multipleOf'],
);

export const SubmitReviewRequest = Type.Object(
  {
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
  },
  {
    $id: 'SubmitReviewRequest',
    examples: [
      {
        target_did: 'did:web:registry.example:agent:4f2a9c0e1b7d4e8f9a6b3c2d1e0f9a8b',
        rating: 8.75,
        comment: 'Fast and accurate',
        call_record_id: '01936f3e-8a1b-7c2d-9e4f-5a6b7c8d9e0f',
      },
    ],
  },
);
export type SubmitReviewCommand = Static<typeof SubmitReviewRequest>;

export const EditReviewRequest = Type.Object({
  rating: checkedByService(
    Type.Number({
      description: '1.00 to 10.00 with at most two decimals, at most 4.0 away from the current rating',
      minimum: REVIEW_RULES.ratingMinHundredths / 100,
      maximum: REVIEW_RULES.ratingMaxHundredths / 100,
      multipleOf: 0.01,
    }),
    ['minimum', 'maximum', 'multipleOf'],
  ),
  comment: Type.Optional(
    Nullable(
      Type.String({
        maxLength: REVIEW_RULES.commentMaxLength,
        description: 'absent or null keeps it; "" removes it',
      }),
    ),
  ),
});
export type EditReviewCommand = Static<typeof EditReviewRequest>;

export const Review = Type.Object(
  {
    review_id: Type.String(),
    reviewer_did: Type.String(),
    target_did: Type.String(),
    rating: Type.Number({
      minimum: REVIEW_RULES.ratingMinHundredths / 100,
      maximum: REVIEW_RULES.ratingMaxHundredths / 100,
      multipleOf: 0.01,
    }),
    comment: Nullable(Type.String()),
    created_at: Type.Integer(),
    updated_at: Type.Integer(),
    is_edited: Type.Boolean(),
    edit_count: Type.Integer(),
    verified: Type.Boolean({
      description: 'The review cites a completed invocation of the agent by the reviewer',
    }),
  },
  { $id: 'Review' },
);
/** Section 2.6 ReviewResponse, plus updated_at. */
export type Review = Static<typeof Review>;

export const ReviewsPage = Type.Object({
  reviews: Type.Array(ref(Review)),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer({ description: 'The offset asked for; 0 when the page was asked by cursor' }),
  next_cursor: Nullable(
    Type.String({ description: 'Extension: pass as cursor for the next page; null after the last page' }),
  ),
});
export type ReviewsPage = Static<typeof ReviewsPage>;

export const ReviewsQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: REVIEW_RULES.pageLimitMax, default: REVIEW_RULES.pageLimitDefault }),
  ),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: REVIEW_RULES.pageOffsetMax, default: 0 })),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: REVIEW_RULES.cursorMaxLength,
      description:
        'Extension: next_cursor of the previous page of the same list, instead of offset. Pages follow on from the last review seen: reviews written meanwhile neither repeat nor push others out',
    }),
  ),
});
export type ReviewsQuery = Static<typeof ReviewsQuery>;

export const ReviewIdParams = Type.Object({
  review_id: Type.String({
    maxLength: REVIEW_RULES.reviewIdMaxLength,
    description: 'review_id returned when the review was submitted',
  }),
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
/** Section 2.7 ReputationStats, plus the DID and how many of the reviews are verified. */
export type ReputationStats = Static<typeof ReputationStats>;
