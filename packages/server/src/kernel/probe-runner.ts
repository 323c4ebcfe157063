import { setMaxListeners } from 'node:events';
import type { Clock } from './clock.js';

/** The longest backoff, in probe intervals: a failing target is still probed at least this often. */
export const MAX_BACKOFF_INTERVALS = 12;
/** Each delay is multiplied by a factor drawn from [1 - JITTER, 1 + JITTER], so probes spread out. */
const JITTER = 0.1;

export interface ProbeRunnerSettings {
  /** 0: probing is off. */
  intervalMs: number;
  maxConcurrent: number;
  timeoutMs: number;
}

export interface ProbeRunnerDeps<Target, Result> {
  clock: Clock;
  settings: ProbeRunnerSettings;
  /** One probe: ends when `signal` aborts (its timeout, or shutdown). */
  run: (target: Target, signal: AbortSignal) => Promise<Result>;
  /** The result of a probe that threw. */
  failed: (error: unknown) => Result;
  /** What a finished probe found (never called for a probe cut off by shutdown: it proves nothing). */
  record: (target: Target, result: Result, startedAt: number) => void;
  /** In [0, 1); Math.random unless a test fixes it. */
  random?: () => number;
}

/**
 * The queue of claimed probes shared by the registry's probers (webhook agents, imported entries): at
 * most `maxConcurrent` in flight, each ended by its own timeout, all ended by stop(); and the backoff,
 * with jitter, that picks each target's next due time. Claiming (per-tick caps) and storing stay with
 * each prober, as its schedule lives in its own table.
 */
export class ProbeRunner<Target, Result> {
  private readonly queue: Target[] = [];
  private active = 0;
  private readonly stopping = new AbortController();
  private idle: (() => void)[] = [];

  constructor(private readonly deps: ProbeRunnerDeps<Target, Result>) {
    // One listener per probe in flight (up to maxConcurrent): not a leak.
    setMaxListeners(Infinity, this.stopping.signal);
  }

  get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  /** Probes claimed but not started yet: they count against the next claim. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Probes waiting or in flight. */
  inFlight(): number {
    return this.active + this.queue.length;
  }

  enqueue(targets: readonly Target[]): void {
    this.queue.push(...targets);
    this.pump();
  }

  /** Ends probes in flight (their claims lapse) and drops those waiting. */
  stop(): void {
    this.stopping.abort();
    this.queue.length = 0;
  }

  /** Resolves when no probe is waiting or in flight. */
  async drain(): Promise<void> {
    this.pump();
    if (this.active > 0 || this.queue.length > 0)
      await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  /** The delay before the next probe after `failures` failures in a row (0: a success), with jitter. */
  nextDelay(failures: number): number {
    const { intervalMs } = this.deps.settings;
    const intervals = failures === 0 ? 1 : Math.min(2 ** (failures - 1), MAX_BACKOFF_INTERVALS);
    const jitter = 1 - JITTER + 2 * JITTER * (this.deps.random ?? Math.random)();
    return Math.round(intervals * intervalMs * jitter);
  }

  private pump(): void {
    if (this.stopping.signal.aborted) this.queue.length = 0;
    while (this.active < this.deps.settings.maxConcurrent) {
      const target = this.queue.shift();
      if (target === undefined) break;
      this.active += 1;
      void this.probe(target).finally(() => {
        this.active -= 1;
        this.pump();
        if (this.active === 0 && this.queue.length === 0) {
          const waiting = this.idle;
          this.idle = [];
          for (const resolve of waiting) resolve();
        }
      });
    }
  }

  private async probe(target: Target): Promise<void> {
    const startedAt = this.deps.clock.now();
    // The probe's own timer, cleared as soon as it answers; shutdown aborts it too.
    const request = new AbortController();
    const abort = () => request.abort(new Error('probe stopped'));
    const timer = setTimeout(abort, this.deps.settings.timeoutMs);
    this.stopping.signal.addEventListener('abort', abort, { once: true });
    let result: Result;
    try {
      result = await this.deps.run(target, request.signal);
    } catch (error) {
      result = this.deps.failed(error);
    } finally {
      clearTimeout(timer);
      this.stopping.signal.removeEventListener('abort', abort);
    }
    // A probe cut off by shutdown proves nothing: its claim lapses and another node probes it.
    if (this.stopping.signal.aborted) return;
    this.deps.record(target, result, startedAt);
  }
}
