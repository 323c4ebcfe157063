import type { Availability } from './schemas.js';
import type { AgentStatus } from '../../db/schema/index.js';

/** Length of one uptime slot: an agent seen at least once in a slot counts as up for all of it. */
export const AVAILABILITY_SLOT_MS = 5 * 60 * 1000;
/** An agent whose last evidence is older than this is offline. Longer than the longest long poll. */
export const ONLINE_WINDOW_MS = 90 * 1000;
/** Each node writes what it saw at most once per this interval (and at once on a change of state). */
export const PRESENCE_FLUSH_MS = 10 * 1000;
/**
 * Evidence stamped further ahead of the reader's clock than this came from a node whose clock runs
 * fast: it is not trusted to make an agent online (docs/availability.md).
 */
export const CLOCK_SKEW_TOLERANCE_MS = 5 * 1000;

const DAY_MS = 24 * 60 * 60 * 1000;
export const UPTIME_WINDOWS = {
  day: DAY_MS / AVAILABILITY_SLOT_MS,
  week: (7 * DAY_MS) / AVAILABILITY_SLOT_MS,
};

export const slotOf = (epochMs: number): number => Math.floor(epochMs / AVAILABILITY_SLOT_MS);

/**
 * How long a webhook agent's last answer keeps it online: two probe intervals (a probe comes about once
 * per interval, later under backoff or a full tick) plus the online window. Null when probing is off.
 */
export function webhookOnlineWindow(probeIntervalMs: number): number | null {
  return probeIntervalMs > 0 ? 2 * probeIntervalMs + ONLINE_WINDOW_MS : null;
}

/**
 * What kind of agent the availability is of: active queue agents are observed by their polls, active
 * webhook agents by probes and deliveries unless they opted out of probes.
 */
export interface ObservedAgent {
  status: AgentStatus;
  invocation_enabled: boolean;
  delivery_mode: string;
  /** The agent's choice (invocation settings `probes`); only webhook agents are probed. */
  webhook_probes: boolean;
}

/** What probes found of a webhook agent (undefined: never probed). */
export interface ProbeRecord {
  last_probed_at: number | null;
  /** The latest probe, if it failed (cleared by an answer): newer than the last answer, the agent is offline. */
  last_failed_at: number | null;
}

/** The window within which evidence makes `agent` online, or null when it cannot be observed. */
export function onlineWindowOf(agent: ObservedAgent, webhookWindowMs: number | null): number | null {
  if (agent.status !== 'active' || !agent.invocation_enabled) return null;
  if (agent.delivery_mode === 'queue') return ONLINE_WINDOW_MS;
  if (agent.delivery_mode === 'webhook' && agent.webhook_probes) return webhookWindowMs;
  return null;
}

export interface PresenceRecord {
  first_seen_at: number;
  last_seen_at: number;
  online_since: number;
  checked_at: number;
  /** Slots seen since the start of each uptime window (see uptimeWindowStart). */
  seen_slots_24h: number;
  seen_slots_7d: number;
  /** When its worker last said it was stopping (null: never). */
  stopped_at: number | null;
}

/** Whether the worker said it stopped after the last evidence of it: offline now, not in 90 s. */
export function stoppedSinceSeen(presence: Pick<PresenceRecord, 'stopped_at' | 'last_seen_at'>): boolean {
  return presence.stopped_at !== null && presence.stopped_at >= presence.last_seen_at;
}

export const NEVER_OBSERVED: Availability = Object.freeze({
  status: 'unknown',
  last_seen_at: null,
  checked_at: null,
  online_since: null,
  uptime_24h: null,
  uptime_7d: null,
}) as Availability;

/** First slot an uptime window of `slots` counts at `now`: never before the first observation. */
export function uptimeWindowStart(now: number, slots: number, firstSeenAt: number): number {
  return Math.max(slotOf(now) - slots + 1, slotOf(firstSeenAt));
}

/**
 * The share of the window's slots seen. The slot in progress counts only once the agent is seen in it:
 * counted before, it would read as down every time a slot starts, however faithful the agent.
 */
function uptime(now: number, slots: number, presence: PresenceRecord, seen: number): number {
  const inProgressSeen = slotOf(presence.last_seen_at) >= slotOf(now);
  const counted =
    slotOf(now) - uptimeWindowStart(now, slots, presence.first_seen_at) + (inProgressSeen ? 1 : 0);
  if (counted <= 0) return 0;
  return Math.min(1, seen / counted);
}

/**
 * The availability of `agent` at `now` from its presence record (undefined: never seen answering) and,
 * for webhook agents, what probes found. `webhookWindowMs`: webhookOnlineWindow, null when probing is off.
 */
export function deriveAvailability(
  agent: ObservedAgent,
  presence: PresenceRecord | undefined,
  now: number,
  webhookWindowMs: number | null = null,
  probe?: ProbeRecord,
): Availability {
  const window = onlineWindowOf(agent, webhookWindowMs);
  const failedAt = agent.delivery_mode === 'webhook' ? (probe?.last_failed_at ?? null) : null;
  if (presence === undefined) {
    if (agent.status !== 'active') return { ...NEVER_OBSERVED, status: 'offline' };
    // Probed and never answered: offline, with nothing seen to count uptime from.
    if (window !== null && failedAt !== null)
      return { ...NEVER_OBSERVED, status: 'offline', checked_at: probe?.last_probed_at ?? failedAt };
    return NEVER_OBSERVED;
  }
  const fromTheFuture = presence.last_seen_at > now + CLOCK_SKEW_TOLERANCE_MS;
  const failedSince = failedAt !== null && failedAt >= presence.last_seen_at;
  const fresh =
    window !== null &&
    !fromTheFuture &&
    !failedSince &&
    !stoppedSinceSeen(presence) &&
    now - presence.last_seen_at <= window;
  let status: Availability['status'];
  if (agent.status !== 'active') status = 'offline';
  else if (window === null || fromTheFuture) status = 'unknown';
  else status = fresh ? 'online' : 'offline';
  const probedAt = window === null ? null : (probe?.last_probed_at ?? null);
  return {
    status,
    last_seen_at: presence.last_seen_at,
    checked_at: probedAt === null ? presence.checked_at : Math.max(presence.checked_at, probedAt),
    online_since: status === 'online' ? presence.online_since : null,
    uptime_24h: uptime(now, UPTIME_WINDOWS.day, presence, presence.seen_slots_24h),
    uptime_7d: uptime(now, UPTIME_WINDOWS.week, presence, presence.seen_slots_7d),
  };
}
