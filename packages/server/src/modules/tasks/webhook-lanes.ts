import http from 'node:http';
import https from 'node:https';

export interface LaneAgents {
  'http:': http.Agent;
  'https:': https.Agent;
}

interface Waiter {
  start: () => void;
  abandon: (reason: unknown) => void;
}

/** One target agent's deliveries: its own keep-alive pools and a bounded number in flight. */
class Lane {
  active = 0;
  readonly waiting: Waiter[] = [];
  idleTimer: NodeJS.Timeout | undefined;
  readonly agents: LaneAgents;

  constructor(maxSockets: number) {
    this.agents = {
      'http:': new http.Agent({ keepAlive: true, maxSockets }),
      'https:': new https.Agent({ keepAlive: true, maxSockets }),
    };
  }

  destroy(): void {
    clearTimeout(this.idleTimer);
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }
}

export interface WebhookLanesOptions {
  /** Deliveries in flight per target agent; more wait in that agent's queue. */
  maxConcurrentPerAgent: number;
  /** How long an idle lane keeps its keep-alive sockets before it is dropped. */
  idleMs?: number;
}

/**
 * Isolates webhook deliveries per target agent: each agent gets its own connection pools (even when
 * several agents share one origin) and at most `maxConcurrentPerAgent` deliveries in flight. A delivery
 * waiting for a slot waits only on its own task's deadline (its signal), so 300 hanging deliveries to one
 * agent delay that agent's queue and nobody else's.
 */
export class WebhookLanes {
  private readonly lanes = new Map<string, Lane>();
  private readonly idleMs: number;

  constructor(private readonly options: WebhookLanesOptions) {
    this.idleMs = options.idleMs ?? 30_000;
  }

  /** Runs `work` when `targetDid` has a free slot; rejects with the signal's reason if it aborts first. */
  async run<T>(targetDid: string, signal: AbortSignal, work: (agents: LaneAgents) => Promise<T>): Promise<T> {
    const lane = this.laneFor(targetDid);
    await this.acquire(lane, signal);
    try {
      return await work(lane.agents);
    } finally {
      this.release(targetDid, lane);
    }
  }

  /** Lanes alive (for tests and diagnostics). */
  size(): number {
    return this.lanes.size;
  }

  /** Deliveries in flight and waiting, per target agent (for tests and diagnostics). */
  load(targetDid: string): { active: number; waiting: number } {
    const lane = this.lanes.get(targetDid);
    return { active: lane?.active ?? 0, waiting: lane?.waiting.length ?? 0 };
  }

  close(): void {
    for (const lane of this.lanes.values()) lane.destroy();
    this.lanes.clear();
  }

  private laneFor(targetDid: string): Lane {
    let lane = this.lanes.get(targetDid);
    if (lane === undefined) {
      lane = new Lane(this.options.maxConcurrentPerAgent);
      this.lanes.set(targetDid, lane);
    }
    clearTimeout(lane.idleTimer);
    lane.idleTimer = undefined;
    return lane;
  }

  private acquire(lane: Lane, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (lane.active < this.options.maxConcurrentPerAgent) {
      lane.active += 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => waiter.abandon(signal.reason);
      const waiter: Waiter = {
        start: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        abandon: (reason) => {
          const index = lane.waiting.indexOf(waiter);
          if (index >= 0) lane.waiting.splice(index, 1);
          reject(reason);
        },
      };
      lane.waiting.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private release(targetDid: string, lane: Lane): void {
    const next = lane.waiting.shift();
    if (next !== undefined) {
      next.start(); // the slot passes straight to the next delivery of the same agent
      return;
    }
    lane.active -= 1;
    if (lane.active > 0) return;
    lane.idleTimer = setTimeout(() => {
      if (lane.active === 0 && lane.waiting.length === 0 && this.lanes.get(targetDid) === lane) {
        this.lanes.delete(targetDid);
        lane.destroy();
      }
    }, this.idleMs);
    lane.idleTimer.unref();
  }
}
