/**
 * Limits of search, invocation and reviews, stated once for the registry and its clients (the SDK, the
 * CLI, the web pages), so a client checks a request against the numbers the registry enforces.
 * Interface section 8 gives most of them; the rest are decided in docs/decisions/, under the
 * heading named beside each.
 */
import { PROFILE_LIMITS } from './profile-rules.js';

/** `sort` of a search: section 4.4's two, then the service-record and availability sorts (extensions). */
export const SEARCH_SORTS = ['reputation', 'created_at', 'success_rate', 'latency', 'availability'] as const;
export type SearchSort = (typeof SEARCH_SORTS)[number];

export const SEARCH_ORDERS = ['asc', 'desc'] as const;
export type SearchOrder = (typeof SEARCH_ORDERS)[number];

export const SEARCH_LIMITS = {
  limitDefault: 50,
  limitMax: 100,
  offsetMax: 9999,
  /** Decisions, Search: `q`. */
  queryMaxLength: 200,
  queryMaxTerms: 16,
  /** Decisions, Search: `tags` (the limits of profile tags). */
  tagsMaxCount: PROFILE_LIMITS.tagsMaxCount,
  /** Decisions, Search: Cursor paging. */
  cursorMaxLength: 512,
  /** A reputation score. */
  minReputation: { min: 0, max: 100 },
  /** Extension: a 30-day success rate (docs/decisions/service-record.md, "`min_success_rate` scale"). */
  minSuccessRate: { min: 0, max: 1 },
  /** Extension (docs/decisions/service-record.md, "Liveness filter"). */
  activeWithinDays: { min: 1, max: 365 },
  sorts: SEARCH_SORTS,
  /** Decisions, Search: Defaults. */
  sortDefault: 'reputation',
  /** A search with words is ranked by relevance unless `sort` names another order. */
  sortDefaultWithQuery: 'relevance',
  orders: SEARCH_ORDERS,
  orderDefault: 'desc',
} as const satisfies Record<string, unknown> & {
  sorts: readonly SearchSort[];
  sortDefault: SearchSort;
  orders: readonly SearchOrder[];
  orderDefault: SearchOrder;
};

/** Decisions, Invocation: "1 MB", `timeout_ms`, `GET /api/agent/tasks`. */
export const INVOCATION_LIMITS = {
  /** Section 8's "1 MB", read as 1 MiB of the input (or output) serialised as compact JSON. */
  payloadMaxBytes: 1024 * 1024,
  timeoutDefaultMs: 30_000,
  timeoutMinMs: 100,
  timeoutMaxMs: 300_000,
  pendingTasksDefaultLimit: 10,
  pendingTasksMaxLimit: 50,
  /** The long poll of `GET /api/agent/tasks?wait=`. */
  pendingTasksMaxWaitSeconds: 60,
  /** The message a worker fails a task with. */
  taskErrorMaxLength: 10_000,
  taskIdMaxLength: 64,
} as const;

/** Decisions, Reviews: Rating check, Comment, Edit rules, Lists, Review list cursors. */
export const REVIEW_LIMITS = {
  ratingMin: 1,
  ratingMax: 10,
  ratingDecimals: 2,
  commentMaxLength: 1000,
  reviewsPerAgent: 1,
  /** Counted from the review's creation. */
  editWindowMs: 10 * 60 * 1000,
  /** How far an edit may move the rating, either way. */
  editMaxRatingChange: 4,
  callRecordIdMaxLength: 128,
  reviewIdMaxLength: 128,
  pageLimitDefault: 50,
  pageLimitMax: 100,
  /** The interface gives no maximum; a bound keeps the database's integer types out of reach. */
  pageOffsetMax: 1_000_000,
  cursorMaxLength: 512,
} as const;

/** The classes an abuse report or a suspension names (docs/moderation.md). */
export const MODERATION_REASONS = ['malware', 'impersonation', 'spam', 'broken', 'other'] as const;
export type ModerationReason = (typeof MODERATION_REASONS)[number];

/** The classes a restoration names. */
export const RESTORATION_REASONS = ['resolved', 'mistaken', 'appeal', 'other'] as const;
export type RestorationReason = (typeof RESTORATION_REASONS)[number];
