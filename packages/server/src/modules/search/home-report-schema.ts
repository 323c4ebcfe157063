import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../../http/common-schemas.js';

/** What the home registry's API says of the agent now: not in its log, so read as served. */
const HomeAvailability = Type.Object({
  status: StringEnum(['online', 'offline', 'unknown'], {
    description: "The home registry's availability.status of the agent",
  }),
  last_seen_at: Nullable(
    Type.Integer({ description: 'Epoch ms of the latest sighting at home; null if never' }),
  ),
});

const HomeServiceRecord = Type.Object({
  invocations_30d: Type.Integer({ description: 'Brokered invocations at home in the last 30 days' }),
  success_rate_30d: Nullable(
    Type.Number({ description: 'Their success rate, 0-1; null without invocations' }),
  ),
  latency_p50_ms_30d: Nullable(Type.Number({ description: 'Their median latency in ms' })),
  uptime_24h: Nullable(
    Type.Number({ description: 'Uptime over the last 24 hours, 0-1; null if never observed' }),
  ),
});

/**
 * What a mirrored agent's home registry says of it (docs/federation.md, "What the home reports"): the
 * reputation, rating and review count of the profile leaf this registry verified in the home's
 * transparency log. They are the home's figures, not this registry's: a mirrored entry still ranks and
 * filters (min_reputation) as an unreviewed agent here.
 */
export const HomeReport = Type.Object(
  {
    reported_by: Type.String({ description: 'The home registry whose verified log carried these figures' }),
    reputation_score: Type.Number({ description: 'The reputation score (0-100) at the home registry' }),
    average_rating: Type.Number({
      description: 'The mean rating (0-10) of its reviews at the home registry',
    }),
    total_reviews: Type.Integer({ description: 'How many reviews it has at the home registry' }),
    read_at: Type.Integer({
      description: 'When this registry verified the log leaf that carried these figures (epoch ms)',
    }),
    availability: Type.Optional(HomeAvailability),
    service_record: Type.Optional(HomeServiceRecord),
    checked_at: Type.Optional(
      Type.Integer({
        description:
          "When this registry last read availability and service_record from the home's API (GET /api/agents/{did}; epoch ms). They are not in the home's log: read as served",
      }),
    ),
  },
  {
    $id: 'HomeReport',
    description:
      "Extension, mirrored entries: the agent's reputation, rating and review count as its home registry's transparency log carries them; absent for imported entries",
  },
);
export type HomeReport = Static<typeof HomeReport>;

/** The part of a HomeReport read live from the home's API, as the probe stores it. */
export interface HomeLive {
  availability?: Static<typeof HomeAvailability>;
  service_record?: Static<typeof HomeServiceRecord>;
}

/** The report of the log (when there is one) with what the latest read of the home's API found. */
export function withLive(
  report: HomeReport | undefined,
  live: string | null,
  checkedAt: number | null,
): HomeReport | undefined {
  if (report === undefined || live === null || checkedAt === null) return report;
  const parsed = JSON.parse(live) as HomeLive;
  return {
    ...report,
    ...(parsed.availability === undefined ? {} : { availability: parsed.availability }),
    ...(parsed.service_record === undefined ? {} : { service_record: parsed.service_record }),
    checked_at: checkedAt,
  };
}

/** The HomeReport of a verified profile leaf, or null when the leaf carries no valid figures. */
export function homeReportOf(
  homeRegistry: string,
  profile: Record<string, unknown>,
  readAt: number,
): HomeReport | null {
  const { reputation_score: score, average_rating: rating, total_reviews: reviews } = profile;
  if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 100) return null;
  if (typeof rating !== 'number' || !Number.isFinite(rating) || rating < 0 || rating > 10) return null;
  if (typeof reviews !== 'number' || !Number.isSafeInteger(reviews) || reviews < 0) return null;
  return {
    reported_by: homeRegistry,
    reputation_score: score,
    average_rating: rating,
    total_reviews: reviews,
    read_at: readAt,
  };
}

/** Two reports of the same figures (the time they were read aside). */
export function sameHomeFigures(a: string | null, b: string | null | undefined): boolean {
  if (a === null || b === null || b === undefined) return a === (b ?? null);
  const { read_at: _a, ...left } = JSON.parse(a) as HomeReport;
  const { read_at: _b, ...right } = JSON.parse(b) as HomeReport;
  return JSON.stringify(left) === JSON.stringify(right);
}
