import type { WindowSummary } from './schemas.js';

/**
 * The measured service record (docs/service-record.md), pure: the latency histogram, quantiles read
 * from it, and the summary of a window of daily rollups. No I/O, so it is tested with fixed numbers.
 */

/** Upper edges of the latency buckets in ms; the last bucket is open (everything slower). */
export const LATENCY_BUCKETS_MS = [
  50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 60_000, 120_000,
] as const;
/** Buckets: one per edge above plus the open one. */
export const LATENCY_BUCKET_COUNT = LATENCY_BUCKETS_MS.length + 1;

export const SERVICE_RECORD_RULES = {
  windowsDays: [7, 30] as const,
  /** Daily rows older than this are deleted; they live on in the all-time totals. */
  dailyRetentionDays: 90,
  /** Distinct-caller rows are only needed for the longest window. */
  callersRetentionDays: 30,
  searchWindowDays: 30,
} as const;

export const DAY_MS = 24 * 60 * 60 * 1000;
export const dayOf = (epochMs: number): number => Math.floor(epochMs / DAY_MS);

export function latencyBucket(latencyMs: number): number {
  const index = LATENCY_BUCKETS_MS.findIndex((edge) => latencyMs <= edge);
  return index === -1 ? LATENCY_BUCKETS_MS.length : index;
}

/**
 * The q-quantile (0 < q < 1) of the latencies counted in `histogram`, interpolated linearly inside the
 * bucket that holds it; in the open last bucket, its lower edge (a floor, said so in the docs).
 * Null without samples.
 */
export function histogramQuantile(histogram: readonly number[], q: number): number | null {
  const total = histogram.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (let index = 0; index < histogram.length; index += 1) {
    const count = histogram[index] ?? 0;
    if (count > 0 && below + count >= rank) {
      const lower = index === 0 ? 0 : (LATENCY_BUCKETS_MS[index - 1] ?? 0);
      const upper = LATENCY_BUCKETS_MS[index];
      if (upper === undefined) return lower;
      return Math.round(lower + ((rank - below) / count) * (upper - lower));
    }
    below += count;
  }
  return LATENCY_BUCKETS_MS[LATENCY_BUCKETS_MS.length - 1] ?? 0;
}

export interface OutcomeCounts {
  completed: number;
  failed: number;
  timeout: number;
}

export interface DailyRollup extends OutcomeCounts {
  day: number;
  lastCompletedAt: number | null;
  latency: readonly number[];
}

const fourDecimals = (value: number): number => Math.round(value * 10_000) / 10_000;

export function rate(part: number, whole: number): number | null {
  return whole === 0 ? null : fourDecimals(part / whole);
}

/** Sums the rollups of days `today - days + 1` .. `today` into one window. */
export function summariseWindow(
  rollups: readonly DailyRollup[],
  today: number,
  days: number,
  distinctCallers: number,
): WindowSummary {
  const histogram = new Array<number>(LATENCY_BUCKET_COUNT).fill(0);
  let completed = 0;
  let failed = 0;
  let timeout = 0;
  let last: number | null = null;
  for (const rollup of rollups) {
    if (rollup.day <= today - days || rollup.day > today) continue;
    completed += rollup.completed;
    failed += rollup.failed;
    timeout += rollup.timeout;
    rollup.latency.forEach((count, index) => (histogram[index] = (histogram[index] ?? 0) + count));
    if (rollup.lastCompletedAt !== null && (last === null || rollup.lastCompletedAt > last)) {
      last = rollup.lastCompletedAt;
    }
  }
  const invocations = completed + failed + timeout;
  return {
    days,
    invocations,
    completed,
    failed,
    timeouts: timeout,
    success_rate: rate(completed, invocations),
    timeout_rate: rate(timeout, invocations),
    latency_p50_ms: histogramQuantile(histogram, 0.5),
    latency_p95_ms: histogramQuantile(histogram, 0.95),
    distinct_callers: distinctCallers,
    last_completed_at: last,
  };
}
