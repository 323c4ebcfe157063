import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import type { BackgroundJobs } from '../../kernel/periodic.js';
import { ProbeSchedule } from '../../kernel/probe-schedule.js';
import { ONLINE_WINDOW_MS, webhookOnlineWindow } from './availability-model.js';
import { recordSightings, type Sighting } from './presence-store.js';
import {
  claimProbes,
  enrolChanged,
  enrolProbes,
  latestChange,
  probeSoon,
  recordProbes,
  type ProbeOutcome,
  type ProbeTarget,
} from './probe-store.js';

export type { ProbeTarget } from './probe-store.js';

/** What one probe found: a 2xx answer, or why not (kept for diagnostics, never logged per probe). */
export type PingResult = { ok: true } | { ok: false; reason: string };

/** Sends one signed `registry.ping` through the invocations' delivery code (SSRF rules, per-agent lanes). */
export type Ping = (target: ProbeTarget, signal: AbortSignal) => Promise<PingResult>;

/** Every how often a node claims due probes and writes what it found. */
export const PROBE_TICK_MS = 5_000;
export { MAX_BACKOFF_INTERVALS } from '../../kernel/probe-runner.js';

export interface ProbeSettings {
  /** 0: probing is off. */
  intervalMs: number;
  maxPerTick: number;
  maxConcurrent: number;
  timeoutMs: number;
}

export interface WebhookProberDeps {
  db: Db;
  clock: Clock;
  settings: ProbeSettings;
  ping: Ping;
  /** Faults of the schedule's reads and writes (never a probe's failure: that is an outcome). */
  onError: (error: unknown) => void;
  /** Counts each probe's outcome (a counter, no per-agent label: a flapping agent adds no series). */
  onProbe?: (ok: boolean) => void;
  /** In [0, 1); Math.random unless a test fixes it. */
  random?: () => number;
}

/**
 * Probes webhook agents on the operator's schedule (docs/availability.md, "Probes of webhook agents"):
 * each tick claims at most `maxPerTick` due probes in the database (one node per agent and interval),
 * runs at most `maxConcurrent` at once, and writes the outcomes in batches. Failures back off
 * exponentially up to MAX_BACKOFF_INTERVALS intervals. Webhook deliveries report here too: a success is
 * a sighting, a failure makes the agent's probe due (the probe decides, not the caller's input).
 */
export class WebhookProber {
  private readonly schedule: ProbeSchedule<ProbeTarget, PingResult>;
  private readonly outcomes: ProbeOutcome[] = [];
  private readonly sightings = new Map<string, Sighting>();
  private readonly failedDeliveries = new Set<string>();

  constructor(private readonly deps: WebhookProberDeps) {
    const { db } = deps;
    this.schedule = new ProbeSchedule({
      clock: deps.clock,
      settings: deps.settings,
      random: deps.random,
      tickMs: PROBE_TICK_MS,
      onError: deps.onError,
      store: {
        latestChange: () => latestChange(db),
        enrolAll: (now) => enrolProbes(db, now),
        enrolChanged: (afterSeq, now) => enrolChanged(db, afterSeq, now),
        claim: (now, limit, leaseUntil) => claimProbes(db, now, limit, leaseUntil),
      },
      flush: () => this.flush(),
      run: (target, signal) => deps.ping(target, signal),
      failed: (error) => ({ ok: false, reason: error instanceof Error ? error.message : String(error) }),
      record: (target, result, startedAt) => this.record(target, result, startedAt),
    });
  }

  /** A webhook delivery to `did` succeeded (2xx): the agent answered. */
  deliverySucceeded(did: string): void {
    const now = this.deps.clock.now();
    this.noteSighting(did, now, now);
  }

  /** A webhook delivery to `did` failed: probe it soon rather than take the caller's word. */
  deliveryFailed(did: string): void {
    if (this.deps.settings.intervalMs > 0 && this.failedDeliveries.size < this.deps.settings.maxPerTick)
      this.failedDeliveries.add(did);
  }

  /** One round: write what was found, then (probing on) claim due probes and start them. */
  tick(): Promise<void> {
    return this.schedule.tick();
  }

  /** Resolves when no probe is waiting or in flight, after writing every outcome (tests, shutdown). */
  drain(): Promise<void> {
    return this.schedule.drain();
  }

  /** Writes probe outcomes, sightings and the probes made due by failed deliveries. */
  async flush(): Promise<void> {
    const now = this.deps.clock.now();
    const sightings = [...this.sightings.values()];
    this.sightings.clear();
    const outcomes = this.outcomes.splice(0);
    const failed = [...this.failedDeliveries];
    this.failedDeliveries.clear();
    const gap = webhookOnlineWindow(this.deps.settings.intervalMs) ?? ONLINE_WINDOW_MS;
    if (sightings.length > 0) await recordSightings(this.deps.db, sightings, now, gap);
    if (outcomes.length > 0) await recordProbes(this.deps.db, outcomes);
    if (failed.length > 0) await probeSoon(this.deps.db, failed, now, ONLINE_WINDOW_MS);
  }

  /** Ticks every PROBE_TICK_MS; stop() ends probes in flight (not counted) and writes the rest. */
  start(): BackgroundJobs {
    return this.schedule.start();
  }

  /** Stops without a timer of its own (rounds run by tick() only): ends probes in flight, writes the rest. */
  stopper(): BackgroundJobs {
    return this.schedule.stopper();
  }

  /** Probes waiting or in flight on this node. */
  inFlight(): number {
    return this.schedule.runner.inFlight();
  }

  /** The delay before the next probe after `failures` failures in a row (0: a success), with jitter. */
  nextDelay(failures: number): number {
    return this.schedule.runner.nextDelay(failures);
  }

  private noteSighting(did: string, from: number, to: number): void {
    const noted = this.sightings.get(did);
    if (noted === undefined) this.sightings.set(did, { did, firstAt: from, lastAt: to });
    else {
      noted.firstAt = Math.min(noted.firstAt, from);
      noted.lastAt = Math.max(noted.lastAt, to);
    }
  }

  private record(target: ProbeTarget, result: PingResult, startedAt: number): void {
    const probedAt = this.deps.clock.now();
    const failures = result.ok ? 0 : target.failures + 1;
    this.outcomes.push({
      did: target.did,
      probedAt,
      ok: result.ok,
      failures,
      dueAt: startedAt + this.nextDelay(failures),
    });
    if (result.ok) {
      // Two answers in a row within the online window: up all along, so uptime counts every slot
      // between them (one probe per interval need not fall in every slot).
      const window = webhookOnlineWindow(this.deps.settings.intervalMs);
      const since = target.answeredAt;
      const continuous = since !== null && window !== null && since <= probedAt && probedAt - since <= window;
      this.noteSighting(target.did, continuous ? since : probedAt, probedAt);
    }
    this.deps.onProbe?.(result.ok);
  }
}
