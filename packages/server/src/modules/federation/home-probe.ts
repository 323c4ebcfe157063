import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import { requestBounded } from '../../kernel/outbound-http.js';
import type { HomeLive } from '../search/home-report-schema.js';
import type { ProbeFinding } from './entry-probe-store.js';
import type { ProbeLimits } from './mcp-probe.js';

const AVAILABILITY_STATUSES = new Set(['online', 'offline', 'unknown']);

/**
 * Reads a mirrored agent's profile at its home registry (`GET /api/agents/{did}`, the interface every
 * registry of this kind serves), for what its log does not carry: availability and the service record.
 * An answer that is not that agent's profile is `unreachable`, with the reason for the operator's log.
 */
export async function probeHome(
  policy: WebhookNetworkPolicy,
  url: string,
  did: string,
  limits: ProbeLimits,
  signal: AbortSignal,
): Promise<ProbeFinding> {
  let body: Buffer;
  try {
    const target = new URL(url);
    policy.assertDeliverableLiteral(target);
    const response = await requestBounded(policy, target, {
      method: 'GET',
      headers: { accept: 'application/json' },
      signal,
      maxResponseBytes: limits.budgetBytes,
      tooLarge: () => new Error(`the profile exceeded ${limits.budgetBytes} bytes`),
    });
    if (response.status !== 200) return { status: 'unreachable', reason: `HTTP ${response.status}` };
    body = response.body;
  } catch (error) {
    return { status: 'unreachable', reason: error instanceof Error ? error.message : String(error) };
  }
  let profile: Record<string, unknown>;
  try {
    profile = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return { status: 'unreachable', reason: 'the answer is not JSON' };
  }
  if (profile === null || typeof profile !== 'object' || profile.did !== did)
    return { status: 'unreachable', reason: 'the answer is not the profile of the agent' };
  return { status: 'answers', home: homeLiveOf(profile) };
}

const finiteOrNull = (value: unknown, max: number): number | null =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= max ? value : null;

/** What the home's profile says live, each member checked (a wrong one is left out, not trusted). */
export function homeLiveOf(profile: Record<string, unknown>): HomeLive {
  const live: HomeLive = {};
  const availability = profile.availability as { status?: unknown; last_seen_at?: unknown } | undefined;
  if (
    availability !== null &&
    typeof availability === 'object' &&
    typeof availability.status === 'string' &&
    AVAILABILITY_STATUSES.has(availability.status)
  ) {
    const seen = availability.last_seen_at;
    live.availability = {
      status: availability.status as 'online' | 'offline' | 'unknown',
      last_seen_at: typeof seen === 'number' && Number.isSafeInteger(seen) && seen >= 0 ? seen : null,
    };
  }
  const record = profile.service_record as
    { last_30_days?: Record<string, unknown>; uptime_24h?: unknown } | undefined;
  const window = record?.last_30_days;
  if (window !== null && typeof window === 'object') {
    const invocations = window.invocations;
    live.service_record = {
      invocations_30d:
        typeof invocations === 'number' && Number.isSafeInteger(invocations) && invocations >= 0
          ? invocations
          : 0,
      success_rate_30d: finiteOrNull(window.success_rate, 1),
      latency_p50_ms_30d: finiteOrNull(window.latency_p50_ms, Number.MAX_SAFE_INTEGER),
      uptime_24h: finiteOrNull(record?.uptime_24h, 1),
    };
  }
  return live;
}
