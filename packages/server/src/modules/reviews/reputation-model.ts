/**
 * The reputation formula, pure so it can be read, tested with a fixed clock, and documented
 * (docs/reputation.md). Ratings are integer hundredths (100-1000).
 *
 * Version 2 weighs each review by evidence about its reviewer:
 *
 *   s_i   = (rating_i - 1) / 9 * 100                       each rating on the 0-100 scale
 *   d_i   = e^(-age_days_i / 180)                          older counts less
 *   t_i   = maturity * breadth * standing * reciprocity     trust in the reviewer, 0-1
 *   w_i   = d_i * t_i * (counted_verified_i ? 2 : 1)       0 when reviewer and agent are linked
 *   unproven reviews (unverified, or by a reviewer without full breadth) are scaled down together so
 *   their weights never add up to more than 1
 *   score = (3 * 50 + sum w_i * s_i) / (3 + sum w_i)       a prior of three middling reviews
 *
 * No reviews: score 0 and average 0 ("unrated"; total_reviews 0 tells it apart).
 */
export const REPUTATION_MODEL = {
  version: 2,
  priorMean: 50,
  priorWeight: 3,
  verifiedWeight: 2,
  unverifiedWeight: 1,
  decayDays: 180,
  /** A reviewer's account reaches full weight at this age (linear from 0). */
  maturityDays: 30,
  /** Distinct other rated agents a reviewer must have really called for full breadth (and to be proven). */
  breadthPartners: 3,
  /** Breadth of a reviewer who has called no other agent. */
  breadthFloor: 0.25,
  /** Standing of an unrated reviewer; a rated one has 0.5 + score / 200. */
  unratedStanding: 0.75,
  /** Factor when the reviewed agent has also reviewed the reviewer. */
  reciprocalFactor: 0.25,
  /** Most total weight all unproven reviews of one agent may have together. */
  unprovenCap: 1,
} as const;

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RatedReview {
  /** Integer hundredths, 100-1000. */
  rating: number;
  /** The review cites a completed invocation of the agent by the reviewer. */
  verified: boolean;
  createdAt: number;
}

/** What the registry knows about the reviewer of one review (all from its own records). */
export interface ReviewerEvidence {
  /** When the reviewer registered. */
  reviewerCreatedAt: number;
  /** Reviewer's own stored reputation, and whether it has any reviews at all. */
  reviewerScore: number;
  reviewerRated: boolean;
  /**
   * Distinct rated agents other than this one that the reviewer completed counted calls to, leaving out
   * those that called the reviewer back.
   */
  independentPartners: number;
  /** The reviewed agent has reviewed the reviewer too. */
  reciprocal: boolean;
  /** Reviewer and reviewed agent are linked identities (one operator): the review carries no weight. */
  linked: boolean;
}

export type EvidencedReview = RatedReview & ReviewerEvidence;

export interface ReputationAggregates {
  total_reviews: number;
  /** Plain mean of the ratings, to two decimals (the precision of a rating). */
  average_rating: number;
  /** 0-100, to two decimals. */
  reputation_score: number;
}

const twoDecimals = (value: number): number => Math.round(value * 100) / 100;
const toScale = (rating: number): number => ((rating - 100) / 900) * 100;
const decay = (createdAt: number, now: number): number =>
  Math.exp(-(Math.max(0, now - createdAt) / DAY_MS) / REPUTATION_MODEL.decayDays);

/** Trust in a reviewer, 0-1: the product of the four factors in docs/reputation.md. */
export function reviewerTrust(review: ReviewerEvidence, now: number): number {
  const m = REPUTATION_MODEL;
  const ageDays = Math.max(0, now - review.reviewerCreatedAt) / DAY_MS;
  const maturity = Math.min(1, ageDays / m.maturityDays);
  const breadth =
    m.breadthFloor + (1 - m.breadthFloor) * Math.min(1, review.independentPartners / m.breadthPartners);
  const standing = review.reviewerRated
    ? 0.5 + Math.min(100, Math.max(0, review.reviewerScore)) / 200
    : m.unratedStanding;
  const reciprocity = review.reciprocal ? m.reciprocalFactor : 1;
  return maturity * breadth * standing * reciprocity;
}

/** The weight of one review before the unverified cap; linked reviewers weigh nothing. */
export function reviewWeight(review: EvidencedReview, now: number): number {
  if (review.linked) return 0;
  const base = review.verified ? REPUTATION_MODEL.verifiedWeight : REPUTATION_MODEL.unverifiedWeight;
  return base * decay(review.createdAt, now) * reviewerTrust(review, now);
}

/**
 * A proven review cites a completed call (not between linked identities) and its reviewer has really
 * called enough other rated agents. Unproven reviews still count, but only up to `unprovenCap` together.
 */
export function isProven(review: EvidencedReview): boolean {
  return review.verified && !review.linked && review.independentPartners >= REPUTATION_MODEL.breadthPartners;
}

export function aggregateReviews(reviews: readonly EvidencedReview[], now: number): ReputationAggregates {
  if (reviews.length === 0) return { total_reviews: 0, average_rating: 0, reputation_score: 0 };
  const weights = reviews.map((review) => reviewWeight(review, now));
  const unprovenTotal = reviews.reduce(
    (sum, review, index) => sum + (isProven(review) ? 0 : (weights[index] ?? 0)),
    0,
  );
  const unprovenScale =
    unprovenTotal > REPUTATION_MODEL.unprovenCap ? REPUTATION_MODEL.unprovenCap / unprovenTotal : 1;
  let ratingSum = 0;
  let weightedSum = REPUTATION_MODEL.priorWeight * REPUTATION_MODEL.priorMean;
  let weightSum = REPUTATION_MODEL.priorWeight;
  reviews.forEach((review, index) => {
    ratingSum += review.rating;
    const weight = (weights[index] ?? 0) * (isProven(review) ? 1 : unprovenScale);
    weightedSum += weight * toScale(review.rating);
    weightSum += weight;
  });
  return finish(reviews.length, ratingSum, weightedSum / weightSum);
}

/**
 * Version 1, kept so the Sybil benchmark can show both side by side (docs/decisions/reputation.md, "v1
 * kept"): every review weighs 1 (2 when verified) times its decay, whoever wrote it.
 */
export function aggregateReviewsV1(reviews: readonly RatedReview[], now: number): ReputationAggregates {
  if (reviews.length === 0) return { total_reviews: 0, average_rating: 0, reputation_score: 0 };
  let ratingSum = 0;
  let weightedSum = REPUTATION_MODEL.priorWeight * REPUTATION_MODEL.priorMean;
  let weightSum = REPUTATION_MODEL.priorWeight;
  for (const review of reviews) {
    ratingSum += review.rating;
    const base = review.verified ? REPUTATION_MODEL.verifiedWeight : REPUTATION_MODEL.unverifiedWeight;
    const weight = base * decay(review.createdAt, now);
    weightedSum += weight * toScale(review.rating);
    weightSum += weight;
  }
  return finish(reviews.length, ratingSum, weightedSum / weightSum);
}

function finish(count: number, ratingSum: number, score: number): ReputationAggregates {
  return {
    total_reviews: count,
    // ratingSum / n is the mean in hundredths; rounding it gives the mean to two decimals.
    average_rating: Math.round(ratingSum / count) / 100,
    reputation_score: twoDecimals(Math.min(100, Math.max(0, score))),
  };
}
