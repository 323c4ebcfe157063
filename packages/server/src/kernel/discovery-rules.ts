import { REVIEW_LIMITS, SEARCH_LIMITS } from '@agent-registry/protocol';

/**
 * Limits of sections 4.3, 4.4 and 8 for reviews, search and statistics, plus what we decided
 * (docs/decisions/). Those a client can check come from the protocol package; the rest are the
 * registry's own.
 */
export const REVIEW_RULES = {
  ...REVIEW_LIMITS,
  /** Ratings are integer hundredths internally: 1.00-10.00 is 100-1000. */
  ratingMinHundredths: REVIEW_LIMITS.ratingMin * 100,
  ratingMaxHundredths: REVIEW_LIMITS.ratingMax * 100,
  maxRatingChangeHundredths: REVIEW_LIMITS.editMaxRatingChange * 100,
} as const;

export const SEARCH_RULES = {
  ...SEARCH_LIMITS,
  /** Searches served are counted in memory and added to the database this often (and on shutdown). */
  countFlushMs: 10_000,
} as const;

export const STATS_RULES = {
  cacheMs: 60_000,
} as const;
