import type { Clock } from '../../kernel/clock.js';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import type { BackgroundJobs } from '../../kernel/periodic.js';
import { ProbeSchedule, type ProbeScheduleSettings } from '../../kernel/probe-schedule.js';
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

export type EntryProbeSettings = ProbeScheduleSettings;

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
 * Probes imported MCP servers and A2A card endpoints, and reads mirrored agents at home, on the operator's schedule
 * (FEDERATION_PROBE_INTERVAL_SECONDS; docs/federation.md, "Observed"), exactly as webhook agents are
 * probed: each tick claims at most `maxPerTick` due probes in the database (one node per entry and
 * interval), the shared ProbeRunner runs at most `maxConcurrent` at once with its timeout, and an entry
 * that does not answer backs off, with jitter, up to twelve intervals.
 */
export class EntryProber {
  private readonly schedule: ProbeSchedule<EntryProbeTarget, ProbeFinding>;
  private readonly outcomes: EntryProbeOutcome[] = [];

  constructor(private readonly deps: EntryProberDeps) {
    const { db } = deps;
    const limits = { budgetBytes: deps.budgetBytes, timeoutMs: deps.settings.timeoutMs };
    const probe: EntryProbe =
      deps.probe ??
      ((target, signal) =>
        target.protocol === 'mcp'
          ? probeMcp(deps.policy, target.url, limits, signal)
          : target.protocol === 'home'
            ? probeHome(deps.policy, target.url, target.did ?? '', limits, signal)
            : probeA2a(deps.policy, target.url, limits, signal));
    this.schedule = new ProbeSchedule({
      clock: deps.clock,
      settings: deps.settings,
      random: deps.random,
      tickMs: ENTRY_PROBE_TICK_MS,
      onError: deps.onError,
      store: {
        latestChange: () => latestRemoteChange(db),
        enrolAll: (now) => enrolEntryProbes(db, now),
        enrolChanged: (afterSeq, now) => enrolChangedEntries(db, afterSeq, now),
        claim: (now, limit, leaseUntil) => claimEntryProbes(db, now, limit, leaseUntil),
      },
      flush: () => this.flush(),
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
    return this.schedule.tick();
  }

  /** Resolves when no probe is waiting or in flight, after writing every outcome (tests, shutdown). */
  drain(): Promise<void> {
    return this.schedule.drain();
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
    return this.schedule.start();
  }

  /** Stops without a timer of its own (rounds run by tick() only). */
  stopper(): BackgroundJobs {
    return this.schedule.stopper();
  }

  inFlight(): number {
    return this.schedule.runner.inFlight();
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
      dueAt: startedAt + this.schedule.runner.nextDelay(failures),
    });
    this.deps.onProbe?.(finding);
  }
}
