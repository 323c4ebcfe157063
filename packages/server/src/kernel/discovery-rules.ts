/** Limits of sections 4.3, 4.4 and 8 for reviews, search and statistics, plus what we decided (docs/decisions.md). */
export const REVIEW_RULES = {
  /** Ratings are integer hundredths internally: 1.00-10.00 is 100-1000. */
  ratingMinHundredths: 100,
  ratingMaxHundredths: 1000,
  ratingDecimals: 2,
  commentMaxLength: 1000,
  reviewsPerAgent: 1,
  /** Counted from the review's creation. */
  editWindowMs: 10 * 60 * 1000,
  maxRatingChangeHundredths: 400,
  callRecordIdMaxLength: 128,
  pageLimitDefault: 50,
  pageLimitMax: 100,
  /** The interface gives no maximum; a bound keeps the database's integer types out of reach. */
  pageOffsetMax: 1_000_000,
} as const;

export const SEARCH_RULES = {
  limitDefault: 50,
  limitMax: 100,
  offsetMax: 9999,
  queryMaxLength: 200,
  queryMaxTerms: 16,
  tagsMaxCount: 20,
  /** Searches served are counted in memory and added to the database this often (and on shutdown). */
  countFlushMs: 10_000,
} as const;

export const STATS_RULES = {
  cacheMs: 60_000,
} as const;
