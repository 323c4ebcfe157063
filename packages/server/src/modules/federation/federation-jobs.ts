import { every, type BackgroundJobs } from '../../kernel/periodic.js';
import type { FederatedIndex, FederatedIndexState } from './federated-index.js';

/** What refreshes every source: the importers and peer followers, one after another. */
export interface SourceRefresher {
  refreshAll(signal?: AbortSignal): Promise<void>;
}

/**
 * Every configured source once soon after start, then every `intervalMs` (never two rounds at once).
 * The kinds run side by side, so a slow peer never holds the imports, and a round ends at the next
 * interval (each source also has its own deadline: refreshEach). Nothing runs when no source is configured.
 */
export function startFederationJobs(
  refreshers: readonly SourceRefresher[],
  intervalMs: number,
  onError: (error: unknown) => void,
): BackgroundJobs {
  if (refreshers.length === 0) return { stop: async () => {} };
  const round = async (stop: AbortSignal): Promise<void> => {
    const deadline = roundDeadline(intervalMs);
    const signal = AbortSignal.any([stop, deadline.signal]);
    try {
      // Each kind whatever the others meet: its failure is reported, not the end of the round.
      await Promise.all(refreshers.map((refresher) => refresher.refreshAll(signal).catch(onError)));
    } finally {
      deadline.clear();
    }
  };
  const first = new AbortController();
  const starting = round(first.signal).catch(onError);
  const timer = every(intervalMs, round, onError);
  return {
    stop: async () => {
      first.abort();
      await starting;
      await timer.stop();
    },
  };
}

/** A signal that ends a round when the next one is due, its reason saying so. */
function roundDeadline(intervalMs: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(
    () =>
      controller.abort(
        new Error(
          `the round was cut when the next was due (FEDERATION_REFRESH_SECONDS, ${intervalMs / 1000} s); the next round resumes it`,
        ),
      ),
    intervalMs,
  );
  timer.unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/**
 * Starts loading the federated index now, in the background, when there is anything federated (a
 * configured source or a remote entry already stored). Otherwise it is loaded on the first federated
 * search. stop() stops a load in progress (the index's close) and waits for it.
 */
export function startFederatedIndexLoad(
  index: FederatedIndex,
  anythingFederated: boolean,
  onLoaded: (status: FederatedIndexState, ms: number) => void,
  onError: (error: unknown) => void,
): BackgroundJobs {
  if (!anythingFederated) return { stop: async () => index.close() };
  let stopped = false;
  const started = Date.now();
  const loading = index.load().then(
    () => onLoaded(index.status(), Date.now() - started),
    (error: unknown) => {
      if (!stopped) onError(error);
    },
  );
  return {
    stop: async () => {
      stopped = true;
      index.close();
      await loading;
    },
  };
}
