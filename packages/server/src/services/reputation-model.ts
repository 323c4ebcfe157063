/**
 * The reputation formula, pure so it can be read, tested with a fixed clock, and documented
 * (docs/reputation.md). Ratings are integer hundredths (100-1000).
 *
 *   s_i   = (rating_i - 1) / 9 * 100                      each rating on the 0-100 scale
 *   w_i   = (verified_i ? 2 : 1) * e^(-age_days_i / 180)  verified counts double; older counts less
 *   score = (3 * 50 + sum w_i * s_i) / (3 + sum w_i)      a prior of three middling reviews
 *
 * No reviews: score 0 and average 0 ("unrated"; total_reviews 0 tells it apart).
 */
export const REPUTATION_MODEL = {
  priorMean: 50,
  priorWeight: 3,
  verifiedWeight: 2,
  unverifiedWeight: 1,
  decayDays: 180,
} as const;

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RatedReview {
  /** Integer hundredths, 100-1000. */
  rating: number;
  verified: boolean;
  createdAt: number;
}

export interface ReputationAggregates {
  total_reviews: number;
  /** Plain mean of the ratings, to two decimals (the precision of a rating). */
  average_rating: number;
  /** 0-100, to two decimals. */
  reputation_score: number;
}

const twoDecimals = (value: number): number => Math.round(value * 100) / 100;

export function reviewWeight(review: RatedReview, now: number): number {
  const ageDays = Math.max(0, now - review.createdAt) / DAY_MS;
  const base = review.verified ? REPUTATION_MODEL.verifiedWeight : REPUTATION_MODEL.unverifiedWeight;
  return base * Math.exp(-ageDays / REPUTATION_MODEL.decayDays);
}

export function aggregateReviews(reviews: readonly RatedReview[], now: number): ReputationAggregates {
  if (reviews.length === 0) return { total_reviews: 0, average_rating: 0, reputation_score: 0 };
  let ratingSum = 0;
  let weightedSum = REPUTATION_MODEL.priorWeight * REPUTATION_MODEL.priorMean;
  let weightSum = REPUTATION_MODEL.priorWeight;
  for (const review of reviews) {
    ratingSum += review.rating;
    const weight = reviewWeight(review, now);
    weightedSum += weight * (((review.rating - 100) / 900) * 100);
    weightSum += weight;
  }
  const score = Math.min(100, Math.max(0, weightedSum / weightSum));
  return {
    total_reviews: reviews.length,
    // ratingSum / n is the mean in hundredths; rounding it gives the mean to two decimals.
    average_rating: Math.round(ratingSum / reviews.length) / 100,
    reputation_score: twoDecimals(score),
  };
}
