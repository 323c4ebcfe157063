import { every, type BackgroundJobs } from '../../kernel/periodic.js';

/** What refreshes every source: the importers and peer followers, one after another. */
export interface SourceRefresher {
  refreshAll(signal?: AbortSignal): Promise<void>;
}

/**
 * Every configured source once soon after start, then every `intervalMs` (never two rounds at once).
 * Nothing runs when no source is configured.
 */
export function startFederationJobs(
  refreshers: readonly SourceRefresher[],
  intervalMs: number,
  onError: (error: unknown) => void,
): BackgroundJobs {
  if (refreshers.length === 0) return { stop: async () => {} };
  const round = async (signal: AbortSignal): Promise<void> => {
    for (const refresher of refreshers) {
      if (signal.aborted) return;
      await refresher.refreshAll(signal);
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
