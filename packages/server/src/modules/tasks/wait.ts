import type { Unsubscribe } from './events.js';

export type WakeReason = 'event' | 'timeout' | 'aborted';

/**
 * A subscription that remembers being woken. Open it before the database read that decides whether
 * to wait, so an event that lands between that read and `wait()` is not lost.
 */
export class Wakeup {
  private woken = false;
  private notify: (() => void) | undefined;
  private readonly unsubscribe: Unsubscribe;

  constructor(subscribe: (wake: () => void) => Unsubscribe) {
    this.unsubscribe = subscribe(() => {
      this.woken = true;
      this.notify?.();
    });
  }

  /** Resolves on an event (possibly one already seen), after `ms`, or when the signal aborts. */
  wait(ms: number, signal: AbortSignal): Promise<WakeReason> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve('event');
    }
    if (signal.aborted) return Promise.resolve('aborted');
    return new Promise((resolve) => {
      const finish = (reason: WakeReason) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.notify = undefined;
        this.woken = false;
        resolve(reason);
      };
      const onAbort = () => finish('aborted');
      const timer = setTimeout(() => finish('timeout'), Math.max(0, ms));
      signal.addEventListener('abort', onAbort, { once: true });
      this.notify = () => finish('event');
    });
  }

  /** Unsubscribes; answers whether an event arrived that no wait() took. */
  close(): boolean {
    this.unsubscribe();
    return this.woken;
  }
}
