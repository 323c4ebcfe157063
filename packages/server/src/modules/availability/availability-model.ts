import type { Availability } from './schemas.js';

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

/** What kind of agent the availability is of: only active queue agents can be observed by their polls. */
export interface ObservedAgent {
  status: 'active' | 'deactivated';
  invocation_enabled: boolean;
  delivery_mode: string;
}

export interface PresenceRecord {
  first_seen_at: number;
  last_seen_at: number;
  online_since: number;
  checked_at: number;
  /** Slots seen since the start of each uptime window (see uptimeWindowStart). */
  seen_slots_24h: number;
  seen_slots_7d: number;
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

function uptime(now: number, slots: number, firstSeenAt: number, seen: number): number {
  const counted = slotOf(now) - uptimeWindowStart(now, slots, firstSeenAt) + 1;
  if (counted <= 0) return 0;
  return Math.min(1, seen / counted);
}

/** The availability of `agent` at `now` from its presence record (undefined: never observed). */
export function deriveAvailability(
  agent: ObservedAgent,
  presence: PresenceRecord | undefined,
  now: number,
): Availability {
  if (presence === undefined) {
    return agent.status === 'deactivated' ? { ...NEVER_OBSERVED, status: 'offline' } : NEVER_OBSERVED;
  }
  const observable = agent.status === 'active' && agent.invocation_enabled && agent.delivery_mode === 'queue';
  const fromTheFuture = presence.last_seen_at > now + CLOCK_SKEW_TOLERANCE_MS;
  const fresh = !fromTheFuture && now - presence.last_seen_at <= ONLINE_WINDOW_MS;
  let status: Availability['status'];
  if (agent.status === 'deactivated') status = 'offline';
  else if (!observable || fromTheFuture) status = 'unknown';
  else status = fresh ? 'online' : 'offline';
  return {
    status,
    last_seen_at: presence.last_seen_at,
    checked_at: presence.checked_at,
    online_since: status === 'online' ? presence.online_since : null,
    uptime_24h: uptime(now, UPTIME_WINDOWS.day, presence.first_seen_at, presence.seen_slots_24h),
    uptime_7d: uptime(now, UPTIME_WINDOWS.week, presence.first_seen_at, presence.seen_slots_7d),
  };
}
