import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import { every, type BackgroundJobs } from '../../kernel/periodic.js';
import {
  CLOCK_SKEW_TOLERANCE_MS,
  ONLINE_WINDOW_MS,
  PRESENCE_FLUSH_MS,
  UPTIME_WINDOWS,
  deriveAvailability,
  slotOf,
  stoppedSinceSeen,
  uptimeWindowStart,
  type ObservedAgent,
} from './availability-model.js';
import {
  agentsOnline,
  countByStatus,
  findPresence,
  findProbe,
  observedAgents,
  presenceEndsOf,
  recordStop,
  pruneSlots,
  recordSightings,
  type OnlineBounds,
  type Sighting,
} from './presence-store.js';
import type { Availability } from './schemas.js';

export interface AvailabilityDeps {
  db: Db;
  clock: Clock;
  /** Presence bookkeeping never fails a worker's request: its faults are reported here. */
  onError: (error: unknown) => void;
  /** How long a webhook agent's answer keeps it online (webhookOnlineWindow); null: probing is off. */
  webhookWindowMs: number | null;
}

/**
 * Presence of queue agents' workers. Polls and task updates are noted in memory; each node writes
 * them coalesced (one batch per flush interval) and writes at once only when an agent it has not
 * recently written turns up, so a worker polling in a loop costs no database write per poll
 * (docs/availability.md, "How it is measured").
 */
export class AvailabilityService {
  /** Evidence noted since the last flush, per agent. */
  private readonly pending = new Map<string, Sighting>();
  /** Long polls in progress on this node, per agent: evidence for as long as they last. */
  private readonly polling = new Map<string, number>();
  /** When this node last wrote each agent's evidence: a write older than this is a change of state. */
  private readonly written = new Map<string, number>();

  constructor(private readonly deps: AvailabilityDeps) {}

  /** A worker of `did` is there now. Written at once when this node has no recent write for the agent. */
  async seen(did: string): Promise<void> {
    const now = this.deps.clock.now();
    const last = this.written.get(did);
    if (last === undefined || now - last > ONLINE_WINDOW_MS - 2 * PRESENCE_FLUSH_MS) {
      this.written.set(did, now);
      try {
        await recordSightings(this.deps.db, [{ did, firstAt: now, lastAt: now }], now);
      } catch (error) {
        this.written.delete(did);
        this.deps.onError(error);
      }
      return;
    }
    const noted = this.pending.get(did);
    if (noted === undefined) this.pending.set(did, { did, firstAt: now, lastAt: now });
    else noted.lastAt = now;
  }

  pollStarted(did: string): void {
    this.polling.set(did, (this.polling.get(did) ?? 0) + 1);
  }

  pollEnded(did: string): void {
    const left = (this.polling.get(did) ?? 1) - 1;
    if (left <= 0) this.polling.delete(did);
    else this.polling.set(did, left);
  }

  /** Writes what this node saw since the last flush, and every agent with a poll in progress now. */
  async flush(): Promise<void> {
    const now = this.deps.clock.now();
    for (const did of this.polling.keys()) {
      const noted = this.pending.get(did);
      if (noted === undefined) this.pending.set(did, { did, firstAt: now, lastAt: now });
      else noted.lastAt = now;
    }
    if (this.pending.size === 0) return;
    const sightings = [...this.pending.values()];
    this.pending.clear();
    for (const seen of sightings) this.written.set(seen.did, seen.lastAt);
    await recordSightings(this.deps.db, sightings, now);
    for (const [did, at] of this.written) if (now - at > ONLINE_WINDOW_MS) this.written.delete(did);
  }

  /** The agent's availability now, read from the database (so evidence from every node counts). */
  async get(agent: ObservedAgent & { did: string }): Promise<Availability> {
    const now = this.deps.clock.now();
    const presence = await findPresence(this.deps.db, agent.did, (firstSeenAt) => ({
      day: uptimeWindowStart(now, UPTIME_WINDOWS.day, firstSeenAt),
      week: uptimeWindowStart(now, UPTIME_WINDOWS.week, firstSeenAt),
    }));
    const probe = agent.delivery_mode === 'webhook' ? await findProbe(this.deps.db, agent.did) : undefined;
    return deriveAvailability(agent, presence, now, this.deps.webhookWindowMs, probe);
  }

  /** The availability of an agent with no presence row (no read needed). */
  unobserved(agent: ObservedAgent): Availability {
    return deriveAvailability(agent, undefined, this.deps.clock.now(), this.deps.webhookWindowMs);
  }

  /**
   * Status and last sighting of each of `dids` (at most one page of results), for lists such as the
   * search page; agents never observed are left out (their status is unknown).
   */
  async statuses(
    dids: readonly string[],
  ): Promise<Map<string, Pick<Availability, 'status' | 'last_seen_at'>>> {
    const now = this.deps.clock.now();
    const found = new Map<string, Pick<Availability, 'status' | 'last_seen_at'>>();
    for (const row of await observedAgents(this.deps.db, dids)) {
      const seenAt = row.last_seen_at;
      const availability = deriveAvailability(
        {
          status: row.status,
          invocation_enabled: row.invocation_enabled === 1,
          delivery_mode: row.delivery_mode,
          webhook_probes: row.webhook_probes === 1,
        },
        seenAt === null
          ? undefined
          : {
              first_seen_at: seenAt,
              last_seen_at: seenAt,
              online_since: seenAt,
              checked_at: seenAt,
              stopped_at: row.stopped_at,
              seen_slots_24h: 0,
              seen_slots_7d: 0,
            },
        now,
        this.deps.webhookWindowMs,
        { last_probed_at: row.last_probed_at, last_failed_at: row.last_failed_at },
      );
      found.set(row.did, { status: availability.status, last_seen_at: availability.last_seen_at });
    }
    return found;
  }

  async everSeen(did: string): Promise<boolean> {
    return (await presenceEndsOf(this.deps.db, [did])).has(did);
  }

  /**
   * When the agent's worker was last seen, if it is offline now: no evidence within the online window,
   * or (`stoppedAt`) its worker said it stopped after its last evidence.
   */
  async offlineSince(did: string): Promise<{ lastSeenAt: number; stoppedAt?: number } | undefined> {
    const ends = (await presenceEndsOf(this.deps.db, [did])).get(did);
    if (ends === undefined) return undefined;
    if (stoppedSinceSeen(ends) && ends.stopped_at !== null)
      return { lastSeenAt: ends.last_seen_at, stoppedAt: ends.stopped_at };
    const now = this.deps.clock.now();
    return now - ends.last_seen_at > ONLINE_WINDOW_MS ? { lastSeenAt: ends.last_seen_at } : undefined;
  }

  /**
   * The agent's worker says it is stopping: the agent is offline from now until the next evidence (a
   * poll of another worker, or of this one started again). What this node noted for it is written
   * first, so the stop is the newer fact. The time recorded; null when the agent was never seen.
   */
  async stopped(did: string): Promise<number | null> {
    await this.flushOne(did);
    this.written.delete(did);
    const now = this.deps.clock.now();
    return (await recordStop(this.deps.db, did, now)) ? now : null;
  }

  /** Writes what this node noted for one agent, so a stop recorded after it is the newer fact. */
  private async flushOne(did: string): Promise<void> {
    const noted = this.pending.get(did);
    if (noted === undefined) return;
    this.pending.delete(did);
    await recordSightings(this.deps.db, [noted], this.deps.clock.now());
  }

  /** The DIDs of the agents that are online now (search's available=true and availability sort). */
  async onlineAgents(): Promise<string[]> {
    return agentsOnline(this.deps.db, this.boundsAt(this.deps.clock.now()));
  }

  /** Active agents by availability status now (for /metrics). */
  counts(): Promise<{ online: number; offline: number; unknown: number }> {
    return countByStatus(this.deps.db, this.boundsAt(this.deps.clock.now()));
  }

  private boundsAt(now: number): OnlineBounds {
    const { webhookWindowMs } = this.deps;
    return {
      queueFrom: now - ONLINE_WINDOW_MS,
      webhookFrom: webhookWindowMs === null ? null : now - webhookWindowMs,
      to: now + CLOCK_SKEW_TOLERANCE_MS,
    };
  }

  /** Flushes every interval and deletes slots past the longest uptime window; stop() flushes once more. */
  start(): BackgroundJobs {
    const job = every(
      PRESENCE_FLUSH_MS,
      async () => {
        await this.flush();
        await pruneSlots(this.deps.db, slotOf(this.deps.clock.now()) - UPTIME_WINDOWS.week);
      },
      this.deps.onError,
    );
    return {
      stop: async () => {
        await job.stop();
        // Evidence seen before shutdown is real; nothing is written for polls that end with it.
        this.polling.clear();
        await this.flush().catch(this.deps.onError);
      },
    };
  }
}
