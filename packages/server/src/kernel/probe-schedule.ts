import type { Clock } from './clock.js';
import { every, type BackgroundJobs } from './periodic.js';
import { ProbeRunner, type ProbeRunnerDeps, type ProbeRunnerSettings } from './probe-runner.js';

/** Every how often a prober compares every target with the schedules; between, it reads only changes. */
const ENROL_EVERY_MS = 5 * 60_000;

export interface ProbeScheduleSettings extends ProbeRunnerSettings {
  /** Probes one node claims per tick: those still waiting from the last tick count against it. */
  maxPerTick: number;
}

/** Where a prober keeps its schedule: one row per target, due times claimed per node and interval. */
export interface ProbeScheduleStore<Target> {
  /** The highest change number of what is probed (the changes `enrolChanged` pages through). */
  latestChange(): Promise<number>;
  /** Gives every probed target without a schedule one, due `now`; drops schedules no longer probed. */
  enrolAll(now: number): Promise<void>;
  /** Schedules or unschedules the targets changed after `afterSeq`; the highest change number seen. */
  enrolChanged(afterSeq: number, now: number): Promise<number>;
  /** Claims up to `limit` due probes, moving their due time to `leaseUntil`. */
  claim(now: number, limit: number, leaseUntil: number): Promise<Target[]>;
}

export interface ProbeScheduleDeps<Target, Result> extends Omit<ProbeRunnerDeps<Target, Result>, 'settings'> {
  clock: Clock;
  settings: ProbeScheduleSettings;
  store: ProbeScheduleStore<Target>;
  /** Writes what the probes found since the last write (and anything else the prober batches). */
  flush: () => Promise<void>;
  /** Every how often `start()` ticks. */
  tickMs: number;
  /** Faults of the schedule's reads and writes (a probe's failure is an outcome, not a fault). */
  onError: (error: unknown) => void;
}

/**
 * The round every prober of the registry runs (webhook agents, remote entries): write what was found,
 * then, probing on, enrol new targets (all of them now and then, the changed ones each tick), claim due
 * probes up to the per-tick bound and hand them to the shared ProbeRunner. Ticks run one after another,
 * the timer's and any caller's.
 */
export class ProbeSchedule<Target, Result> {
  readonly runner: ProbeRunner<Target, Result>;
  private enrolledAt = -Infinity;
  private changesSeen = 0;
  private ticking: Promise<void> = Promise.resolve();

  constructor(private readonly deps: ProbeScheduleDeps<Target, Result>) {
    const { store: _store, flush: _flush, tickMs: _tickMs, onError: _onError, ...runner } = deps;
    this.runner = new ProbeRunner(runner);
  }

  /** One round: write what was found, then (probing on) enrol and claim due probes and start them. */
  tick(): Promise<void> {
    const next = this.ticking.then(() => this.round());
    this.ticking = next.catch(() => undefined);
    return next;
  }

  private async round(): Promise<void> {
    await this.deps.flush();
    const { intervalMs, maxPerTick } = this.deps.settings;
    if (intervalMs <= 0 || this.runner.stopped) return;
    const { store } = this.deps;
    const now = this.deps.clock.now();
    if (now - this.enrolledAt >= ENROL_EVERY_MS) {
      const seq = await store.latestChange();
      await store.enrolAll(now);
      this.enrolledAt = now;
      this.changesSeen = Math.max(this.changesSeen, seq);
    }
    // Pages of changes until caught up: new targets are probed at the next tick.
    for (;;) {
      const seen = await store.enrolChanged(this.changesSeen, now);
      if (seen === this.changesSeen) break;
      this.changesSeen = seen;
    }
    const room = maxPerTick - this.runner.waiting;
    if (room <= 0) return;
    this.runner.enqueue(await store.claim(now, room, now + intervalMs));
  }

  /** Resolves when no probe is waiting or in flight, after writing every outcome (tests, shutdown). */
  async drain(): Promise<void> {
    await this.runner.drain();
    await this.deps.flush();
  }

  /** Ticks every `tickMs`; stop() ends probes in flight (not counted) and writes the rest. */
  start(): BackgroundJobs {
    const job = every(this.deps.tickMs, () => this.tick(), this.deps.onError);
    return {
      stop: async () => {
        await job.stop();
        await this.stopper().stop();
      },
    };
  }

  /** Stops without a timer of its own (rounds run by tick() only): ends probes in flight, writes the rest. */
  stopper(): BackgroundJobs {
    return {
      stop: async () => {
        this.runner.stop();
        await this.ticking;
        await this.drain().catch(this.deps.onError);
      },
    };
  }
}
