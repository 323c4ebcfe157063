import type { Clock } from '../../kernel/clock.js';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import { every, type BackgroundJobs } from '../../kernel/periodic.js';
import { ProbeRunner, type ProbeRunnerSettings } from '../../kernel/probe-runner.js';
import type { Db } from '../../db/connect.js';
import { probeA2a } from './a2a-probe.js';
import {
  claimEntryProbes,
  enrolChangedEntries,
  enrolEntryProbes,
  latestRemoteChange,
  recordEntryProbe,
  type EntryChange,
  type EntryProbeOutcome,
  type EntryProbeTarget,
  type ProbeFinding,
} from './entry-probe-store.js';
import { probeMcp } from './mcp-probe.js';
import { probeHome } from './home-probe.js';

/** Every how often a node claims due probes and writes what it found (as webhook probes). */
export const ENTRY_PROBE_TICK_MS = 5_000;
/** Every how often every entry is compared with the schedules; between, only remote changes are read. */
const ENROL_EVERY_MS = 5 * 60_000;

export interface EntryProbeSettings extends ProbeRunnerSettings {
  maxPerTick: number;
}

/** One probe of one entry: the MCP or the A2A call. */
export type EntryProbe = (target: EntryProbeTarget, signal: AbortSignal) => Promise<ProbeFinding>;

export interface EntryProberDeps {
  db: Db;
  clock: Clock;
  settings: EntryProbeSettings;
  /** Probes run with the official clients through this policy (unless a test passes `probe`). */
  policy: WebhookNetworkPolicy;
  /** All of one probe's answers together (FEDERATION_MAX_RESPONSE_KB). */
  budgetBytes: number;
  /** Changes of status class and tools digest, after they are stored and logged. */
  onChange: (changes: readonly EntryChange[]) => void;
  /** Faults of the schedule's reads and writes (a probe's failure is an outcome, not a fault). */
  onError: (error: unknown) => void;
  onProbe?: (finding: ProbeFinding) => void;
  random?: () => number;
  probe?: EntryProbe;
}

/**
 * Probes imported MCP servers and A2A card endpoints on the operator's schedule
 * (FEDERATION_PROBE_INTERVAL_SECONDS; docs/federation.md, "Observed"), exactly as webhook agents are
 * probed: each tick claims at most `maxPerTick` due probes in the database (one node per entry and
 * interval), the shared ProbeRunner runs at most `maxConcurrent` at once with its timeout, and an entry
 * that does not answer backs off, with jitter, up to twelve intervals.
 */
export class EntryProber {
  private readonly runner: ProbeRunner<EntryProbeTarget, ProbeFinding>;
  private readonly outcomes: EntryProbeOutcome[] = [];
  private enrolledAt = -Infinity;
  private changesSeen = 0;
  private ticking: Promise<void> = Promise.resolve();

  constructor(private readonly deps: EntryProberDeps) {
    const limits = { budgetBytes: deps.budgetBytes, timeoutMs: deps.settings.timeoutMs };
    const probe: EntryProbe =
      deps.probe ??
      ((target, signal) =>
        target.protocol === 'mcp'
          ? probeMcp(deps.policy, target.url, limits, signal)
          : target.protocol === 'home'
            ? probeHome(deps.policy, target.url, target.did ?? '', limits, signal)
            : probeA2a(deps.policy, target.url, limits, signal));
    this.runner = new ProbeRunner({
      clock: deps.clock,
      settings: deps.settings,
      random: deps.random,
      run: probe,
      failed: (error) => ({
        status: 'unreachable',
        reason: error instanceof Error ? error.message : String(error),
      }),
      record: (target, finding, startedAt) => this.record(target, finding, startedAt),
    });
  }

  /** One round: write what was found, then (probing on) enrol and claim due probes and start them. */
  tick(): Promise<void> {
    const next = this.ticking.then(() => this.round());
    this.ticking = next.catch(() => undefined);
    return next;
  }

  private async round(): Promise<void> {
    await this.flush();
    const { intervalMs, maxPerTick } = this.deps.settings;
    if (intervalMs <= 0 || this.runner.stopped) return;
    const { db } = this.deps;
    const now = this.deps.clock.now();
    if (now - this.enrolledAt >= ENROL_EVERY_MS) {
      const seq = await latestRemoteChange(db);
      await enrolEntryProbes(db, now);
      this.enrolledAt = now;
      this.changesSeen = Math.max(this.changesSeen, seq);
    }
    for (;;) {
      const seen = await enrolChangedEntries(db, this.changesSeen, now);
      if (seen === this.changesSeen) break;
      this.changesSeen = seen;
    }
    const room = maxPerTick - this.runner.waiting;
    if (room <= 0) return;
    this.runner.enqueue(await claimEntryProbes(db, now, room, now + intervalMs));
  }

  /** Resolves when no probe is waiting or in flight, after writing every outcome (tests, shutdown). */
  async drain(): Promise<void> {
    await this.runner.drain();
    await this.flush();
  }

  /** Writes the outcomes found since the last write, each in its own transaction (with its log event). */
  async flush(): Promise<void> {
    for (const outcome of this.outcomes.splice(0)) {
      const changes = await recordEntryProbe(this.deps.db, outcome);
      if (changes.length > 0) this.deps.onChange(changes);
    }
  }

  /** Ticks every ENTRY_PROBE_TICK_MS; stop() ends probes in flight (not counted) and writes the rest. */
  start(): BackgroundJobs {
    const job = every(ENTRY_PROBE_TICK_MS, () => this.tick(), this.deps.onError);
    return {
      stop: async () => {
        await job.stop();
        await this.stopper().stop();
      },
    };
  }

  /** Stops without a timer of its own (rounds run by tick() only). */
  stopper(): BackgroundJobs {
    return {
      stop: async () => {
        this.runner.stop();
        await this.ticking;
        await this.drain().catch(this.deps.onError);
      },
    };
  }

  inFlight(): number {
    return this.runner.inFlight();
  }

  private record(target: EntryProbeTarget, finding: ProbeFinding, startedAt: number): void {
    // Answering, even 401, is the endpoint up: only silence and wrong protocols back off.
    const up = finding.status === 'answers' || finding.status === 'needs_auth';
    const failures = up ? 0 : target.failures + 1;
    this.outcomes.push({
      entryId: target.entryId,
      probedAt: this.deps.clock.now(),
      finding,
      failures,
      dueAt: startedAt + this.runner.nextDelay(failures),
    });
    this.deps.onProbe?.(finding);
  }
}
